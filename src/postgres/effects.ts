/**
 * One model or tool call of a durable run, as a job of its own: any worker makes it, records
 * its outcome and queues the event that wakes the run, in one transaction. A call whose job was
 * interrupted (its worker died) is made again by the retry — unless its tool is not idempotent:
 * then the run hears that it may have taken effect, as a resumed run does.
 */
import { DEFAULTS } from '../core/defaults.ts';
import { runWithTimeout } from '../executor/timeout.ts';
import type { CompletionRequest } from '../core/provider.ts';
import { calls, EffectRequest, type EffectOutcome } from './durable.ts';
import { callerOf, type Caller, type Engine } from './engine.ts';
import { settleEffect } from './outbox.ts';
import { CorruptRowError, DurableRunError } from './errors.ts';
import { SCHEMA } from './migrations.ts';

export async function runEffect(engine: Engine, actorId: string, key: string, abort: AbortSignal): Promise<void> {
  const found = await engine.pool.query<{ status: string; request: unknown }>(`SELECT status, request FROM ${SCHEMA}.effects WHERE actor_id = $1 AND key = $2`, [actorId, key]);
  const row = found.rows[0];
  if (row === undefined || row.status === 'done') return;
  const parsed = EffectRequest.safeParse(row.request);
  if (!parsed.success) {
    throw new CorruptRowError(`Row actor_id=${actorId}, key=${key} of ${SCHEMA}.effects holds no valid call (${parsed.error.issues[0]?.message ?? 'bad shape'}); it was left untouched.`, {
      table: `${SCHEMA}.effects`,
      row: `actor_id=${actorId}, key=${key}`,
      runId: actorId,
    });
  }
  const request = parsed.data;
  // A sub-agent run settles its parent's wait itself, when it ends.
  if (request.kind === 'child') return;
  const bound = callerOf(engine, request.agentId);
  if (bound === undefined) throw new DurableRunError(`The call ${key} belongs to agent "${request.agentId}", which this worker does not have.`, { runId: actorId });
  let outcome: EffectOutcome;
  const tool = request.kind === 'tool' ? bound.tools.get(request.tool) : undefined;
  if (request.kind === 'tool' && tool === undefined) {
    outcome = failure(new DurableRunError(`This worker's agent "${request.agentId}" has no tool "${request.tool}".`));
  } else if (row.status === 'running' && tool !== undefined && !tool.idempotent) {
    outcome = failure(
      new DurableRunError(`"${tool.name}" was running when its worker stopped and is not idempotent: it may already have taken effect, so it was not run again.`),
    );
  } else {
    // Only a call that must not be made twice needs to be known as begun before it is made.
    if (tool !== undefined && !tool.idempotent) await engine.pool.query(`UPDATE ${SCHEMA}.effects SET status = 'running', attempts = attempts + 1 WHERE actor_id = $1 AND key = $2`, [actorId, key]);
    outcome = bound.redact(await call(bound, request, abort));
  }
  await settleEffect(engine.pool, actorId, key, outcome);
}

async function call(bound: Caller, request: Exclude<EffectRequest, { kind: 'child' }>, abort: AbortSignal): Promise<EffectOutcome> {
  if (request.kind === 'model') {
    try {
      const completion = await bound.provider.complete({ ...(request.request as unknown as CompletionRequest), signal: abort });
      return { ok: true, value: completion };
    } catch (error) {
      return failure(error);
    }
  }
  const tool = bound.tools.get(request.tool);
  if (tool === undefined) return failure(new Error(`no tool ${request.tool}`));
  const timed = await runWithTimeout(
    (signal) =>
      calls.run({ key: request.idempotencyKey, started: 0 }, () =>
        tool.execute(request.input as never, {
          get signal() {
            return signal();
          },
          toolCallId: request.toolCallId,
          idempotencyKey: request.idempotencyKey,
          runId: request.runId,
          agentId: request.agentId,
        }),
      ),
    tool.timeoutMs ?? DEFAULTS.tools.timeoutMs,
    abort,
  );
  if (!timed.ok) return failure(timed.error);
  const json = JSON.stringify(timed.value ?? null);
  return json === undefined ? failure(new Error(`"${tool.name}" returned a value that is not JSON.`)) : { ok: true, value: JSON.parse(json) as unknown };
}

function failure(error: unknown): EffectOutcome {
  const name = error instanceof Error ? error.name : 'Error';
  const message = error instanceof Error ? error.message : String(error);
  const code = typeof (error as { code?: unknown } | null)?.code === 'string' ? (error as { code: string }).code : undefined;
  return { ok: false, error: { name, message, ...(code === undefined ? {} : { code }) } };
}
