/**
 * The PostgreSQL section of the report: its tables and its targets.
 */
import type { PostgresSection, ThroughputResult } from './postgres.ts';
import { fmt } from './stats.ts';

/** A target of the section: met when every figure is known and passes. */
export interface TargetSpec {
  readonly target: string;
  readonly figures: readonly (readonly [string, number | undefined])[];
  readonly pass: (value: number) => boolean;
  readonly unit: string;
}

const ratio = (a: number | undefined, b: number | undefined) => (a === undefined || b === undefined ? undefined : a / b);
const show = (x: number | undefined | null, suffix = '') => (x === undefined || x === null ? 'n/a' : `${fmt(x)}${suffix}`);
const count = (n: number) => n.toLocaleString('en').replace(/,/g, ' ');
const workersLabel = (n: number) => `${n} worker${n === 1 ? '' : 's'}`;

/** A batch on `workers` processes, fsync off, nothing waiting: the rows the others compare with. */
const plain = (rows: readonly ThroughputResult[], workers: number) => rows.find((t) => t.workers === workers && !t.fsync && t.waiting === 0);

function label(t: ThroughputResult): string {
  const parts = [workersLabel(t.workers), ...(t.waiting > 0 ? [`${count(t.waiting)} runs waiting on a human`] : []), ...(t.fsync ? ['fsync on'] : [])];
  return `${parts.join(', ')}${t.stopped === undefined ? '' : ` (**stopped** at the time limit, ${t.stopped.done} of ${t.agents} done: figures are bounds)`}`;
}

/** Agents per second; a stopped batch's is at most that. */
const rate = (t: ThroughputResult) => `${t.stopped === undefined ? '' : '< '}${fmt(t.agentsPerSecond)}`;

/** How many times slower `t` ran than `base` (a stopped batch: at least that). */
const slower = (base: ThroughputResult | undefined, t: ThroughputResult) => `${t.stopped === undefined ? '' : '> '}${show(ratio(base?.agentsPerSecond, t.agentsPerSecond), '×')}`;

/** The waiting-runs target is set at this many; fewer (the quick run) is reported but not checked. */
const TARGET_WAITING = 20_000;

/** Per agent of the batch; null counters (no pg_stat_wal) stay null. */
const perAgent = (t: ThroughputResult, value: number | null, scale = 1) => (value === null ? null : (value * scale) / t.agents);

export function postgresTargets(section: PostgresSection | undefined): TargetSpec[] {
  const measured = section === undefined || 'skipped' in section ? undefined : section;
  const rows = measured?.throughput ?? [];
  const one = plain(rows, 1);
  const waiting = rows.find((t) => t.waiting > 0);
  const cpuRows = rows.filter((t) => !t.fsync && t.waiting === 0);
  return [
    { target: 'PostgreSQL: 2 workers ≥ 1.7× one worker (agents per second)', figures: [['', ratio(plain(rows, 2)?.agentsPerSecond, one?.agentsPerSecond)]], pass: (v) => v >= 1.7, unit: '×' },
    { target: 'PostgreSQL: ≥ 60 agents/s with one worker', figures: [['', one?.agentsPerSecond]], pass: (v) => v >= 60, unit: ' agents/s' },
    {
      target: 'PostgreSQL: ≤ 15 ms of PostgreSQL CPU per react-10 agent',
      // A stopped batch did only part of its work: its CPU per agent says nothing either way.
      figures: cpuRows.length === 0 ? [['', undefined]] : cpuRows.map((t): readonly [string, number | undefined] => (t.stopped === undefined ? [workersLabel(t.workers), (t.cpu.postgresS * 1000) / t.agents] : [`${workersLabel(t.workers)} (stopped)`, undefined])),
      pass: (v) => v <= 15,
      unit: ' ms',
    },
    {
      target: `PostgreSQL: throughput with ${count(TARGET_WAITING)} runs waiting on a human within 1.2× of with none (one worker)`,
      figures: [
        waiting === undefined
          ? ['', undefined]
          : waiting.waiting < TARGET_WAITING
            ? [`only ${count(waiting.waiting)} waiting (${slower(one, waiting)} slower)`, undefined]
            : [`${count(waiting.waiting)} waiting${waiting.stopped === undefined ? '' : ', at least'}`, ratio(one?.agentsPerSecond, waiting.agentsPerSecond)],
      ],
      pass: (v) => v <= 1.2,
      unit: '× slower',
    },
    {
      target: 'PostgreSQL: ≤ 2 ms per iteration of a sequential durable run (median, steady)',
      figures: [['', measured === undefined ? undefined : measured.perIteration.postgresUs.median / 1000]],
      pass: (v) => v <= 2,
      unit: ' ms',
    },
  ];
}

export function postgresRows(section: PostgresSection): string[] {
  if ('skipped' in section) return [section.skipped];
  const rows = section.throughput;
  const first = rows[0];
  const agents = first?.agents ?? 0;
  const one = plain(rows, 1);
  const p = section.perIteration;
  const out = [
    `PostgreSQL ${section.serverVersion} on this machine (fsync off unless the row says otherwise), ${section.cores} cores. react-10 with a 5 ms model: ${agents} agents submitted at once by the bench process (the client), ` +
      `run by worker processes of ${section.concurrency} runs at once each, on a fresh, vacuumed database per row; each run takes ${show(first === undefined ? undefined : first.steps.count / agents)} steps (one transaction each: a step records the outcomes of the calls its worker made since the last one and asks for the next). ` +
      'CPU seconds over the run: the workers, every PostgreSQL server process, and the client, beside wall × cores (busy: their sum over it).',
    '',
    '| batch | agents/s | vs the first row | wall s | CPU s: workers | PostgreSQL | client | wall × cores | busy |',
    '|---|---|---|---|---|---|---|---|---|',
    ...rows.map(
      (t) =>
        `| ${label(t)} | ${rate(t)} | ${t.stopped === undefined ? '' : '< '}${show(ratio(t.agentsPerSecond, first?.agentsPerSecond), '×')} | ${fmt(t.wallMs / 1000)} | ${fmt(t.cpu.workersS)} | ${fmt(t.cpu.postgresS)} | ${fmt(t.cpu.clientS)} | ${fmt(t.cpu.availableS)} | ` +
        `${show(((t.cpu.workersS + t.cpu.postgresS + t.cpu.clientS) / t.cpu.availableS) * 100, ' %')} |`,
    ),
    '',
    'Per agent, the same batches: PostgreSQL CPU; transactions of the bench database (committed and rolled back, pg_stat_database) and WAL of the cluster (pg_stat_wal; with fsync off none is synced) from the start of the batch until its connections closed; ' +
      'how long applying one event took (the runtime\'s record of its steps); and a run\'s time from submission to result as the client saw it (all submitted at once: mostly queueing).',
    '',
    '| batch | PostgreSQL CPU ms | transactions | WAL records | WAL KB | WAL syncs | step ms p50 | p99 | run s p50 | p99 |',
    '|---|---|---|---|---|---|---|---|---|---|',
    ...rows.map(
      (t) =>
        `| ${label(t)} | ${fmt((t.cpu.postgresS * 1000) / t.agents)} | ${fmt(t.database.transactions / t.agents)} | ${show(perAgent(t, t.database.walRecords))} | ${show(perAgent(t, t.database.walBytes, 1 / 1024))} | ` +
        `${show(perAgent(t, t.database.walSyncs))} | ${fmt(t.steps.p50Ms)} | ${fmt(t.steps.p99Ms)} | ${fmt(t.runS.p50)} | ${fmt(t.runS.p99)} |`,
    ),
    '',
  ];
  const waiting = rows.find((t) => t.waiting > 0);
  if (waiting !== undefined) {
    const setup = waiting.waitingSetup;
    out.push(
      `Runs waiting on a human: ${count(waiting.waiting)} made through \`agent.run\` before the batch (an agent whose one tool requires confirmation, each run until it was \`awaiting_human\`` +
        `${setup === undefined ? '' : `; ${fmt(setup.seconds)} s, ${fmt(setup.runs / setup.seconds)} runs/s`}), and one more approved and run to its answer; all still waiting after the batch. ` +
        `With them one worker ran ${rate(waiting)} agents/s against ${show(one?.agentsPerSecond)} without: ${slower(one, waiting)} slower.`,
      '',
    );
  }
  const synced = rows.find((t) => t.fsync);
  if (synced !== undefined) {
    out.push(
      `fsync on (a second cluster, the server's defaults otherwise: every commit waits for its WAL on disk): ${rate(synced)} agents/s on one worker against ${show(one?.agentsPerSecond)} with fsync off ` +
        `(${slower(one, synced)} slower).`,
      '',
    );
  }
  out.push(
    `Cost per iteration: ${p.runs} sequential react-10 runs, 0 ms model, one at a time (run wall time / 10); the durable runs through a worker in the bench process. ` +
      `Steady: after ${p.warmupRuns} untimed runs of the agent; first runs: its ${p.runs} after two, on a worker just started (this process ran the batches above, so its code is compiled already).`,
    '',
    '| agent | µs per iteration median (p10) | p90 | vs in memory |',
    '|---|---|---|---|',
    `| in memory, steady | ${fmt(p.memoryUs.median)} (${fmt(p.memoryUs.p10)}) | ${fmt(p.memoryUs.p90)} | 1× |`,
    `| durable on PostgreSQL, steady | ${fmt(p.postgresUs.median)} (${fmt(p.postgresUs.p10)}) | ${fmt(p.postgresUs.p90)} | ${show(ratio(p.postgresUs.median, p.memoryUs.median), '×')} |`,
    `| in memory, first runs | ${fmt(p.memoryColdUs.median)} (${fmt(p.memoryColdUs.p10)}) | ${fmt(p.memoryColdUs.p90)} | ${show(ratio(p.memoryColdUs.median, p.memoryUs.median), '×')} |`,
    `| durable on PostgreSQL, first runs | ${fmt(p.postgresColdUs.median)} (${fmt(p.postgresColdUs.p10)}) | ${fmt(p.postgresColdUs.p90)} | ${show(ratio(p.postgresColdUs.median, p.memoryUs.median), '×')} |`,
  );
  return out;
}
