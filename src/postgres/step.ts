/**
 * One step, in one transaction: lock the run, record this worker's outcomes, take the mailbox, replay
 * the run, then append its lines and claim the calls it needs (made as soon as the step commits).
 */
import type pg from 'pg';
import { z } from 'zod';
import { ContentPart, Message } from '../core/messages.ts';
import type { AgentRun } from '../agent/types.ts';
import { StepContext, type EffectOutcome } from './durable.ts';
import { failedResult } from '../agent/result.ts';
import { loadRun } from './load.ts';
import { CHANNEL, type BoundStrategy, type Engine } from './engine.ts';
import { stepNotice } from './notices.ts';
import { transaction } from './transaction.ts';
import { cancelChildren, settleEffect, startChildren, wakeAt } from './outbox.ts';
import { advanceStrategy, strategyBudget, strategyDeadline } from './strategies.ts';
import { DurableRunError } from './errors.ts';
import { StepRun } from './stepStore.ts';
import { SCHEMA } from './migrations.ts';
import { mustMarkBegun } from './effects.ts';
import { LiveRun, type StepOutcome } from './liveRun.ts';
import { goOn, release, runningHere, type Events, type HumanDecision, type Running } from './running.ts';
import { claimedCalls, madeBlobs, writeStep, type Made } from './stepWrite.ts';
import { defined } from '../core/defined.ts';
import { jsonbText } from './jsonb.ts';
import { storeBlobs } from './blobs.ts';
import { AgentDefinition, checkDefinition } from './definition.ts';

const MailboxEvent = z.union([
  z.object({ decision: z.object({ approve: z.boolean(), toolCallIds: z.array(z.string()).optional(), reason: z.string().optional() }) }),
  z.object({ cancel: z.string() }),
]);

interface ActorRow {
  readonly id: string;
  readonly kind: string;
  readonly agent_id: string;
  readonly parent_id: string | null;
  readonly status: string;
  readonly version: string;
  readonly task: string;
  readonly options: unknown;
  readonly log_length: number;
  readonly checkpoint_at: number | null;
  readonly created_at: Date;
  /** Milliseconds since `created_at` on the database's clock, as the row was locked: a worker's clock may be off. */
  readonly age_ms: number;
  /** The images and files it refers to. */
  readonly blobs: string[];
}

export const FINAL = new Set(['done', 'failed', 'cancelled']);

export async function applyStep(engine: Engine, workerId: string, actorId: string, made: Made): Promise<StepOutcome> {
  let running: Running | undefined;
  let live: LiveRun | undefined;
  try {
    const claimed = await transaction(engine.pool, async (client) => {
      // A run that ended takes its mailbox too, and does nothing with it.
      const found = await client.query<ActorRow & { mailbox: { id: string; event: unknown }[] }>({
        name: 'actorloop_step_lock',
        text: `WITH locked AS (
                 SELECT id, kind, agent_id, parent_id, status, version, task, options, log_length, checkpoint_at, created_at, blobs FROM ${SCHEMA}.actors WHERE id = $1 FOR UPDATE
               ), taken AS (
                 DELETE FROM ${SCHEMA}.mailbox WHERE actor_id = $1 AND EXISTS (SELECT 1 FROM locked) RETURNING id, event
               )
               SELECT locked.*, (extract(epoch FROM clock_timestamp() - locked.created_at) * 1000)::float8 AS age_ms, (SELECT coalesce(json_agg(json_build_object('id', id, 'event', event) ORDER BY id), '[]') FROM taken) AS mailbox FROM locked`,
        values: [actorId],
      });
      // The step starts once it holds the run: a wake that waited for another step's lock did nothing meanwhile.
      const started = Date.now();
      const row = found.rows[0];
      // A run deleted, or one that ended (calls it asked for may still report in): nothing to do.
      if (row === undefined || FINAL.has(row.status)) return [];
      const events = mailboxEvents(actorId, row.mailbox);
      const version = Number(row.version) + 1;
      const outcome = await advance(engine, client, row, events, made, started);
      running = outcome.running;
      const { lines, step, result } = outcome;
      const from = row.log_length;
      const status = result?.status ?? step.run.status;
      // A run that ended (a cancelled one) needs none of the calls it asked for on its way.
      const requested = result === undefined ? [...step.requested] : [];
      const calls = requested.filter(([, request]) => request.kind !== 'child');
      const marks = await Promise.all(calls.map(([, request]) => mustMarkBegun(engine, request)));
      const written = await writeStep(client, {
        actorId, agentId: row.agent_id, workerId, version, from, lines, calls, marks, events: events.count,
        startedAt: new Date(started), status, announce: status !== row.status, result, made,
      });
      // Cannot happen while the row lock is held; if it ever did, nothing of this step is kept.
      if (!written.updated) throw new DurableRunError(`Run ${actorId} moved past version ${version - 1} during this step; the step was rolled back.`, { runId: actorId });
      const fresh = madeBlobs(made);
      if (fresh.size > 0) await storeBlobs(client, actorId, [...fresh.keys()], fresh, true);
      await startChildren(client, actorId, requested.map(([, request]) => request));
      if (result?.status === 'cancelled') await cancelChildren(client, actorId, 'was cancelled');
      // A strategy that ended (its budget spent) leaves no branch running for nobody.
      else if (result !== undefined && row.kind === 'strategy') await cancelChildren(client, actorId, `ended (${result.status})`);
      // Its budget is spent while it may wait on branches that run long: a wake then ends it.
      if (result === undefined && row.kind === 'strategy' && from === 0) await wakeAt(client, actorId, strategyDeadline(strategyOf(engine, row), row.created_at.getTime()));
      if (result !== undefined && row.parent_id !== null) await settleEffect(client, row.parent_id, `child:${actorId}`, { ok: true, value: result });
      const session = runOptions(row).session;
      const claimed = claimedCalls(calls, written.claimed, session);
      // When this worker makes all its calls, the run lives on here: the next step needs no replay.
      if (running !== undefined && status === 'running' && claimed.length > 0 && claimed.length === requested.length) {
        live = new LiveRun(engine, running, { workerId, agentId: row.agent_id, parentId: row.parent_id, session, version, logLength: from + lines.length });
      }
      return claimed;
    });
    return live === undefined ? { claimed } : { claimed, live };
  } finally {
    if (live === undefined && running !== undefined) await release(engine, running);
    if (live === undefined) engine.blobs.drop(actorId);
  }
}

/** In the order they came; this transaction applies them. */
function mailboxEvents(actorId: string, rows: readonly { id: string; event: unknown }[]): Events {
  const decisions: HumanDecision[] = [];
  let cancel: string | undefined;
  for (const row of rows) {
    const parsed = MailboxEvent.safeParse(row.event);
    if (!parsed.success) {
      throw DurableRunError.corruptRow(`Row id=${row.id} of ${SCHEMA}.mailbox holds no event (${parsed.error.issues[0]?.message ?? 'bad shape'}); it was left untouched.`, {
        table: `${SCHEMA}.mailbox`,
        row: `id=${row.id}`,
        runId: actorId,
      });
    }
    if ('decision' in parsed.data) decisions.push(parsed.data.decision);
    else cancel ??= parsed.data.cancel;
  }
  return { count: rows.length, decisions, ...defined({ cancel }) };
}

interface Advanced {
  readonly step: StepContext;
  readonly lines: readonly string[];
  readonly result?: { readonly status: string };
  /** At rest or ended: its step releases it, or keeps it alive. */
  readonly running?: Running;
}

/** `started`: when the row was locked, on this worker's clock. */
async function advance(engine: Engine, client: pg.PoolClient, row: ActorRow, events: Events, made: Made, started: number): Promise<Advanced> {
  const actorId = row.id;
  // A run no step wrote to yet has no log, and no call (a step asks for them): nothing to read back.
  const { records, seqs, outcomes } = row.log_length === 0 ? { records: [], seqs: [], outcomes: new Map<string, EffectOutcome>() } : await loadRun(client, actorId, row.checkpoint_at);
  // An outcome already recorded by a worker that took the call over stands.
  for (const [key, { outcome }] of made) if (!outcomes.has(key)) outcomes.set(key, outcome);
  // Its parts are read while it replays, synchronously: their bytes are in hand first (none for a text-only run).
  const fresh = madeBlobs(made);
  if (row.blobs.length > 0 || fresh.size > 0) await engine.blobs.hold(client, actorId, row.blobs, fresh);
  const run = new StepRun(actorId, row.agent_id, row.task, row.created_at.getTime(), records, seqs, row.log_length);
  if (row.kind === 'strategy') {
    const bound = strategyOf(engine, row);
    const step = new StepContext(run, outcomes, bound);
    // Its budget is what is left of it on the database's clock, counted on from here on this worker's.
    const deadline = started + strategyBudget(bound) - row.age_ms;
    const advanced = await advanceStrategy(bound, actorId, row.task, step, deadline, events.cancel);
    return { step, lines: advanced.lines, ...defined({ result: advanced.result }) };
  }
  const bound = engine.agents.get(row.agent_id);
  if (bound === undefined) throw notHere(actorId, 'agent', row.agent_id, 'createAgent({ runtime })');
  const { mode, session: _session, content, definition, ...options } = runOptions(row);
  // A row queued before runs carried it, or a sub-agent run this worker asked for, expects nothing.
  if (definition !== undefined) checkDefinition(actorId, row.agent_id, definition, bound.definition);
  const step = new StepContext(run, outcomes, bound);
  engine.store.begin(run);
  let handle: AgentRun | undefined;
  try {
    handle = records.length === 0 ? bound.start(content ?? row.task, { ...options, runId: actorId }, mode) : bound.resume(actorId);
  } catch (error) {
    engine.store.end(actorId);
    throw error;
  }
  const alive = runningHere(handle, step);
  try {
    return { step, ...(await goOn(alive, events)), running: alive };
  } catch (error) {
    // Nothing of a failed step is kept; its run must not live on here either (its retry starts it again).
    await release(engine, alive);
    throw error;
  }
}

function strategyOf(engine: Engine, row: ActorRow): BoundStrategy {
  const bound = engine.strategies.get(row.agent_id);
  if (bound === undefined) throw notHere(row.id, 'strategy', row.agent_id, 'runtime.strategy()');
  return bound;
}

function notHere(runId: string, kind: string, id: string, how: string): DurableRunError {
  return new DurableRunError(`Run ${runId} belongs to the ${kind} "${id}", which this worker does not have: define it with ${how} before runWorker().`, { runId });
}

/** The error names the corrupt row, and a waiting parent hears so. The rows are left as they are. */
export async function failRun(engine: Engine, actorId: string, error: DurableRunError): Promise<void> {
  await transaction(engine.pool, async (client) => {
    const found = await client.query<Pick<ActorRow, 'agent_id' | 'parent_id' | 'status' | 'log_length'>>(
      `SELECT agent_id, parent_id, status, log_length FROM ${SCHEMA}.actors WHERE id = $1 FOR UPDATE`,
      [actorId],
    );
    const row = found.rows[0];
    if (row === undefined || FINAL.has(row.status)) {
      return;
    }
    const result = failedResult(actorId, row.agent_id, error.toJSON());
    await client.query(`UPDATE ${SCHEMA}.actors SET status = 'failed', result = $2, version = version + 1, updated_at = now() WHERE id = $1`, [actorId, jsonbText(result)]);
    if (row.parent_id !== null) await settleEffect(client, row.parent_id, `child:${actorId}`, { ok: true, value: result });
    await client.query('SELECT pg_notify($1, $2)', [CHANNEL, stepNotice({ actor: actorId, agent: row.agent_id, status: 'failed', from: row.log_length, to: row.log_length })]);
  });
}

const QueuedOptions = z.object({
  limits: z.object({ maxIterations: z.number(), maxTotalTokens: z.number(), timeoutMs: z.number(), maxRepairTurns: z.number() }).partial().optional(),
  history: z.array(Message).optional(),
  /** A task with parts: text, and images and files by reference. */
  content: z.array(ContentPart).optional(),
  mode: z.literal('call').optional(),
  session: z.string().optional(),
  definition: AgentDefinition.optional(),
});

function runOptions(row: ActorRow): z.infer<typeof QueuedOptions> {
  const parsed = QueuedOptions.safeParse(row.options);
  if (parsed.success) return parsed.data;
  throw DurableRunError.corruptRow(
    `Row id=${row.id} of ${SCHEMA}.actors has options that are not a run's (${parsed.error.issues[0]?.message ?? 'bad shape'}); it was left untouched.`,
    { table: `${SCHEMA}.actors`, row: `id=${row.id}`, runId: row.id },
  );
}

