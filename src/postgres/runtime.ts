/**
 * Agents whose runs are durable actors in PostgreSQL: `agent.run()` queues a run and resolves when a
 * worker (`runWorker`) finishes it. A run's mailbox is a table; a job only wakes it.
 */
import pg from 'pg';
import { ConfigurationError } from '../core/errors.ts';
import type { JournalEntry } from '../core/loopEvent.ts';
import type { LoopResult } from '../core/run.ts';
import type { AgentRun, AgentRuntime, BoundRuntime, RunOptions } from '../agent/types.ts';
import { followRun } from './handle.ts';
import { errorForResult } from '../agent/errors.ts';
import { newRunId, RUN_ID_PATTERN } from '../persistence/records.ts';
import { journalEntries } from '../persistence/runWriter.ts';
import { durablePhases, durableProvider, durableTool } from './durable.ts';
import { durablePrepare, nextCallRunId } from './children.ts';
import type { Engine } from './engine.ts';
import { createHearing, parseRow, readResult, type StoredResult } from './hearing.ts';
import type { HumanDecision } from './running.ts';
import { post, queueRun, wake } from './outbox.ts';
import { transaction } from './transaction.ts';
import type { DurableStrategy, DurableStrategyDefinition } from './types.ts';
import type { StrategyResult } from '../strategies/result.ts';
import { DurableRunError } from './errors.ts';
import { agentDefinition } from './definition.ts';
import { checkSchema, migrate, SCHEMA, type MigrationReport } from './migrations.ts';
import { createStepStore } from './stepStore.ts';
import { openSharedMemory } from './sessionMemory.ts';
import { FINAL } from './step.ts';
import { StrategyRunError } from '../strategies/errors.ts';
import { STRATEGY_ERROR_CODE } from '../../machines/strategy.types.ts';
import { defined } from '../core/defined.ts';
import { jsonbText, storableText } from './jsonb.ts';
import { HeldBlobs, queuedMedia } from './blobs.ts';
import { contentText, type ContentPart } from '../core/messages.ts';
import { assertMessages } from '../conversation/validate.ts';
import type { DurableTask } from '../agent/types.ts';

export interface PostgresRuntimeOptions {
  /** `postgres://…`; default `DATABASE_URL`. */
  readonly connectionString?: string;
  /** Connections this process keeps (default 10): a worker needs one per job it runs at once. */
  readonly poolSize?: number;
  /** Migrate the database on first use instead of requiring `actorloop db migrate` (default false). */
  readonly migrate?: boolean;
  /** How long this process follows an agent after its last subscriber left (default 30 s): a page reconnecting meanwhile misses nothing live. */
  readonly followLingerMs?: number;
}

export interface DurableRunInfo {
  readonly runId: string;
  readonly agentId: string;
  readonly status: string;
  readonly task: string;
  /** Events applied so far. */
  readonly version: number;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

export interface PostgresRuntime extends AgentRuntime {
  /** Define it the same way in every process. */
  strategy<TOptions, TState>(id: string, definition: DurableStrategyDefinition<TOptions, TState>): DurableStrategy;
  migrate(): Promise<MigrationReport>;
  /** `after`: only the entries after that sequence, read from the rows that hold them (a reader following a run). */
  journal(runId: string, options?: { readonly after?: number }): Promise<JournalEntry[]>;
  getRun(runId: string): Promise<DurableRunInfo | null>;
  listRuns(options?: { readonly agentId?: string; readonly status?: string; readonly limit?: number }): Promise<DurableRunInfo[]>;
  /** All the calls the run waits on, or those given; the run goes on in a worker. */
  approve(runId: string, toolCallIds?: readonly string[]): Promise<void>;
  /** The reason goes back to the model. */
  reject(runId: string, reason?: string, toolCallIds?: readonly string[]): Promise<void>;
  /** Also cancels the sub-agent runs it waits for; its `run()` rejects with the cancellation. */
  cancel(runId: string, reason?: string): Promise<void>;
  close(): Promise<void>;
}

const engines = new WeakMap<PostgresRuntime, Engine>();

export function engineOf(runtime: PostgresRuntime): Engine {
  const engine = engines.get(runtime);
  if (engine === undefined) throw new ConfigurationError('runWorker needs a runtime made by createPostgresRuntime().');
  return engine;
}

/**
 * @example
 * const runtime = createPostgresRuntime({ connectionString: process.env.DATABASE_URL });
 * const agent = createAgent({ id: 'researcher', model, tools, runtime }); // a worker process runs it
 */
export function createPostgresRuntime(options: PostgresRuntimeOptions = {}): PostgresRuntime {
  const connectionString = options.connectionString ?? process.env['DATABASE_URL'];
  if (connectionString === undefined || connectionString === '') {
    throw new ConfigurationError('createPostgresRuntime needs a connectionString (or DATABASE_URL), e.g. postgres://user@127.0.0.1:5432/app.');
  }
  const pool = new pg.Pool({ connectionString, max: options.poolSize ?? 10 });
  // A connection the server dropped must not crash the process; the next query reconnects.
  pool.on('error', () => undefined);
  pool.on('connect', (client) => client.on('error', () => undefined));
  let readiness: Promise<void> | undefined;
  const ready = (): Promise<void> => (readiness ??= options.migrate === true ? migrate(pool).then(() => undefined) : checkSchema(pool));

  const engine: Engine = { pool, agents: new Map(), strategies: new Map(), store: createStepStore(), blobs: new HeldBlobs(), ready };

  const hearing = createHearing(pool, connectionString, options.followLingerMs);
  const { listen, nextNotice, finished } = hearing;

  /** The run's row and its first event go in one transaction. */
  const submit = async (
    kind: 'agent' | 'strategy',
    id: string,
    redact: <T>(value: T) => T,
    task: DurableTask,
    runOptions: RunOptions & { readonly mode?: 'call'; readonly session?: string },
    join = false,
  ): Promise<StoredResult> => {
    const parts = typeof task === 'string' ? undefined : (task as readonly ContentPart[]);
    const text = parts === undefined ? task : contentText(parts);
    if (typeof text !== 'string' || (text.trim() === '' && !(parts?.some((part) => part.type !== 'text') ?? false))) {
      throw new ConfigurationError('A run needs a non-empty task: a string, or text and image or file parts.');
    }
    const runId = runOptions.runId ?? newRunId();
    if (!RUN_ID_PATTERN.test(runId)) throw new ConfigurationError(`Run id "${runId.slice(0, 64)}" is not usable: use letters, digits, "_" and "-" (1–128).`);
    await ready();
    await listen();
    // A worker decides at a call's first delta whether anyone follows the agent: a subscriber here (a page that
    // started the run) must hold its locks before the run can get there, or that whole call is not published.
    await hearing.followed(id);
    // The bytes go to the blobs table; the row, like the journal, carries their references.
    // The worker reads it back with the same schema: a malformed message is refused here, not there as a corrupt row.
    const media = queuedMedia(parts, runOptions.history === undefined ? undefined : assertMessages(runOptions.history));
    const stored = {
      ...redact({
        ...defined({ limits: runOptions.limits, history: media.history, content: media.content, mode: runOptions.mode }),
        // Its tools' calls find the session's memory by it (redacted, as the memory table keys it).
        ...defined({ session: runOptions.session }),
      }),
      // Not redacted: the worker compares it with its own agent's.
      ...defined({ definition: kind === 'agent' ? engine.agents.get(id)?.definition : undefined }),
    };
    const row = { id: runId, kind, agentId: id, task: storableText(redact(text)), options: jsonbText(stored) };
    // Waited for before the row commits: a run queued here needs no read before its first notice.
    const notice = nextNotice(runId);
    try {
      const inserted = await queueRun(pool, row, media);
      if (!inserted && !join) throw new ConfigurationError(`A durable run ${runId} already exists; pick another run id.`, { runId });
      if (inserted) await notice.news;
    } finally {
      notice.stop();
    }
    return finished(runId);
  };

  const decide = async (runId: string, decision: HumanDecision): Promise<void> => {
    await ready();
    const posted = await transaction(pool, (client) => post(client, [runId], { decision }, `status = 'awaiting_human'`));
    if (posted === 0) {
      const run = await readResult(pool, runId);
      throw new ConfigurationError(`Run ${runId} is not waiting for a human (it is ${run.status}).`, { runId });
    }
  };

  const info = (row: InfoRow): DurableRunInfo => ({
    runId: row.id,
    agentId: row.agent_id,
    status: row.status,
    task: row.task,
    version: Number(row.version),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  });

  const runtime: PostgresRuntime = {
    runIdFor: nextCallRunId,
    bind(binding): BoundRuntime {
      if (engine.agents.has(binding.agentId)) throw new ConfigurationError(`An agent "${binding.agentId}" is already bound to this runtime: give each agent its own id.`);
      engine.agents.set(binding.agentId, {
        agentId: binding.agentId,
        provider: binding.provider,
        tool: binding.tool,
        redact: binding.redact,
        redactCopy: binding.redactCopy,
        ...defined({ output: binding.output, images: binding.images }),
        redactStream: binding.redactStream,
        start: binding.start,
        resume: binding.resume,
        definition: agentDefinition(binding.output, binding.tools),
      });
      const loopResult = (stored: StoredResult): LoopResult => {
        const result = stored as LoopResult;
        const cause = restoredError(result);
        return { ...result, messages: result.messages ?? [], ...defined({ cause }) };
      };
      const runAgent = async (task: DurableTask, runOptions: RunOptions, join: boolean): Promise<LoopResult> => {
        const result = loopResult(await submit('agent', binding.agentId, binding.redact, task, runOptions, join));
        if (result.status === 'done') return result;
        throw errorForResult(result);
      };
      const follow = (runId: string, ended: Promise<LoopResult>): AgentRun => {
        hearing.track(runId, ended);
        return followRun({
          runId,
          agentId: binding.agentId,
          ended,
          // Read once the agent's steps are all told here: none committed after the read goes unheard.
          entries: async () => {
            await hearing.followed(binding.agentId);
            return runtime.journal(runId);
          },
          live$: events$,
          status: () => hearing.status(runId),
          approve: (toolCallIds) => runtime.approve(runId, toolCallIds),
          reject: (reason, toolCallIds) => runtime.reject(runId, reason, toolCallIds),
          cancel: (reason) => runtime.cancel(runId, reason),
        });
      };
      const events$ = hearing.events$(binding.agentId);
      const bound: BoundRuntime = {
        store: engine.store,
        blobs: engine.blobs.store,
        provider: durableProvider(binding.provider),
        tools: binding.tools.map(durableTool),
        wrapTool: durableTool,
        phases: (phases) => durablePhases(binding.agentId, phases),
        run: (task, runOptions) => runAgent(task, runOptions, false),
        start: (task, runOptions, mode, session) => {
          const runId = runOptions.runId ?? newRunId();
          const queued = { ...runOptions, runId, ...defined({ mode, session }) };
          return follow(runId, submit('agent', binding.agentId, binding.redact, task, queued).then(loopResult));
        },
        sessionMemory: async (sessionId) => {
          await ready();
          return openSharedMemory(pool, sessionId, binding.redact);
        },
        follow: (runId) =>
          follow(
            runId,
            (async () => {
              await ready();
              // A run left behind (its wake lost with a database restored from a backup, say) goes on.
              const found = await pool.query<{ status: string }>(`SELECT status FROM ${SCHEMA}.actors WHERE id = $1`, [runId]);
              const status = found.rows[0]?.status;
              if (status !== undefined && !FINAL.has(status) && status !== 'awaiting_human') await wake(pool, [runId]);
              return loopResult(await finished(runId));
            })(),
          ),
        runs: {
          list: async () => (await runtime.listRuns({ agentId: binding.agentId, limit: 1_000 })).map((run) => ({ runId: run.runId, createdAt: run.createdAt.getTime() })),
          entries: (runId) => runtime.journal(runId),
        },
        prepare: durablePrepare(binding.agentId, binding.redact, (task, runOptions, join) => runAgent(task, runOptions, join), (runId, reason) => runtime.cancel(runId, reason)),
        events$,
      };
      return bound;
    },
    strategy(id, definition) {
      if (engine.strategies.has(id) || engine.agents.has(id)) throw new ConfigurationError(`"${id}" is already defined on this runtime: give each strategy and agent its own id.`);
      const sub = engine.agents.get(definition.subAgent?.id);
      if (sub === undefined) throw new ConfigurationError(`runtime.strategy("${id}"): subAgent must be an agent created with this runtime (createAgent({ runtime })).`);
      engine.strategies.set(id, { agentId: id, provider: definition.model ?? sub.provider, tool: async () => undefined, redact: sub.redact, redactCopy: sub.redactCopy, redactStream: sub.redactStream, definition: definition as DurableStrategyDefinition });
      return {
        id,
        async run(task, runOptions = {}) {
          const result = (await submit('strategy', id, sub.redact, task, runOptions)) as StrategyResult;
          if (result.status === 'done') return result;
          // The runner's own code says why (`strategy_timeout`, `strategy_max_rounds`, …).
          const code = result.status === 'cancelled' ? 'strategy_cancelled' : (Object.values(STRATEGY_ERROR_CODE).find((known) => known === result.error?.code) ?? 'strategy_failed');
          throw new StrategyRunError(code, result.error?.message ?? `Strategy run ${result.runId} ended with ${result.reason}.`, { result });
        },
      };
    },
    approve: (runId, toolCallIds) => decide(runId, { approve: true, ...defined({ toolCallIds }) }),
    reject: (runId, reason, toolCallIds) =>
      decide(runId, { approve: false, ...defined({ reason, toolCallIds }) }),
    async cancel(runId, reason = 'cancelled') {
      await ready();
      if ((await transaction(pool, (client) => post(client, [runId], { cancel: reason }))) === 0) {
        const run = await readResult(pool, runId);
        throw new ConfigurationError(`Run ${runId} already ended (${run.status}); there is nothing to cancel.`, { runId });
      }
    },
    migrate: () => migrate(pool),
    async journal(runId, { after } = {}) {
      await ready();
      if (after === undefined) {
        const lines = await pool.query<{ seq: number; line: string }>(`SELECT seq, line FROM ${SCHEMA}.log WHERE actor_id = $1 ORDER BY seq`, [runId]);
        return journalEntries(lines.rows.map((row) => parseRow(runId, row)));
      }
      const lines = await pool.query<{ seq: number; line: string }>(`SELECT seq, line FROM ${SCHEMA}.log WHERE actor_id = $1 AND last_entry > $2 ORDER BY seq`, [runId, after]);
      return journalEntries(lines.rows.map((row) => parseRow(runId, row))).filter((entry) => entry.sequence > after);
    },
    async getRun(runId) {
      await ready();
      const found = await pool.query<InfoRow>(`SELECT id, agent_id, status, task, version, created_at, updated_at FROM ${SCHEMA}.actors WHERE id = $1`, [runId]);
      return found.rows[0] === undefined ? null : info(found.rows[0]);
    },
    async listRuns({ agentId, status, limit = 100 } = {}) {
      await ready();
      const found = await pool.query<InfoRow>(
        `SELECT id, agent_id, status, task, version, created_at, updated_at FROM ${SCHEMA}.actors
         WHERE ($1::text IS NULL OR agent_id = $1) AND ($2::text IS NULL OR status = $2) ORDER BY created_at DESC LIMIT $3`,
        [agentId ?? null, status ?? null, limit],
      );
      return found.rows.map(info);
    },
    async close() {
      await hearing.close();
      await pool.end();
    },
  };
  engines.set(runtime, engine);
  return runtime;
}

interface InfoRow {
  readonly id: string;
  readonly agent_id: string;
  readonly status: string;
  readonly task: string;
  readonly version: string;
  readonly created_at: Date;
  readonly updated_at: Date;
}

/** The typed error a worker stored for a run that failed outside its loop (a corrupt row, bytes gone, another definition). */
function restoredError(result: LoopResult): Error | undefined {
  const error = result.error as { code?: string; message?: string; table?: string; row?: string } | undefined;
  if (error?.code === 'definition_mismatch') return DurableRunError.definitionMismatch(error.message ?? 'The worker has another definition of the agent.', { runId: result.runId });
  if (error?.code !== 'corrupt_row' && error?.code !== 'missing_blob') return undefined;
  return new DurableRunError(error.message ?? 'A row is corrupt.', { code: error.code, table: error.table ?? '', row: error.row ?? '', runId: result.runId });
}
