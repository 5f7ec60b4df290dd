/**
 * What a run puts on disk and when: a new run is one log file whose first record (the `run`
 * header) names its writer and whose last (the `end` record) says how it ended; its meta.json
 * appears only when the run waits for a human; a lock file only while a resume writes.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent, type Agent } from '../../src/agent/createAgent.ts';
import { CorruptFileError } from '../../src/persistence/errors.ts';
import { createFileStore } from '../../src/persistence/fileStore.ts';
import { LOG_VERSION } from '../../src/persistence/records.ts';
import { readRunEnd, readRunHeader } from '../../src/persistence/runLog.ts';
import { scriptedModel } from '../../src/testing/index.ts';
import { defineTool } from '../../src/tools/defineTool.ts';
import { humanAwaited, removeTempDirs, runFiles, tempDir } from './support.ts';

const agents: Agent[] = [];
afterEach(() => {
  for (const agent of agents.splice(0)) agent.stop();
});
afterAll(removeTempDirs);

/** A tool that blocks until released, so a run can be looked at while it is live. */
function gate() {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let entered!: () => void;
  const running = new Promise<void>((resolve) => (entered = resolve));
  const tool = defineTool({
    name: 'wait',
    description: 'Wait until released',
    input: z.object({}),
    execute: async () => {
      entered();
      await released;
      return 'released';
    },
  });
  return { tool, release, running };
}

describe('the files of a new run', () => {
  it('are one log headed by its writer and ended by an end record: no folder, no meta.json, never a lock', async () => {
    const store = createFileStore({ dir: tempDir() });
    const wait = gate();
    const script = [{ toolCalls: [{ name: 'wait', arguments: {} }] }, { text: 'finished' }];
    const agent = createAgent({ id: 'agent_files', model: scriptedModel(script), tools: [wait.tool], persistence: { store } });
    agents.push(agent);
    const run = agent.start('look at my files sk-canary-0123456789abcdef', { runId: 'fresh' });
    await wait.running;

    const files = runFiles(store, 'fresh');
    expect(readdirSync(files.runs)).toEqual(['fresh.jsonl']);
    const header = readRunHeader(files.log);
    expect(header).toMatchObject({ v: LOG_VERSION, kind: 'run', runId: 'fresh', agentId: 'agent_files', owner: { pid: process.pid } });
    expect(header?.task).toBe('look at my files [REDACTED]');
    // The index reads a live run from its header.
    expect(await store.getRun('fresh')).toMatchObject({ runId: 'fresh', agentId: 'agent_files', status: 'running', task: header?.task });
    expect((await store.listRuns()).map((m) => [m.runId, m.status])).toEqual([['fresh', 'running']]);
    // A live run of this process is not resumed a second time, nor created again.
    expect(() => store.resumeRun('fresh')).toThrow(expect.objectContaining({ code: 'run_locked' }));
    expect(() => store.createRun({ runId: 'fresh', agentId: 'x', task: 'again' })).toThrow(expect.objectContaining({ code: 'run_locked' }));
    expect(existsSync(files.lock)).toBe(false);

    wait.release();
    expect((await run.settled).status).toBe('done');
    expect(readdirSync(files.runs)).toEqual(['fresh.jsonl']);
    const last = JSON.parse(readFileSync(files.log, 'utf8').trimEnd().split('\n').at(-1) ?? '') as unknown;
    expect(last).toMatchObject({ v: LOG_VERSION, kind: 'end', status: 'done', reason: 'final_answer' });
    expect(await store.getRun('fresh')).toMatchObject({ status: 'done', reason: 'final_answer', createdAt: header?.createdAt });
    expect((await store.listRuns()).map((m) => [m.runId, m.status])).toEqual([['fresh', 'done']]);
    expect(() => store.resumeRun('fresh')).toThrow(expect.objectContaining({ code: 'run_finished' }));
    expect(existsSync(files.lock)).toBe(false);
  });

  it('writes meta.json when the run starts waiting for a human, and the index follows its status', async () => {
    const store = createFileStore({ dir: tempDir() });
    const confirm = defineTool({ name: 'deploy', description: 'Deploy', input: z.object({}), requiresConfirmation: true, execute: () => 'deployed' });
    const script = [{ toolCalls: [{ name: 'deploy', arguments: {} }] }, { text: 'shipped' }];
    const agent = createAgent({ model: scriptedModel(script), tools: [confirm], persistence: { store } });
    agents.push(agent);
    const run = agent.start('deploy it', { runId: 'asks' });
    await humanAwaited(run);
    const files = runFiles(store, 'asks');
    expect(JSON.parse(readFileSync(files.meta, 'utf8'))).toMatchObject({ status: 'awaiting_human' });
    expect(await store.getRun('asks')).toMatchObject({ status: 'awaiting_human' });
    // Listed once: its meta.json and log sit side by side, one run.
    expect((await store.listRuns()).map((m) => [m.runId, m.status])).toEqual([['asks', 'awaiting_human']]);
    run.approve();
    expect((await run.settled).text).toBe('shipped');
    expect(await store.getRun('asks')).toMatchObject({ status: 'done' });
    // Once there is a meta.json, it is kept current: it never says a finished run is waiting.
    expect(JSON.parse(readFileSync(files.meta, 'utf8'))).toMatchObject({ status: 'done', reason: 'final_answer' });
  });

  it('reports a log cut before its header was written as a run that never started', async () => {
    const store = createFileStore({ dir: tempDir() });
    const writer = store.createRun({ runId: 'torn_head', agentId: 'a', task: 't' });
    await writer.close();
    const files = runFiles(store, 'torn_head');
    writeFileSync(files.log, readFileSync(files.log, 'utf8').slice(0, 20)); // the crash tore the header
    expect(await store.getRun('torn_head')).toBeNull();
    expect(await store.listRuns()).toEqual([]);
    writeFileSync(files.log, '');
    expect(() => store.resumeRun('torn_head')).toThrow(CorruptFileError);
    expect(existsSync(files.lock)).toBe(false);
  });

  it('refuses a header that is not a valid record, naming the log', async () => {
    const store = createFileStore({ dir: tempDir() });
    const writer = store.createRun({ runId: 'bad_head', agentId: 'a', task: 't' });
    await writer.close();
    const files = runFiles(store, 'bad_head');
    writeFileSync(files.log, readFileSync(files.log, 'utf8').replace('"pid":', '"pid":"x","was":'));
    await expect(store.getRun('bad_head')).rejects.toMatchObject({ code: 'corrupt_file', file: files.log, line: 1 });
    // One bad run does not hide the others from the index, nor is it hidden: it is listed as corrupt.
    store.createRun({ runId: 'good', agentId: 'a', task: 't' });
    const listed = Object.fromEntries((await store.listRuns()).map((m) => [m.runId, m]));
    expect(listed.good).toMatchObject({ status: 'running', task: 't' });
    expect(listed.bad_head).toMatchObject({ status: 'corrupt', file: files.log, error: { code: 'corrupt_file' } });
  });
});

describe('the end record', () => {
  async function finishedRun(runId: string) {
    const store = createFileStore({ dir: tempDir() });
    const agent = createAgent({ model: scriptedModel([{ text: 'done' }]), persistence: { store } });
    agents.push(agent);
    await agent.start('answer', { runId }).settled;
    const files = runFiles(store, runId);
    return { store, files, text: readFileSync(files.log, 'utf8') };
  }

  it('torn by a crash is no end: the run reads as running and resumes without it', async () => {
    const { store, files, text } = await finishedRun('torn_end');
    writeFileSync(files.log, text.slice(0, -12)); // the final flush was cut inside the end record
    expect(readRunEnd(files.log)).toBeNull();
    expect(await store.getRun('torn_end')).toMatchObject({ status: 'running' });
    const { writer, recovered } = store.resumeRun('torn_end');
    await writer.close();
    expect(recovered.warnings.join()).toMatch(/torn last record/);
  });

  it('that is not a valid record is a CorruptFileError naming the log', async () => {
    const { store, files, text } = await finishedRun('bad_end');
    writeFileSync(files.log, text.replace(/("kind":"end","runId":"bad_end",)"status":"done"/, '$1"status":"maybe"'));
    await expect(store.getRun('bad_end')).rejects.toMatchObject({ code: 'corrupt_file', file: files.log });
    writeFileSync(files.log, text.replace(/"v":\d+,"kind":"end"/, `"v":${LOG_VERSION + 1},"kind":"end"`));
    await expect(store.getRun('bad_end')).rejects.toMatchObject({ code: 'unsupported_version' });
  });

  it('is looked for in the last line only: a long last line of another kind is not read whole', async () => {
    const { files, text } = await finishedRun('long_tail');
    const withoutEnd = text.slice(0, text.trimEnd().lastIndexOf('\n') + 1);
    const long = JSON.stringify({ v: LOG_VERSION, kind: 'call.started', key: `k${'x'.repeat(10_000)}"kind":"end"`, tool: 't', args: 'h' });
    writeFileSync(files.log, `${withoutEnd}${long}\n`);
    expect(readRunEnd(files.log)).toBeNull();
  });
});
