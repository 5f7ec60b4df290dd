/**
 * Journal segments: a journal-only store writes the runs whose ids it picks to one shared file
 * per store and process (`journal/<segmentId>.jsonl`) instead of a file per run, and reads each
 * run back on its own.
 */
import { pbkdf2 } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent, type Agent } from '../../src/agent/createAgent.ts';
import { ConfigurationError } from '../../src/core/errors.ts';
import { createFileStore, type RunStore } from '../../src/persistence/fileStore.ts';
import { JournalSegments, segmentIdOf } from '../../src/persistence/journalSegment.ts';
import { readRunLog } from '../../src/persistence/runLog.ts';
import { scriptedModel } from '../../src/testing/index.ts';
import { defineTool } from '../../src/tools/defineTool.ts';
import { humanAwaited, killHard, removeTempDirs, seededRandom, spawnFixture, tempDir } from './support.ts';

const agents: Agent[] = [];
afterEach(() => {
  for (const agent of agents.splice(0)) agent.stop();
});
afterAll(removeTempDirs);

const echo = defineTool({ name: 'echo', description: 'Echo a number', input: z.object({ i: z.number() }), execute: ({ i }) => String(i) });

/** A scripted model for any number of runs at once: `calls` echo calls per run, then `done`; each reply after `delayMs`. */
function countingModel(calls: number, delayMs: number) {
  return scriptedModel(
    (request) => {
      const last = request.messages.at(-1);
      const i = last?.role === 'tool' ? Number(last.content) + 1 : 0;
      return i < calls ? { toolCalls: [{ name: 'echo', arguments: { i } }], delayMs } : { text: 'done', delayMs };
    },
    { recordCalls: false },
  );
}

const segmentsIn = (dir: string): string[] => (existsSync(join(dir, 'journal')) ? readdirSync(join(dir, 'journal')).map((name) => join(dir, 'journal', name)) : []);
/** Descriptors this process has open on files under `dir`. */
const fdsUnder = (dir: string): number =>
  readdirSync('/proc/self/fd').filter((fd) => {
    try {
      return readlinkSync(`/proc/self/fd/${fd}`).startsWith(dir);
    } catch {
      return false; // closed while listed (the listing's own descriptor)
    }
  }).length;

describe('a journal-only store picking run ids', () => {
  it('writes every run, sequential or concurrent, to one segment and reads each back on its own', async () => {
    const dir = tempDir();
    const store = createFileStore({ dir, mode: 'journal' });
    const agent = createAgent({ id: 'agent_seg', model: countingModel(3, 2), tools: [echo], persistence: { store } });
    agents.push(agent);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await agent.run(`sequential ${i}, key sk-canary-0123456789abcdef`)).runId);
    const concurrent = await Promise.all([0, 1, 2].map((i) => agent.run(`concurrent ${i}`)));
    ids.push(...concurrent.map((result) => result.runId));

    const segmentIds = new Set(ids.map(segmentIdOf));
    expect(segmentIds.size).toBe(1);
    expect([...segmentIds][0]).toMatch(/^seg-/);
    expect(segmentsIn(dir)).toHaveLength(1);
    expect(existsSync(join(dir, 'runs')) ? readdirSync(join(dir, 'runs')) : []).toEqual([]);
    const text = readFileSync(segmentsIn(dir)[0] as string, 'utf8');
    expect(text).not.toContain('sk-canary');

    for (const [i, runId] of ids.entries()) {
      const { entries, warnings } = store.readJournal(runId);
      expect(warnings).toEqual([]);
      expect(entries).toEqual(agent.journal.entries(runId));
      expect(entries.map((e) => e.sequence)).toEqual(entries.map((_, n) => n));
      expect(entries.at(-1)?.event.type).toBe('run.terminated');
      expect(await store.getRun(runId)).toMatchObject({ runId, agentId: 'agent_seg', status: 'done', reason: 'final_answer', task: expect.stringMatching(i < 3 ? /^sequential/ : /^concurrent/) });
    }
    const listed = (await store.listRuns()).map((meta) => meta.runId);
    expect([...listed].sort()).toEqual([...ids].sort());

    // The concurrent runs' lines interleave in the file, and each run is still read whole.
    const order = readRunLog(segmentsIn(dir)[0] as string).records.map((record) => ('runId' in record ? record.runId : undefined));
    const concurrentLines = order.filter((runId) => runId !== undefined && ids.slice(3).includes(runId));
    const switches = concurrentLines.filter((runId, k) => k > 0 && runId !== concurrentLines[k - 1]).length;
    expect(switches).toBeGreaterThan(2);
  });

  it('refuses to resume a segment run from either kind of store, and a given id of the picked form', async () => {
    const dir = tempDir();
    const journalStore = createFileStore({ dir, mode: 'journal' });
    const writer = journalStore.createRun({ agentId: 'a', task: 't' });
    writer.event({ sequence: 0, timestamp: 1, agentId: 'a', runId: writer.runId, iteration: 0, event: { type: 'phase.entered', phase: 'reason' } });
    await writer.close(); // no end record: as a crash leaves it
    const { runId } = writer;

    const resumable = createFileStore({ dir });
    expect(() => resumable.resumeRun(runId)).toThrow(expect.objectContaining({ code: 'run_not_resumable' }));
    expect(() => resumable.resumeRun(runId)).toThrow(new RegExp(`journal-only store.*readJournal\\('${runId}'\\)`));
    expect(() => journalStore.resumeRun(runId)).toThrow(expect.objectContaining({ code: 'run_not_resumable' }));
    expect(resumable.readJournal(runId).entries.map((e) => e.event)).toEqual([{ type: 'phase.entered', phase: 'reason' }]);
    expect(await resumable.getRun(runId)).toMatchObject({ status: 'running', task: 't' });

    // An id of the same form in the same segment, but never created: not found, in every reader.
    const unknown = runId.replace(/_\d+$/, '_99');
    expect(await journalStore.getRun(unknown)).toBeNull();
    expect(() => journalStore.readJournal(unknown)).toThrow(/No run/);
    expect(() => resumable.resumeRun(unknown)).toThrow(/No run/);
    for (const store of [journalStore, resumable]) {
      expect(() => store.createRun({ runId: unknown, agentId: 'a', task: 't' })).toThrow(ConfigurationError);
    }
  });

  it("keeps a segment run's status in meta.json while it waits for a human", async () => {
    const store = createFileStore({ dir: tempDir(), mode: 'journal' });
    const deploy = defineTool({ name: 'deploy', description: 'Deploy', input: z.object({}), requiresConfirmation: true, execute: () => 'deployed' });
    const agent = createAgent({ model: scriptedModel([{ toolCalls: [{ name: 'deploy', arguments: {} }] }, { text: 'shipped' }]), tools: [deploy], persistence: { store } });
    agents.push(agent);
    const run = agent.start('deploy it');
    expect(segmentIdOf(run.runId)).toBeDefined();
    await humanAwaited(run);
    expect(await store.getRun(run.runId)).toMatchObject({ status: 'awaiting_human' });
    expect((await store.listRuns()).map((meta) => meta.status)).toEqual(['awaiting_human']);
    run.approve();
    expect((await run.settled).text).toBe('shipped');
    expect(await store.getRun(run.runId)).toMatchObject({ status: 'done' });
    expect(store.readJournal(run.runId).entries.map((e) => e.event.type)).toContain('human.awaiting');
  });

  it('starts a new segment once the current one is full', async () => {
    const dir = tempDir();
    const store = createFileStore({ dir, mode: 'journal', journalSegments: { maxChars: 1 } });
    const agent = createAgent({ model: countingModel(1, 0), tools: [echo], persistence: { store } });
    agents.push(agent);
    const ids = [(await agent.run('one')).runId, (await agent.run('two')).runId];
    expect(new Set(ids.map(segmentIdOf)).size).toBe(2);
    expect(segmentsIn(dir)).toHaveLength(2);
    for (const runId of ids) expect(store.readJournal(runId).entries.at(-1)?.event.type).toBe('run.terminated');
  });

  it('closes a segment left idle, and the next run starts a new one', { timeout: 30_000 }, async () => {
    const dir = tempDir();
    // Idle for 2 s: back-to-back runs stay well within it even on a loaded machine.
    const store = createFileStore({ dir, mode: 'journal', journalSegments: { idleMs: 2_000 } });
    const agent = createAgent({ model: countingModel(1, 0), tools: [echo], persistence: { store } });
    agents.push(agent);
    const first = (await agent.run('one')).runId;
    const second = (await agent.run('two')).runId;
    expect(segmentIdOf(second)).toBe(segmentIdOf(first)); // back to back: the segment is still open
    expect(fdsUnder(dir)).toBe(1);
    await expect.poll(() => fdsUnder(dir), { timeout: 20_000, interval: 200 }).toBe(0);
    const third = (await agent.run('three')).runId;
    expect(segmentIdOf(third)).not.toBe(segmentIdOf(first));
    expect((await store.listRuns()).map((meta) => meta.task).sort()).toEqual(['one', 'three', 'two']);
  });

  it('rejects segment limits that are not positive numbers', () => {
    for (const journalSegments of [{ maxChars: 0 }, { idleMs: -1 }, { maxChars: Number.NaN }, { idleMs: '5' as never }]) {
      expect(() => createFileStore({ dir: tempDir(), mode: 'journal', journalSegments })).toThrow(ConfigurationError);
    }
  });

  it('lists the runs of sound segments when one is corrupt, and names the corrupt file to whoever reads it', async () => {
    const dir = tempDir();
    const runIn = async (store: RunStore, task: string): Promise<string> => {
      const writer = store.createRun({ agentId: 'a', task });
      writer.event({ sequence: 0, timestamp: 1, agentId: 'a', runId: writer.runId, iteration: 0, event: { type: 'phase.entered', phase: 'reason' } });
      writer.end('final_answer');
      await writer.close();
      return writer.runId;
    };
    // Two stores, two segments.
    const sound = await runIn(createFileStore({ dir, mode: 'journal' }), 'sound');
    const store = createFileStore({ dir, mode: 'journal' });
    const broken = await runIn(store, 'broken');
    const brokenFile = segmentsIn(dir).find((file) => file.includes(segmentIdOf(broken) as string)) as string;
    const [header, journal, end] = readFileSync(brokenFile, 'utf8').split('\n') as [string, string, string];

    // A journal line cut short in the middle of the file: the index (headers and ends) still
    // lists the run; reading its journal names the corrupt file.
    writeFileSync(brokenFile, [header, `${journal.slice(0, 110)}}`, end, ''].join('\n'));
    expect((await store.listRuns()).map((meta) => meta.runId).sort()).toEqual([broken, sound].sort());
    expect(() => store.readJournal(broken)).toThrow(expect.objectContaining({ code: 'corrupt_file', file: brokenFile }));

    // A corrupt header: the segment's runs are listed as corrupt, naming it; the other segment's are sound.
    writeFileSync(brokenFile, [`${header.slice(0, -30)}}`, journal, end, ''].join('\n'));
    const listed = Object.fromEntries((await store.listRuns()).map((meta) => [meta.runId, meta]));
    expect(listed[sound]).toMatchObject({ status: 'done' });
    expect(listed[broken]).toMatchObject({ status: 'corrupt', file: brokenFile, error: { code: 'corrupt_file' } });
    await expect(store.getRun(broken)).rejects.toMatchObject({ code: 'corrupt_file', file: brokenFile });

    // A torn last line is dropped with a warning, as in a run's own log.
    writeFileSync(brokenFile, `${header}\n${journal}\n${end.slice(0, 30)}`);
    expect(store.readJournal(broken)).toMatchObject({ entries: [{ sequence: 0 }], warnings: [expect.stringMatching(/torn last record/)] });
    expect(await store.getRun(broken)).toMatchObject({ status: 'running' });
  });

  it('leaves a segment that parses, holding a gap-free prefix of the journal, when the process is killed mid-run (5 kills)', { timeout: 60_000 }, async () => {
    const dir = tempDir();
    const store = createFileStore({ dir });
    const random = seededRandom(0x5e9);
    for (let i = 0; i < 5; i++) {
      const child = spawnFixture('journalAgent.ts', [dir, '-']);
      const runId = (await child.waitFor((line) => line.startsWith('ready '), 20_000)).slice('ready '.length);
      await new Promise((resolve) => setTimeout(resolve, Math.floor(random() * 50)));
      await killHard(child);
      expect(segmentIdOf(runId)).toBeDefined();
      expect(await store.getRun(runId)).toMatchObject({ runId, status: 'running', task: 'Count forever.' });
      const { entries } = store.readJournal(runId);
      expect(entries.length).toBeGreaterThan(0);
      expect(entries.map((e) => e.sequence)).toEqual(entries.map((_, n) => n));
      expect(() => store.resumeRun(runId)).toThrow(expect.objectContaining({ code: 'run_not_resumable' }));
    }
    expect(segmentsIn(dir)).toHaveLength(5);
    expect(await store.listRuns()).toHaveLength(5);
  });
});

describe('the runs of one segment', () => {
  it("land each run's lines whole and in order, however appends, background writes, yields and closes interleave", async () => {
    const dir = tempDir();
    const op = fc.oneof(
      fc.record({ kind: fc.constant('append' as const), run: fc.nat(3) }),
      fc.record({ kind: fc.constant('behind' as const), run: fc.nat(3) }),
      fc.record({ kind: fc.constant('close' as const), run: fc.nat(3) }),
      fc.record({ kind: fc.constant('yield' as const) }),
      // Four slow hashes hold libuv's threads: a background write then waits in the queue.
      fc.record({ kind: fc.constant('busy' as const) }),
    );
    let k = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(op, { maxLength: 80 }), async (ops) => {
        const segments = new JournalSegments(join(dir, `p${k++}`));
        const runs = [0, 1, 2, 3].map(() => ({ ...segments.openRun(), lines: [] as string[], closed: false }));
        const file = segments.currentFile as string;
        const inFile = (runId: string): string[] =>
          existsSync(file)
            ? readFileSync(file, 'utf8')
                .split('\n')
                .filter((line) => line.includes(`"${runId}"`))
            : [];
        const behind: Promise<void>[] = [];
        const hashes: Promise<unknown>[] = [];
        for (const o of ops) {
          if (o.kind === 'yield') {
            await new Promise((resolve) => setImmediate(resolve));
            continue;
          }
          if (o.kind === 'busy') {
            for (let h = 0; h < 4; h++) hashes.push(new Promise((resolve) => pbkdf2('p', 's', 20_000, 32, 'sha256', resolve)));
            continue;
          }
          const run = runs[o.run] as (typeof runs)[number];
          if (run.closed) continue;
          if (o.kind === 'append') {
            const line = JSON.stringify({ run: run.runId, n: run.lines.length });
            run.lines.push(line);
            run.log.appendLine(line);
          } else if (o.kind === 'behind') behind.push(run.log.flushBehind());
          else {
            run.closed = true;
            await run.log.close();
            // Closed means written: every line of the run is in the file now, in order.
            expect(inFile(run.runId)).toEqual(run.lines);
          }
        }
        for (const run of runs) await run.log.close();
        await Promise.all([...behind, ...hashes]);
        for (const run of runs) expect(inFile(run.runId)).toEqual(run.lines);
      }),
      { numRuns: 60 },
    );
  });

  it('closes a run only once its lines already on the thread pool have landed, before its last ones', async () => {
    const segments = new JournalSegments(join(tempDir(), 'journal'));
    const { log } = segments.openRun();
    log.appendLine('{"n":1}');
    await log.flushBehind(); // the segment exists, with the first line
    log.appendLine('{"n":2}');
    const second = log.flushBehind();
    const busy = Array.from({ length: 4 }, () => new Promise((resolve) => pbkdf2('p', 's', 100_000, 32, 'sha256', resolve)));
    await new Promise((resolve) => setImmediate(resolve)); // the second line's write waits in the pool's queue
    log.appendLine('{"n":3}');
    await log.close();
    expect(readFileSync(log.file, 'utf8')).toBe('{"n":1}\n{"n":2}\n{"n":3}\n');
    await second;
    await Promise.all(busy);
  });

  it('keeps taking runs after a write fails: the failed segment is retired and the next run starts another', async () => {
    const folder = join(tempDir(), 'journal');
    const segments = new JournalSegments(folder);
    const first = segments.openRun();
    first.log.appendLine('{"n":1}');
    rmSync(folder, { recursive: true }); // the segment cannot be created now
    await expect(first.log.close()).rejects.toMatchObject({ code: 'ENOENT' });
    const second = segments.openRun();
    expect(segmentIdOf(second.runId)).not.toBe(segmentIdOf(first.runId));
    second.log.appendLine('{"n":2}');
    await second.log.close();
    expect(readFileSync(second.log.file, 'utf8')).toBe('{"n":2}\n');
  });
});
