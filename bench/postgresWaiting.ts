/**
 * Runs waiting on a human, made through the public API the way an application makes them: a run
 * of an agent whose tool requires confirmation, run until it is `awaiting_human`. Workers must
 * be serving the agent (postgresWorker.ts does).
 */
import { performance } from 'node:perf_hooks';
import { createPostgresRuntime, type PostgresRuntime } from '../src/postgres/index.ts';
import { WAITING_AGENT_ID, WAITING_ANSWER, WAITING_TASK, waitingAgent } from './postgresAgents.ts';

/** Runs submitted per runtime: `run()` keeps polling a run it waits for, so the runtime of each wave is closed once its runs wait. */
const WAVE = 1_000;
/** Longest a wave may take to reach `awaiting_human` before the setup is called stuck. */
const WAVE_TIMEOUT_MS = 300_000;
/** No wave is started after this long: the batch is then measured with the runs made so far (and says so). */
const SETUP_BUDGET_MS = 15 * 60_000;

export interface WaitingSetup {
  /** Runs made: fewer than asked for if the setup ran out of time. */
  readonly runs: number;
  readonly seconds: number;
}

/**
 * Create `count` runs waiting on a human (fewer if that takes over SETUP_BUDGET_MS); then one
 * more, approved, which must run to its answer (so the workers serve these runs, not merely
 * leave them be).
 */
export async function createWaitingRuns(url: string, count: number, log: (message: string) => void): Promise<WaitingSetup> {
  const started = performance.now();
  let made = 0;
  while (made < count) {
    if (performance.now() - started > SETUP_BUDGET_MS) {
      log(`PostgreSQL: making runs that wait on a human took over ${SETUP_BUDGET_MS / 60_000} min; measuring with the ${made} made`);
      break;
    }
    const ids = Array.from({ length: Math.min(WAVE, count - made) }, (_, i) => `bench_waiting_${made + i}`);
    await waveOfWaitingRuns(url, ids);
    made += ids.length;
    if ((made / WAVE) % 5 === 0) log(`PostgreSQL: ${made} of ${count} runs waiting on a human (${Math.round((performance.now() - started) / 1000)} s)`);
  }
  const seconds = (performance.now() - started) / 1000;
  await approvedRunFinishes(url);
  return { runs: made, seconds };
}

async function waveOfWaitingRuns(url: string, ids: readonly string[]): Promise<void> {
  const runtime = createPostgresRuntime({ connectionString: url, poolSize: 4 });
  let closing = false;
  let failure: unknown;
  try {
    const agent = waitingAgent(runtime);
    // Not awaited: run() resolves when a run ends, and these wait. Once the runtime is closed they reject; that is expected.
    for (const runId of ids) {
      agent.run(WAITING_TASK, { runId }).catch((error: unknown) => {
        if (!closing) failure ??= error;
      });
    }
    const deadline = Date.now() + WAVE_TIMEOUT_MS;
    const wanted = new Set(ids);
    for (;;) {
      if (failure !== undefined) throw failure;
      // Runs come newest first: once the newest `ids.length` waiting runs are this wave's, all of it waits.
      const waiting = await runtime.listRuns({ agentId: WAITING_AGENT_ID, status: 'awaiting_human', limit: ids.length });
      if (waiting.filter((run) => wanted.has(run.runId)).length === ids.length) return;
      if (Date.now() > deadline) {
        const statuses = (await runtime.listRuns({ agentId: WAITING_AGENT_ID, limit: ids.length })).filter((run) => wanted.has(run.runId)).map((run) => run.status);
        throw new Error(`PostgreSQL bench: runs meant to wait on a human did not all get there in ${WAVE_TIMEOUT_MS / 1000} s: ${JSON.stringify(tally(statuses))}.`);
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  } finally {
    closing = true;
    await runtime.close();
  }
}

async function approvedRunFinishes(url: string): Promise<void> {
  const runtime = createPostgresRuntime({ connectionString: url, poolSize: 4 });
  try {
    const agent = waitingAgent(runtime);
    const runId = 'bench_waiting_approved';
    const result = agent.run(WAITING_TASK, { runId });
    await untilStatus(runtime, runId, 'awaiting_human');
    await runtime.approve(runId);
    const done = await result;
    if (done.text !== WAITING_ANSWER) throw new Error(`PostgreSQL bench: an approved waiting run answered ${JSON.stringify(done.text)}.`);
  } finally {
    await runtime.close();
  }
}

async function untilStatus(runtime: PostgresRuntime, runId: string, status: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const run = await runtime.getRun(runId);
    if (run?.status === status) return;
    if (Date.now() > deadline) throw new Error(`PostgreSQL bench: run ${runId} is ${String(run?.status)}, not ${status}, after 60 s.`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** How many runs are waiting on a human, counted through the public API. */
export async function countWaiting(url: string, atMost: number): Promise<number> {
  const runtime = createPostgresRuntime({ connectionString: url, poolSize: 1 });
  try {
    return (await runtime.listRuns({ agentId: WAITING_AGENT_ID, status: 'awaiting_human', limit: atMost + 1 })).length;
  } finally {
    await runtime.close();
  }
}

const tally = (values: readonly string[]): Record<string, number> => values.reduce<Record<string, number>>((t, v) => ({ ...t, [v]: (t[v] ?? 0) + 1 }), {});
