/**
 * Finding and reading checkpoints: a resume reads the log backwards to its last complete
 * checkpoint, then reads that checkpoint's bases where it says they are; the conversation they
 * hold together is the run's. A torn checkpoint, one whose first bytes end a read chunk, a log
 * without any, a record that merely mentions one and a base that is not where it is said to be.
 */
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent } from '../../src/agent/createAgent.ts';
import type { Message } from '../../src/core/messages.ts';
import { ConfigurationError } from '../../src/core/errors.ts';
import { fromLastCheckpoint, readRunLogForResume } from '../../src/persistence/checkpointLog.ts';
import { CorruptFileError } from '../../src/persistence/errors.ts';
import { createFileStore, type RunStore } from '../../src/persistence/fileStore.ts';
import { LOG_VERSION, type CheckpointRecord } from '../../src/persistence/records.ts';
import { readRunEnd, readRunLog, RunLogWriter } from '../../src/persistence/runLog.ts';
import { RunWriter } from '../../src/persistence/runWriter.ts';
import { scriptedModel } from '../../src/testing/index.ts';
import { defineTool } from '../../src/tools/defineTool.ts';
import { removeTempDirs, runFiles, tempDir } from './support.ts';

afterAll(removeTempDirs);

const tick = defineTool({ name: 'tick', description: 'Tick', input: z.object({ n: z.number(), note: z.unknown().optional() }), execute: ({ n }) => `tick ${n}` });

/** A finished run of `turns` ticks, checkpointed every `every` iterations: its store and log file. */
async function finishedRun(turns: number, every: number, args: (turn: number) => Readonly<Record<string, unknown>> = (n) => ({ n })): Promise<{ store: RunStore; log: string; messages: readonly Message[] }> {
  const store = createFileStore({ dir: tempDir(), checkpoints: { every } });
  const model = scriptedModel((request) => {
    const turn = request.messages.filter((m) => m.role === 'assistant').length;
    return turn < turns ? { toolCalls: [{ id: `c${turn}`, name: 'tick', arguments: args(turn) }] } : { text: 'done' };
  });
  const agent = createAgent({ id: 'agent_cl', model, tools: [tick], persistence: { store }, limits: { maxIterations: turns + 1, maxTotalTokens: Number.MAX_SAFE_INTEGER } });
  const result = await agent.start('tick', { runId: 'run_cl' }).settled;
  expect(result.status).toBe('done');
  return { store, log: runFiles(store, 'run_cl').log, messages: result.messages };
}

const checkpointsOf = (log: string) => readRunLog(log).records.filter((record): record is CheckpointRecord => record.kind === 'checkpoint');

describe('reading a log for a resume', () => {
  it('reads from the last checkpoint on and its bases, whose conversation is the run’s at that point', async () => {
    const { log } = await finishedRun(47, 5);
    const checkpoints = checkpointsOf(log);
    // Written at iterations 5, 10, …, 45: the ninth's base is the eighth (the one before: none).
    expect(checkpoints.map((c) => [c.index, c.iteration, c.base === undefined])).toEqual(
      [1, 2, 3, 4, 5, 6, 7, 8, 9].map((index) => [index, index * 5, [1, 2, 4, 8].includes(index)]),
    );
    const read = readRunLogForResume(log);
    const whole = readRunLog(log).records;
    expect(read.restored?.chain.map((link) => link.index)).toEqual([8, 9]);
    expect(read.records[0]).toMatchObject({ kind: 'checkpoint', index: 9, from: 0 });
    expect(read.records.slice(1)).toEqual(whole.slice(whole.length - read.records.length + 1));
    expect(read.recordsRead).toBe(read.records.length + 1);
    // The conversation as the run had it when it entered iteration 45's reason phase: its task and 45 turns of a call and its result.
    expect(read.restored?.conversation).toHaveLength(1 + 2 * 45);
    expect(read.records[0]).toEqual(fromLastCheckpoint(whole)[0]);
    expect(read.validBytes).toBe(statSync(log).size);
  });

  it('skips a checkpoint torn at the end of the log, and drops it', async () => {
    const { log } = await finishedRun(12, 5);
    const lines = readFileSync(log, 'utf8').split(/(?<=\n)/);
    const last = lines.findLastIndex((line) => line.includes('"kind":"checkpoint"'));
    const torn = lines.slice(0, last + 1).join('') + (lines[last] as string).slice(0, 300);
    writeFileSync(log, torn);
    const read = readRunLogForResume(log);
    expect(read.records[0]).toMatchObject({ kind: 'checkpoint', index: 2 });
    expect(read.records.at(-1)).toMatchObject({ kind: 'checkpoint', index: 2 });
    expect(read.validBytes).toBe(Buffer.byteLength(torn) - 300);
    expect(read.warnings).toEqual([expect.stringContaining('dropped a torn last record')]);
  });

  it('finds a checkpoint whose first bytes end one chunk read and whose last bytes begin the next', async () => {
    const { log } = await finishedRun(6, 5);
    const upToCheckpoint = readFileSync(log, 'utf8').split(/(?<=\n)/);
    const at = upToCheckpoint.findLastIndex((line) => line.includes('"kind":"checkpoint"'));
    const prefix = upToCheckpoint.slice(0, at + 1).join('');
    const marker = `\n{"v":${LOG_VERSION},"kind":"checkpoint",`;
    const newline = Buffer.byteLength(upToCheckpoint.slice(0, at).join('')) - 1;
    for (const straddle of [1, 7, marker.length - 1]) {
      // One record after the checkpoint, as long as puts the newline before it `straddle` bytes short of 64 KiB from the end.
      const size = newline + 64 * 1024 + straddle;
      const entry = (agentId: string) => `${JSON.stringify({ v: LOG_VERSION, kind: 'event', entry: { sequence: 1000, timestamp: 1, agentId, runId: 'run_cl', iteration: 6, event: { type: 'phase.entered', phase: 'reason' } } })}\n`;
      const padding = entry('a'.repeat(size - Buffer.byteLength(prefix) - Buffer.byteLength(entry(''))));
      writeFileSync(log, prefix + padding);
      expect(statSync(log).size).toBe(size);
      expect(readRunLogForResume(log).restored?.chain.at(-1)?.at, `straddling by ${straddle}`).toBe(newline + 1);
    }
  });

  it('reads the whole log when it has no checkpoint, and ignores a record that only spells one', async () => {
    const { log } = await finishedRun(8, 100, (n) => ({ n, note: { v: LOG_VERSION, kind: 'checkpoint', index: 1 } }));
    expect(readFileSync(log, 'utf8')).toContain(`{"v":${LOG_VERSION},"kind":"checkpoint","index":1}`);
    const read = readRunLogForResume(log);
    expect(read.restored).toBeUndefined();
    expect(read.records).toEqual(readRunLog(log).records);
    expect(read.bytesRead).toBe(statSync(log).size);
  });

  it('refuses a checkpoint whose base is not where it says', async () => {
    const { store, log } = await finishedRun(16, 5);
    // Checkpoint 3's base is checkpoint 2: point it a byte off.
    const text = readFileSync(log, 'utf8').replace(/("index":3,.*?"base":\{"at":)(\d+)/, (_all, head: string, at: string) => `${head}${Number(at) + 1}`);
    writeFileSync(log, text.replace(/\n[^\n]*"kind":"end"[^\n]*\n$/, '\n'));
    expect(() => readRunLogForResume(log)).toThrow(CorruptFileError);
    expect(() => store.resumeRun('run_cl')).toThrow(/names bytes \d+–\d+ as its base/);
  });

  it('numbers a conversation that was not appended to as a new first checkpoint, holding it whole', () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'runs'));
    const file = join(dir, 'runs', 'run_w.jsonl');
    const log = new RunLogWriter(file, { create: true });
    const meta = { v: 1 as const, runId: 'run_w', agentId: 'agent_w', task: 't', status: 'running' as const, createdAt: 0, updatedAt: 0 };
    log.append({ v: LOG_VERSION, kind: 'run', runId: 'run_w', agentId: 'agent_w', task: 't', createdAt: 0, owner: { pid: process.pid } });
    const writer = new RunWriter(log, () => {
      throw new Error('no meta.json here');
    }, meta, { file: '', gen: 0, release: () => undefined }, false, false, { every: 1 });
    const say = (content: string): Message => ({ role: 'user', content });
    const taken: Message[][] = [];
    let conversation: Message[] = [say('0')];
    for (const [iteration, next] of [[1, 'a'], [2, 'b'], [3, 'c'], [4, 'd']] as const) {
      conversation = [...conversation, say(next)];
      if (iteration === 4) conversation = conversation.map((m) => ({ ...m })); // the same messages, not the same objects
      expect(writer.checkpointDue(iteration)).toBe(true);
      writer.checkpoint({ iteration, sequence: iteration, snapshot: {}, messages: conversation });
      taken.push(conversation);
    }
    writer.flushSync();
    const written = checkpointsOf(file);
    expect(written.map((c) => [c.index, c.from, c.messages.length])).toEqual([[1, 0, 2], [2, 0, 3], [3, 3, 1], [1, 0, 5]]);
    expect(readRunLogForResume(file).restored?.conversation).toEqual(taken.at(-1));
  });

  it('keeps the end record the last line when the run ends right after a checkpoint', async () => {
    // The checkpoint at iteration 10 is taken as the run enters its last reason phase, and written with the end.
    const { store, log } = await finishedRun(10, 5);
    const records = readRunLog(log).records;
    expect(records.filter((r) => r.kind === 'checkpoint').map((r) => r.kind === 'checkpoint' && r.iteration)).toEqual([5, 10]);
    expect(records.at(-1)).toMatchObject({ kind: 'end', status: 'done' });
    expect(readRunEnd(log)).toMatchObject({ status: 'done' });
    expect(await store.getRun('run_cl')).toMatchObject({ status: 'done' });
    expect(() => store.resumeRun('run_cl')).toThrow(expect.objectContaining({ code: 'run_finished' }));
  });

  it('takes a whole number of iterations ≥ 1 as checkpoints.every', () => {
    expect(() => createFileStore({ dir: tempDir(), checkpoints: { every: 0 } })).toThrow(ConfigurationError);
    expect(() => createFileStore({ dir: tempDir(), checkpoints: { every: 2.5 } })).toThrow(ConfigurationError);
    expect(() => createFileStore({ dir: tempDir(), checkpoints: false })).not.toThrow();
  });
});
