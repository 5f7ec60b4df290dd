/**
 * Restoring from a checkpoint (property, in process): a run cut short at any line of its log
 * and restored from its last checkpoint and the records after it goes on exactly as the same run
 * replayed from its whole log (the same log without its checkpoints): the same conversation,
 * iterations, usage and result, and the same journal from the cut on. Run shapes are random:
 * parallel calls, a call that needs a human's approval, failing calls, and calls repeated until
 * the doom-loop detector redirects or stops the run (its state crosses the checkpoint).
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent } from '../../src/agent/createAgent.ts';
import type { AgentRun } from '../../src/agent/types.ts';
import type { JournalEntry } from '../../src/core/loopEvent.ts';
import type { LoopResult } from '../../src/core/run.ts';
import { createFileStore, type RunStore } from '../../src/persistence/fileStore.ts';
import { fromLastCheckpoint } from '../../src/persistence/checkpointLog.ts';
import { segmentFile, segmentIdOf } from '../../src/persistence/journalSegment.ts';
import { lineKind } from '../../src/persistence/records.ts';
import { recover, type RecoveredRun } from '../../src/persistence/recover.ts';
import { parseRunLog, readRunLog } from '../../src/persistence/runLog.ts';
import { scriptedModel } from '../../src/testing/index.ts';
import { defineTool } from '../../src/tools/defineTool.ts';
import { removeTempDirs, runFiles, tempDir } from './support.ts';

afterAll(removeTempDirs);

/** A call the model makes: one that works, fails, needs a human, or repeats the same arguments. */
type Call = 'ok' | 'fail' | 'confirm' | 'same';
type Plan = readonly (readonly Call[])[];

const RUN_ID = 'run_cp';

const tools = [
  defineTool({ name: 'work', description: 'Work', idempotent: true, input: z.object({ call: z.string() }), execute: ({ call }) => `did ${call}` }),
  defineTool({
    name: 'flaky',
    description: 'Fails',
    input: z.object({ call: z.string() }),
    execute: ({ call }) => {
      throw new Error(`flaky failed on ${call}`);
    },
  }),
  defineTool({ name: 'ask', description: 'Needs approval', requiresConfirmation: true, input: z.object({ call: z.string() }), execute: ({ call }) => `asked ${call}` }),
];

/** The model reads its turn from the conversation, so a resumed run gets the same replies. */
function model(plan: Plan) {
  return scriptedModel((request) => {
    const turn = request.messages.filter((m) => m.role === 'assistant').length;
    const usage = { promptTokens: 10 + turn, completionTokens: 5 };
    const calls = plan[turn];
    if (calls === undefined) return { text: 'finished', usage };
    return {
      toolCalls: calls.map((call, i) => ({
        id: `c${turn}_${i}`,
        name: call === 'fail' ? 'flaky' : call === 'confirm' ? 'ask' : 'work',
        arguments: { call: call === 'same' ? 'same' : `t${turn}c${i}` },
      })),
      usage,
    };
  });
}

function agentOn(store: RunStore, plan: Plan) {
  return createAgent({
    id: 'agent_cp',
    model: model(plan),
    tools,
    persistence: { store },
    limits: { maxIterations: plan.length + 2 },
    // Breakers are the agent's, not the run's: a resumed run's new agent has not seen the failures
    // before the cut, so one could open in the uninterrupted run only.
    resilience: { stuckDetection: { maxRepeats: 3, action: 'redirect' }, breakers: false },
  });
}

/** Settle a run, approving whatever it waits for live (a recorded decision is applied in a microtask, before the poll). */
async function settle(run: AgentRun): Promise<LoopResult> {
  const poll = setInterval(() => {
    if (run.phase() === 'awaitingHuman') run.approve();
  }, 1);
  try {
    return await run.settled;
  } finally {
    clearInterval(poll);
  }
}

/** A store holding `lines` as the log of RUN_ID, as a crash left it; `read` gets what its resume read. */
function crashedStore(lines: readonly string[], every: number, read: (recovered: RecoveredRun) => void): RunStore {
  const store = createFileStore({ dir: tempDir(), checkpoints: { every } });
  const files = runFiles(store, RUN_ID);
  mkdirSync(files.runs, { recursive: true });
  writeFileSync(files.log, lines.join(''));
  return {
    ...store,
    resumeRun(runId, options) {
      const resumed = store.resumeRun(runId, options);
      read(resumed.recovered);
      return resumed;
    },
  };
}

/** What must match: the result, and the journal with its clock readings left out. */
function outcome(result: LoopResult, journal: readonly JournalEntry[]) {
  const { durationMs: _d, cause: _c, ...rest } = result;
  return {
    result: rest,
    journal: journal.map(({ timestamp: _t, event, iteration, ...entry }) =>
      // The resume itself is what a checkpoint changes: how many records it replayed, and the
      // iteration it restarts at (a replay from the start restarts at 0). Nothing else may change.
      event.type === 'run.resumed'
        ? { ...entry, event: { ...event, replayed: 0 } }
        : { ...entry, iteration, event: 'durationMs' in event ? { ...event, durationMs: 0 } : event },
    ),
  };
}

const figures = { cases: 0, fromCheckpoint: 0 };

async function check(plan: Plan, every: number, cutFraction: number): Promise<void> {
  const referenceStore = createFileStore({ dir: tempDir(), checkpoints: { every } });
  const reference = await settle(agentOn(referenceStore, plan).start('work through the plan', { runId: RUN_ID }));
  const referenceLog = readFileSync(runFiles(referenceStore, RUN_ID).log, 'utf8').split(/(?<=\n)/);
  const endAt = referenceLog.findIndex((line) => line.includes('"kind":"end"'));
  const lines = referenceLog.slice(0, 2 + Math.floor(cutFraction * (endAt - 2)));

  let fromCheckpoint: RecoveredRun | undefined;
  let fromStart: RecoveredRun | undefined;
  const checkpointed = crashedStore(lines, every, (recovered) => (fromCheckpoint = recovered));
  const whole = crashedStore(lines.filter((line) => !line.includes('"kind":"checkpoint"')), every, (recovered) => (fromStart = recovered));
  const restored = await settle(agentOn(checkpointed, plan).resume(RUN_ID));
  const replayed = await settle(agentOn(whole, plan).resume(RUN_ID));

  // Given the whole log (as a database's rows), recover makes of it what the store's resume did
  // of the records from the last checkpoint on, and so it does of fromLastCheckpoint's.
  // (The whole log has the run's input too, which a run restored from a checkpoint has no use for.)
  const all = parseRunLog('crashed', Buffer.from(lines.join('')), 0).records;
  const { read: _read, ...bounded } = fromCheckpoint as RecoveredRun;
  const { input, ...fromAll } = recover(all, bounded.meta, [], 'crashed');
  expect(bounded.checkpoint === undefined ? { ...fromAll, input } : fromAll).toEqual({ ...bounded, warnings: [] });
  expect(recover(fromLastCheckpoint(all), bounded.meta, [], 'crashed')).toEqual({ ...bounded, warnings: [] });

  const hasCheckpoint = lines.some((line) => line.includes('"kind":"checkpoint"'));
  expect(fromCheckpoint?.checkpoint !== undefined).toBe(hasCheckpoint);
  expect(fromStart?.checkpoint).toBeUndefined();
  if (hasCheckpoint) expect(fromCheckpoint?.read?.records).toBeLessThan(fromStart?.read?.records ?? 0);
  expect(outcome(restored, checkpointed.readJournal(RUN_ID).entries)).toEqual(outcome(replayed, whole.readJournal(RUN_ID).entries));
  // Both logs end with their end record (a checkpoint written just before it must not push it up).
  for (const store of [checkpointed, whole]) expect(readRunLog(runFiles(store, RUN_ID).log).records.at(-1)).toMatchObject({ kind: 'end', status: restored.status });
  // And both are the run that was never cut short.
  expect(restored.messages).toEqual(reference.messages);
  expect({ status: restored.status, reason: restored.reason, iterations: restored.iterations, usage: restored.usage }).toEqual({
    status: reference.status,
    reason: reference.reason,
    iterations: reference.iterations,
    usage: reference.usage,
  });
  await checkSegment(plan, every, cutFraction, reference);
  figures.cases++;
  if (hasCheckpoint) figures.fromCheckpoint++;
}

/**
 * The same run kept in a journal segment (an id the store picked) and cut there: its first resume moves it out from
 * its last checkpoint on, and it still goes on as the run never cut short, with its whole journal read back in order.
 */
async function checkSegment(plan: Plan, every: number, cutFraction: number, reference: LoopResult): Promise<void> {
  const source = createFileStore({ dir: tempDir(), checkpoints: { every } });
  const run = agentOn(source, plan).start('work through the plan');
  await settle(run);
  const segmentId = segmentIdOf(run.runId) as string;
  const written = readFileSync(segmentFile(join(source.dir, 'journal'), segmentId), 'utf8').split(/(?<=\n)/);
  const endAt = written.findIndex((line) => lineKind(line) === 'end');
  const cutLines = written.slice(0, 2 + Math.floor(cutFraction * (endAt - 2)));
  const store = createFileStore({ dir: tempDir(), checkpoints: { every } });
  const file = segmentFile(join(store.dir, 'journal'), segmentId);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, cutLines.join(''));
  const before = store.readJournal(run.runId).entries;
  const restored = await settle(agentOn(store, plan).resume(run.runId));
  const { entries, warnings } = store.readJournal(run.runId);
  expect(warnings).toEqual([]);
  expect(entries.map((entry) => entry.sequence)).toEqual([...entries.keys()]);
  expect(entries.slice(0, before.length)).toEqual(before);
  expect(restored.messages).toEqual(reference.messages);
  expect({ status: restored.status, iterations: restored.iterations, usage: restored.usage }).toEqual({ status: reference.status, iterations: reference.iterations, usage: reference.usage });
}

const call = fc.constantFrom<Call>('ok', 'ok', 'fail', 'confirm', 'same');
const plan = fc.array(fc.array(call, { minLength: 1, maxLength: 3 }), { minLength: 2, maxLength: 7 });
const every = fc.integer({ min: 1, max: 3 });
/** Where the log is cut, as a share of it: mostly late, where checkpoints are (fc.double favours the ends). */
const cut = fc.integer({ min: 200, max: 999 }).map((permille) => permille / 1000);

describe('restoring a run from its last checkpoint (property, in process)', () => {
  it('goes on exactly as replaying the run from its whole log', { timeout: 120_000 }, async () => {
    await fc.assert(fc.asyncProperty(plan, every, cut, check), {
      numRuns: 30,
      examples: [
        // Parallel calls, a failure and an approval before and after the checkpoints; cut late.
        [[['ok', 'fail'], ['confirm', 'ok'], ['ok', 'ok', 'fail'], ['confirm'], ['ok']], 1, 0.9],
        // The same call again and again: the detector redirects before the last checkpoint and stops the run after it.
        [[['same'], ['same'], ['same'], ['same'], ['same']], 1, 0.9],
      ],
    });
    expect(figures.fromCheckpoint).toBeGreaterThan(0);
    if (process.env.ACTORLOOP_TEST_FIGURES === '1') console.log('checkpoint property:', figures);
  });
});
