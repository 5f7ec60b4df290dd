/**
 * A resumable store keeps the runs whose ids it picks in segment files (`journal/`), as a
 * journal-only store does, and still resumes them: a run in flight is refused while its
 * segment's writer lives, one whose writer died or that ended resumable is moved out to a log of
 * its own and goes on there.
 */
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent, type Agent } from '../../src/agent/createAgent.ts';
import type { Message } from '../../src/core/messages.ts';
import { createFileStore } from '../../src/persistence/fileStore.ts';
import { readRunLogForResume } from '../../src/persistence/checkpointLog.ts';
import { LOG_VERSION, type RunInput } from '../../src/persistence/records.ts';
import { scriptedModel } from '../../src/testing/index.ts';
import { defineTool } from '../../src/tools/defineTool.ts';
import { killHard, removeTempDirs, runFiles, spawnFixture, tempDir, type Child } from './support.ts';

const agents: Agent[] = [];
const children: Child[] = [];
afterEach(async () => {
  for (const agent of agents.splice(0)) agent.stop();
  for (const child of children.splice(0)) if (child.process.exitCode === null && child.process.signalCode === null) await killHard(child);
});
afterAll(removeTempDirs);

const echo = defineTool({ name: 'echo', description: 'Echo a number', input: z.object({ i: z.number() }), execute: ({ i }) => String(i) });

/** Two echo calls, then `done`, for any number of runs at once. */
const countingModel = () =>
  scriptedModel(
    (request) => {
      const last = request.messages.at(-1);
      const i = last?.role === 'tool' ? Number(last.content) + 1 : 0;
      return i < 2 ? { toolCalls: [{ name: 'echo', arguments: { i } }] } : { text: 'done' };
    },
    { recordCalls: false },
  );

const filesIn = (folder: string): string[] => (existsSync(folder) ? readdirSync(folder) : []);

const input: RunInput = { task: 't', limits: { maxIterations: 10, maxTotalTokens: 1000, timeoutMs: 60_000, maxRepairTurns: 1 }, model: 'm', toolNames: [] };

const message = (i: number): Message => ({ role: 'user', content: `message ${i}` });

describe('a resumable store picking run ids', () => {
  it('writes every run, sequential or concurrent, to one segment, creates no file per run, and lists and replays each on its own', async () => {
    const dir = tempDir();
    const store = createFileStore({ dir });
    const agent = createAgent({ id: 'agent_seg', model: countingModel(), tools: [echo], persistence: { store } });
    agents.push(agent);
    const ids: string[] = [];
    for (let i = 0; i < 2; i++) ids.push((await agent.run(`sequential ${i}`)).runId);
    ids.push(...(await Promise.all([0, 1, 2].map(async (i) => (await agent.run(`concurrent ${i}`)).runId))));

    expect(filesIn(join(dir, 'journal'))).toHaveLength(1);
    expect(filesIn(join(dir, 'runs')).filter((name) => name.endsWith('.jsonl'))).toEqual([]);
    const listed = await store.listRuns();
    for (const runId of ids) {
      expect(listed.filter((meta) => meta.runId === runId)).toEqual([expect.objectContaining({ status: 'done', reason: 'final_answer' })]);
      const { entries, warnings } = store.readJournal(runId);
      expect(warnings).toEqual([]);
      expect(entries.every((entry) => entry.runId === runId)).toBe(true);
      expect(entries.filter((entry) => entry.event.type === 'tool.finished')).toHaveLength(2);
      expect(entries.at(-1)?.event).toMatchObject({ type: 'run.terminated', reason: 'final_answer' });
      expect(store.ownerGone(runId)).toBe(false);
    }
  });

  it('refuses to resume a run in flight in this process, resumes one that ended resumable, and moves it to a log of its own', async () => {
    const dir = tempDir();
    const store = createFileStore({ dir });
    const writer = store.createRun({ agentId: 'a', task: 't', input });
    // Another run of the same segment, still open: the segment's writer is live throughout.
    const other = store.createRun({ agentId: 'a', task: 'other', input });
    expect(() => store.resumeRun(writer.runId)).toThrow(expect.objectContaining({ code: 'run_locked' }));
    expect(store.ownerGone(writer.runId)).toBe(false);
    writer.end('timeout', { resumable: true });
    await writer.close();

    const resumed = store.resumeRun(writer.runId);
    const files = runFiles(store, writer.runId);
    expect(existsSync(files.log)).toBe(true);
    expect(resumed.recovered.input).toEqual(input);
    resumed.writer.end('final_answer');
    await resumed.writer.close();
    expect(await store.getRun(writer.runId)).toMatchObject({ status: 'done', reason: 'final_answer' });
    expect((await store.listRuns()).filter((meta) => meta.runId === writer.runId)).toHaveLength(1);
    // The run still open was not touched.
    expect(() => store.resumeRun(other.runId)).toThrow(expect.objectContaining({ code: 'run_locked' }));
    other.end('final_answer');
    await other.close();
  });

  it("copies a checkpointed run's last checkpoint and the ones it builds on, from among another run's, naming where they are now", async () => {
    const dir = tempDir();
    const store = createFileStore({ dir, checkpoints: { every: 1 } });
    const writer = store.createRun({ agentId: 'a', task: 't', input });
    const other = store.createRun({ agentId: 'a', task: 'other', input });
    const conversation: Message[] = [];
    for (let iteration = 1; iteration <= 6; iteration++) {
      conversation.push(message(iteration));
      expect(writer.checkpointDue(iteration)).toBe(true);
      writer.checkpoint({ iteration, sequence: 0, snapshot: { iteration }, messages: [...conversation] });
      other.checkpoint({ iteration, sequence: 0, snapshot: { other: iteration }, messages: [message(100 + iteration)] });
      writer.flushSync();
      other.flushSync();
    }
    writer.end('timeout', { resumable: true });
    await writer.close();

    const resumed = store.resumeRun(writer.runId);
    const log = readFileSync(runFiles(store, writer.runId).log, 'utf8');
    // Checkpoint 6 builds on 4, which holds the conversation from its start; 1, 2, 3 and 5 stay behind.
    expect([...log.matchAll(/"kind":"checkpoint","runId":"[^"]+","index":(\d+)/g)].map((match) => Number(match[1]))).toEqual([4, 6]);
    const read = readRunLogForResume(runFiles(store, writer.runId).log);
    expect(read.restored?.iteration).toBe(6);
    expect(read.restored?.conversation).toEqual(conversation);
    expect(read.records[0]).toMatchObject({ v: LOG_VERSION, kind: 'checkpoint', snapshot: { iteration: 6 }, from: 0 });
    // The resumed run's next checkpoint builds on the copy.
    conversation.push(message(7));
    resumed.writer.checkpoint({ iteration: 7, sequence: 0, snapshot: { iteration: 7 }, messages: [...conversation] });
    resumed.writer.end('final_answer');
    await resumed.writer.close();
    expect(readRunLogForResume(runFiles(store, writer.runId).log).restored?.conversation).toEqual(conversation);
    other.end('final_answer');
    await other.close();
  });
  it("resumes a run whose checkpoint waited to be written while another run of its segment flushed its journal", async () => {
    const dir = tempDir();
    const store = createFileStore({ dir, checkpoints: { every: 1 } });
    const writer = store.createRun({ agentId: 'a', task: 't', input });
    const other = store.createRun({ agentId: 'a', task: 'other', input });
    const conversation: Message[] = [];
    // Checkpoint 3 builds on 2.
    for (let iteration = 1; iteration <= 3; iteration++) {
      conversation.push(message(iteration));
      // Taken, not yet written: the run writes it with its next call or its end.
      writer.checkpoint({ iteration, sequence: 0, snapshot: { iteration }, messages: [...conversation] });
      // The other run's journal alone is written, as a run's is before its tool call.
      other.event({ runId: other.runId, agentId: 'a', sequence: iteration, iteration, timestamp: 1_000 + iteration, event: { type: 'phase.entered', phase: 'act' } });
      other.flushSync();
    }
    writer.end('timeout', { resumable: true });
    await writer.close();

    const resumed = store.resumeRun(writer.runId);
    expect(resumed.recovered.checkpoint?.messages).toEqual(conversation);
    resumed.writer.end('final_answer');
    await resumed.writer.close();
    expect(store.readJournal(other.runId).entries.map((entry) => entry.sequence)).toEqual([1, 2, 3]);
    other.end('final_answer');
    await other.close();
  });

  it("moves a long run from its last checkpoint on, and still reads its whole journal, the part before the checkpoint from the segment", async () => {
    const dir = tempDir();
    const store = createFileStore({ dir, checkpoints: { every: 1 } });
    const writer = store.createRun({ agentId: 'a', task: 't', input });
    const other = store.createRun({ agentId: 'a', task: 'other', input });
    const conversation: Message[] = [];
    let sequence = 0;
    const note = (run: typeof writer, iteration: number) =>
      run.event({ runId: run.runId, agentId: 'a', sequence: run === writer ? sequence++ : iteration, iteration, timestamp: 1_000 + iteration, event: { type: 'phase.entered', phase: 'reason' } });
    for (let iteration = 1; iteration <= 40; iteration++) {
      conversation.push(message(iteration));
      note(writer, iteration);
      note(writer, iteration);
      note(other, iteration);
      if (iteration % 3 === 0) writer.checkpoint({ iteration, sequence, snapshot: { iteration }, messages: [...conversation] });
      writer.flushSync();
      other.flushSync();
    }
    writer.end('timeout', { resumable: true });
    await writer.close();
    const before = store.readJournal(writer.runId).entries;
    expect(before.map((entry) => entry.sequence)).toEqual([...Array(80).keys()]);

    const resumed = store.resumeRun(writer.runId);
    const log = readFileSync(runFiles(store, writer.runId).log, 'utf8');
    // Checkpoint 13 (iteration 39) builds on 12 and 8; the journal before it is not copied.
    expect([...log.matchAll(/"kind":"checkpoint","runId":"[^"]+","index":(\d+)/g)].map((match) => Number(match[1]))).toEqual([8, 12, 13]);
    expect(log.match(/"kind":"journal"/g)).toHaveLength(1);
    expect(readRunLogForResume(runFiles(store, writer.runId).log).restored?.conversation).toEqual(conversation.slice(0, 39));
    resumed.writer.event({ runId: writer.runId, agentId: 'a', sequence: 80, iteration: 41, timestamp: 2_000, event: { type: 'phase.entered', phase: 'observe' } });
    resumed.writer.end('final_answer');
    await resumed.writer.close();

    const after = store.readJournal(writer.runId);
    expect(after.warnings).toEqual([]);
    expect(after.entries.slice(0, 80)).toEqual(before);
    expect(after.entries.map((entry) => entry.sequence)).toEqual([...Array(81).keys()]);
    other.end('final_answer');
    await other.close();
    // Without its segment, what is left is read, saying what is missing.
    rmSync(join(dir, 'journal'), { recursive: true });
    const left = store.readJournal(writer.runId);
    expect(left.entries.map((entry) => entry.sequence)).toEqual([78, 79, 80]);
    expect(left.warnings).toEqual([expect.stringMatching(/journal before its last checkpoint was in .*, which is gone/)]);
  });
});

describe('a resumable segment run whose process was killed (real SIGKILL)', () => {
  it('is refused while its writer lives, then is listed with its owner gone and resumes in a log of its own without calling its tool twice', { timeout: 60_000 }, async () => {
    const dir = tempDir();
    const child = spawnFixture('agentProcess.ts', [dir, '-', 'block']);
    children.push(child);
    const runId = (await child.waitFor((line) => line.startsWith('id '), 20_000)).slice(3);
    await child.waitFor((line) => line === 'ready', 20_000);
    const store = createFileStore({ dir });
    expect(() => store.resumeRun(runId)).toThrow(expect.objectContaining({ code: 'run_locked' }));
    expect(store.ownerGone(runId)).toBe(false);
    await killHard(child);
    expect(store.ownerGone(runId)).toBe(true);

    const waitRuns: string[] = [];
    const wait = defineTool({ name: 'wait', description: 'Wait', input: z.object({}), execute: () => (waitRuns.push('ran'), 'released') });
    const agent = createAgent({ id: 'agent_child', model: scriptedModel([{ text: 'finished' }]), tools: [wait], persistence: { store } });
    agents.push(agent);
    const result = await agent.resume(runId).settled;
    expect(result).toMatchObject({ status: 'done', text: 'finished' });
    // Its write-ahead record was in the segment: the interrupted (idempotent) call is made again, once.
    expect(waitRuns).toEqual(['ran']);
    expect(existsSync(runFiles(store, runId).log)).toBe(true);
    expect(await store.getRun(runId)).toMatchObject({ status: 'done' });
    expect((await store.listRuns()).filter((meta) => meta.runId === runId)).toEqual([expect.objectContaining({ status: 'done' })]);
    expect(store.ownerGone(runId)).toBe(false);
  });
});
