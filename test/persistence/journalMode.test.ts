/**
 * A journal-only store (`createFileStore({ mode: 'journal' })`): each run's log holds its
 * header, every journal entry in order and its end, written in the background; no snapshots,
 * conversation or tool results, so such a run is listed and replayed but never resumed.
 */
import { pbkdf2 } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { createAgent, type Agent } from '../../src/agent/createAgent.ts';
import { ConfigurationError } from '../../src/core/errors.ts';
import { createFileStore } from '../../src/persistence/fileStore.ts';
import { readRunLog, RunLogWriter } from '../../src/persistence/runLog.ts';
import { scriptedModel } from '../../src/testing/index.ts';
import { defineTool } from '../../src/tools/defineTool.ts';
import { echoScript, echoTool, humanAwaited, killHard, removeTempDirs, runFiles, seededRandom, spawnFixture, tempDir } from './support.ts';

const agents: Agent[] = [];
afterEach(() => {
  for (const agent of agents.splice(0)) agent.stop();
});
afterAll(removeTempDirs);

const kindsOf = (file: string) => readRunLog(file).records.map((record) => record.kind);

describe('a journal-only store', () => {
  it('writes every event of a completed run, in order, and nothing a resume would need', async () => {
    const store = createFileStore({ dir: tempDir(), mode: 'journal' });
    const script = [
      { toolCalls: [{ name: 'echo', arguments: { word: 'one' } }] },
      { toolCalls: [{ name: 'echo', arguments: { word: 'two' } }] },
      { text: 'finished' },
    ];
    const agent = createAgent({ id: 'agent_j', model: scriptedModel(script), tools: [echoTool()], persistence: { store } });
    agents.push(agent);
    const result = await agent.run('echo twice, key sk-canary-0123456789abcdef', { runId: 'journaled' });
    expect(result.text).toBe('finished');

    const { entries, warnings } = store.readJournal('journaled');
    expect(warnings).toEqual([]);
    expect(entries).toEqual(agent.journal.entries('journaled'));
    expect(entries.map((e) => e.sequence)).toEqual(entries.map((_, i) => i));
    expect(entries.at(-1)?.event.type).toBe('run.terminated');

    const file = runFiles(store, 'journaled').log;
    const kinds = kindsOf(file);
    expect(kinds[0]).toBe('run');
    expect(kinds.at(-1)).toBe('end');
    expect(new Set(kinds.slice(1, -1))).toEqual(new Set(['journal']));
    expect(readFileSync(file, 'utf8')).not.toContain('sk-canary');
    expect(await store.getRun('journaled')).toMatchObject({ status: 'done', reason: 'final_answer', agentId: 'agent_j' });
    expect((await store.listRuns()).map((m) => m.runId)).toEqual(['journaled']);
  });

  it('serialises the journal once per write: phases that follow without waiting share one journal line', async () => {
    const store = createFileStore({ dir: tempDir(), mode: 'journal' });
    const writer = store.createRun({ runId: 'burst', agentId: 'a', task: 't' });
    const phases = ['reason', 'gate', 'act', 'observe'] as const;
    const flushes = phases.map((phase, sequence) => {
      writer.event({ sequence, timestamp: 1, agentId: 'a', runId: 'burst', iteration: 0, event: { type: 'phase.entered', phase } });
      return writer.flushBehind();
    });
    await Promise.all(flushes);
    writer.event({ sequence: 4, timestamp: 2, agentId: 'a', runId: 'burst', iteration: 1, event: { type: 'phase.entered', phase: 'reason' } });
    await writer.flushBehind();
    writer.end('final_answer');
    await writer.close();
    const file = runFiles(store, 'burst').log;
    expect(kindsOf(file)).toEqual(['run', 'journal', 'journal', 'end']);
    expect(store.readJournal('burst').entries.map((e) => e.sequence)).toEqual([0, 1, 2, 3, 4]);
  });

  it('refuses to resume a journal-only run, from either kind of store, and says how to read it', async () => {
    const dir = tempDir();
    const journalStore = createFileStore({ dir, mode: 'journal' });
    const writer = journalStore.createRun({ runId: 'cut', agentId: 'a', task: 't' });
    writer.event({ sequence: 0, timestamp: 1, agentId: 'a', runId: 'cut', iteration: 0, event: { type: 'phase.entered', phase: 'reason' } });
    await writer.flushBehind();
    await writer.close(); // no end record: as a crash leaves it

    const resumable = createFileStore({ dir });
    expect(() => resumable.resumeRun('cut')).toThrow(expect.objectContaining({ code: 'run_not_resumable' }));
    expect(() => resumable.resumeRun('cut')).toThrow(/journal-only store.*readJournal\('cut'\)/);
    expect(() => journalStore.resumeRun('cut')).toThrow(expect.objectContaining({ code: 'run_not_resumable' }));
    const agent = createAgent({ model: scriptedModel(echoScript()), tools: [echoTool()], persistence: { store: resumable } });
    agents.push(agent);
    expect(() => agent.resume('cut')).toThrow(expect.objectContaining({ code: 'run_not_resumable' }));
    expect(resumable.readJournal('cut').entries.map((e) => e.event)).toEqual([{ type: 'phase.entered', phase: 'reason' }]);
    expect(await resumable.getRun('cut')).toMatchObject({ status: 'running' });
  });

  it('refuses a run id that already has a log, as the default store does', async () => {
    const store = createFileStore({ dir: tempDir(), mode: 'journal' });
    const writer = store.createRun({ runId: 'taken', agentId: 'a', task: 't' });
    expect(() => store.createRun({ runId: 'taken', agentId: 'b', task: 't' })).toThrow(expect.objectContaining({ code: 'run_locked' }));
    await writer.close();
  });

  it('rejects a mode it does not know', () => {
    expect(() => createFileStore({ dir: tempDir(), mode: 'fast' as never })).toThrow(ConfigurationError);
  });

  it('keeps the status of a run waiting for a human in meta.json', async () => {
    const store = createFileStore({ dir: tempDir(), mode: 'journal' });
    const deploy = defineTool({ name: 'deploy', description: 'Deploy', input: z.object({}), requiresConfirmation: true, execute: () => 'deployed' });
    const agent = createAgent({ model: scriptedModel([{ toolCalls: [{ name: 'deploy', arguments: {} }] }, { text: 'shipped' }]), tools: [deploy], persistence: { store } });
    agents.push(agent);
    const run = agent.start('deploy it', { runId: 'asks' });
    await humanAwaited(run);
    expect(await store.getRun('asks')).toMatchObject({ status: 'awaiting_human' });
    run.approve();
    expect((await run.settled).text).toBe('shipped');
    expect(await store.getRun('asks')).toMatchObject({ status: 'done' });
    expect(store.readJournal('asks').entries.map((e) => e.event.type)).toContain('human.awaiting');
  });

  it('leaves a log that parses, holding a gap-free prefix of the journal, when the process is killed mid-run (5 kills)', { timeout: 60_000 }, async () => {
    const dir = tempDir();
    const store = createFileStore({ dir });
    const random = seededRandom(0x10a7);
    for (let i = 0; i < 5; i++) {
      const runId = `killed_${i}`;
      const child = spawnFixture('journalAgent.ts', [dir, runId]);
      await child.waitFor((line) => line === `ready ${runId}`, 20_000);
      // The log is written behind the run: until its first write lands it may be missing or empty, as documented.
      await vi.waitFor(() => expect(readFileSync(runFiles(store, runId).log, 'utf8')).toContain('\n'), { timeout: 20_000, interval: 5 });
      await new Promise((resolve) => setTimeout(resolve, Math.floor(random() * 50)));
      await killHard(child);
      const log = readRunLog(runFiles(store, runId).log);
      expect(log.records[0]).toMatchObject({ kind: 'run', runId, journalOnly: true });
      const { entries } = store.readJournal(runId);
      expect(entries.length).toBeGreaterThan(0);
      expect(entries.map((e) => e.sequence)).toEqual(entries.map((_, n) => n));
      expect(() => store.resumeRun(runId)).toThrow(expect.objectContaining({ code: 'run_not_resumable' }));
    }
  });
});

describe('writing a log in the background', () => {
  it('lands every line in the order appended, however appends, background and synchronous flushes interleave', async () => {
    const dir = tempDir();
    let k = 0;
    const op = fc.constantFrom('append' as const, 'flush' as const, 'await' as const, 'sync' as const, 'yield' as const);
    await fc.assert(
      fc.asyncProperty(fc.boolean(), fc.array(op, { maxLength: 60 }), async (inBackground, ops) => {
        const file = join(dir, `log_${k++}.jsonl`);
        const log = new RunLogWriter(file, { create: inBackground ? 'background' : true });
        const expected: string[] = [];
        const flushes: Promise<void>[] = [];
        for (const op of ops) {
          if (op === 'append') {
            const line = JSON.stringify({ n: expected.length });
            expected.push(line);
            log.appendLine(line);
          } else if (op === 'flush') flushes.push(log.flushBehind());
          else if (op === 'await') await log.flushBehind();
          else if (op === 'yield') await new Promise((resolve) => setImmediate(resolve));
          else {
            // Refused while a write is on the pool or the file is being created; the lines stay pending.
            try {
              log.flushSync();
            } catch (error) {
              expect(String(error)).toMatch(/reorder the log/);
            }
          }
        }
        await Promise.all(flushes);
        await log.close();
        const text = existsSync(file) ? readFileSync(file, 'utf8') : '';
        expect(text).toBe(expected.map((line) => `${line}\n`).join(''));
      }),
      { numRuns: 60 },
    );
  });

  it('resolves a background flush only when its lines are in the file', async () => {
    const file = join(tempDir(), 'acked.jsonl');
    const log = new RunLogWriter(file, { create: true });
    log.appendLine('{"a":1}');
    const first = log.flushBehind();
    log.appendLine('{"a":2}');
    const second = log.flushBehind();
    expect(second).toBe(first); // one drain in flight takes both
    await first;
    expect(readFileSync(file, 'utf8')).toBe('{"a":1}\n{"a":2}\n');
    await log.close();
  });

  it('starts a background write only when the caller yields, so a burst of phases lands as one batch', async () => {
    const file = join(tempDir(), 'burst.jsonl');
    const log = new RunLogWriter(file, { create: true });
    const flushes: Promise<void>[] = [];
    for (let i = 0; i < 5; i++) {
      log.appendLine(`{"phase":${i}}`);
      flushes.push(log.flushBehind());
    }
    expect(new Set(flushes).size).toBe(1);
    // Still in the burst (a synchronous pause, time for a write the thread pool already had).
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 50);
    expect(readFileSync(file, 'utf8')).toBe('');
    await flushes[0];
    expect(readFileSync(file, 'utf8')).toBe([0, 1, 2, 3, 4].map((i) => `{"phase":${i}}\n`).join(''));
    await log.close();
  });

  it('creates its file only with the first background write, or at close when no write came first', async () => {
    const dir = tempDir();
    const late = new RunLogWriter(join(dir, 'late.jsonl'), { create: 'background' });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(existsSync(late.file)).toBe(false);
    late.appendLine('{"a":1}');
    await late.flushBehind();
    expect(readFileSync(late.file, 'utf8')).toBe('{"a":1}\n');
    await late.close();

    // Closed before the caller ever yielded: created and written by close, with the thread pool
    // (held by four slow hashes) never asked.
    const busy = Array.from({ length: 4 }, () => new Promise((resolve) => pbkdf2('p', 's', 200_000, 32, 'sha256', resolve)));
    let hashed = false;
    for (const hash of busy) void hash.then(() => (hashed = true));
    const quick = new RunLogWriter(join(dir, 'quick.jsonl'), { create: 'background' });
    quick.appendLine('{"a":1}');
    const flushed = quick.flushBehind();
    quick.appendLine('{"end":true}');
    await quick.close();
    expect(hashed).toBe(false);
    expect(readFileSync(quick.file, 'utf8')).toBe('{"a":1}\n{"end":true}\n');
    await expect(flushed).resolves.toBeUndefined();
    await Promise.all(busy);
    expect(readFileSync(quick.file, 'utf8')).toBe('{"a":1}\n{"end":true}\n');
  });

  it('closes a log whose background creation is still under way with every line written', async () => {
    const file = join(tempDir(), 'closing.jsonl');
    const log = new RunLogWriter(file, { create: 'background' });
    log.appendLine('{"a":1}');
    const flushed = log.flushBehind();
    await new Promise((resolve) => setImmediate(resolve)); // the write starts: it creates the file first
    log.appendLine('{"end":true}');
    await log.close();
    await flushed;
    expect(readFileSync(file, 'utf8')).toBe('{"a":1}\n{"end":true}\n');
  });

  it('closes a fresh-named log without waiting for the creation report, and closes the descriptor the report brings', async () => {
    const openFds = () => readdirSync('/proc/self/fd').length;
    const before = openFds();
    const file = join(tempDir(), 'fresh.jsonl');
    const log = new RunLogWriter(file, { create: 'background', fresh: true });
    log.appendLine('{"a":1}');
    const flushed = log.flushBehind();
    await new Promise((resolve) => setImmediate(resolve)); // the write starts: it asks the pool to create the file
    // The thread pool creates the file meanwhile; the event loop has not reported it.
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 50);
    log.appendLine('{"end":true}');
    let turned = false;
    setImmediate(() => (turned = true));
    await log.close();
    // Written before the event loop turned: the creation's report was not waited for.
    expect(turned).toBe(false);
    expect(readFileSync(file, 'utf8')).toBe('{"a":1}\n{"end":true}\n');
    await flushed;
    await new Promise((resolve) => setImmediate(resolve));
    expect(openFds()).toBe(before);
  });

  it('creates a fresh-named log itself when the thread pool has not got to it, and the pool yields', async () => {
    // Four slow hashes hold libuv's four threads: the log's creation waits in the queue.
    const busy = Array.from({ length: 4 }, () => new Promise((resolve) => pbkdf2('p', 's', 400_000, 32, 'sha256', resolve)));
    let hashed = false;
    for (const hash of busy) void hash.then(() => (hashed = true));
    const file = join(tempDir(), 'queued.jsonl');
    const log = new RunLogWriter(file, { create: 'background', fresh: true });
    log.appendLine('{"a":1}');
    const flushed = log.flushBehind();
    await new Promise((resolve) => setImmediate(resolve)); // the write starts: its creation waits in the queue
    await log.close();
    // Closed before the pool freed a thread: `close` did not wait for the queued creation.
    expect(hashed).toBe(false);
    expect(readFileSync(file, 'utf8')).toBe('{"a":1}\n');
    await Promise.all(busy);
    // The pool's exclusive create then finds the file: that EEXIST is not a failure.
    await expect(flushed).resolves.toBeUndefined();
    expect(readFileSync(file, 'utf8')).toBe('{"a":1}\n');
  });

  it('still waits for the creation of a log whose name is not fresh, and reports its EEXIST', async () => {
    const busy = Array.from({ length: 4 }, () => new Promise((resolve) => pbkdf2('p', 's', 100_000, 32, 'sha256', resolve)));
    const file = join(tempDir(), 'taken.jsonl');
    writeFileSync(file, 'kept\n');
    const log = new RunLogWriter(file, { create: 'background' });
    log.appendLine('{"a":1}');
    const flushed = log.flushBehind();
    await new Promise((resolve) => setImmediate(resolve)); // the write starts: its creation waits in the queue
    await expect(log.close()).rejects.toMatchObject({ code: 'EEXIST' });
    await expect(flushed).rejects.toMatchObject({ code: 'EEXIST' });
    await Promise.all(busy);
    expect(readFileSync(file, 'utf8')).toBe('kept\n');
  });

  it('refuses a synchronous flush while a background write is in flight, so the log never reorders', async () => {
    const file = join(tempDir(), 'order.jsonl');
    const log = new RunLogWriter(file, { create: true });
    log.appendLine('{"a":1}');
    const inFlight = log.flushBehind();
    // The write starts when the caller yields; its completion is handled only in a later phase of the loop.
    await new Promise((resolve) => setImmediate(resolve));
    log.appendLine('{"a":2}');
    expect(() => log.flushSync()).toThrow(/reorder the log/);
    await inFlight;
    await log.close();
    expect(readFileSync(file, 'utf8')).toBe('{"a":1}\n{"a":2}\n');
  });

  it('reports a file it could not create on the first write and on close, and leaves the existing file alone', async () => {
    const file = join(tempDir(), 'exists.jsonl');
    writeFileSync(file, 'kept\n');
    const log = new RunLogWriter(file, { create: 'background' });
    log.appendLine('{"a":1}');
    await expect(log.flushBehind()).rejects.toMatchObject({ code: 'EEXIST' });
    await expect(log.close()).rejects.toMatchObject({ code: 'EEXIST' });
    expect(readFileSync(file, 'utf8')).toBe('kept\n');
  });

  it('picks a new id when given none, in either mode, and still refuses a given id that is taken', async () => {
    for (const [mode, picked] of [
      ['journal', /^run_seg-[0-9a-z]+-[0-9a-f]{16}_0$/],
      ['resumable', /^run_seg-[0-9a-z]+-[0-9a-f]{16}_0$/],
    ] as const) {
      const store = createFileStore({ dir: tempDir(), mode });
      const first = store.createRun({ runId: 'run_taken', agentId: 'a', task: 'first' });
      first.end('final_answer');
      await first.close();
      const before = readFileSync(runFiles(store, 'run_taken').log, 'utf8');
      expect(() => store.createRun({ runId: 'run_taken', agentId: 'a', task: 'second' })).toThrow(/run_taken/);
      const third = store.createRun({ agentId: 'a', task: 'third' });
      expect(third.runId).toMatch(picked);
      third.end('final_answer');
      await third.close();
      expect(await store.getRun(third.runId)).toMatchObject({ task: 'third', status: 'done' });
      expect(readFileSync(runFiles(store, 'run_taken').log, 'utf8')).toBe(before);
    }
  });
});
