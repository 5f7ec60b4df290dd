/**
 * Agents whose runs are durable actors in PostgreSQL: `agent.run()` queues a run and resolves when a
 * worker (`runWorker`) finishes it. A run's mailbox is a table; a job only wakes it.
 */
import pg from 'pg';
import { concat, defer, from, Observable, Subject } from 'rxjs';
import { ConfigurationError } from '../core/errors.ts';
import type { JournalEntry } from '../core/loopEvent.ts';
import type { LoopResult } from '../core/run.ts';
import type { AgentRun, AgentRuntime, BoundRuntime, RunOptions } from '../agent/types.ts';
import { followRun } from './handle.ts';
import { errorForResult } from '../agent/errors.ts';
import { newRunId, RUN_ID_PATTERN } from '../persistence/records.ts';
import { journalEntries } from '../persistence/runWriter.ts';
import { parseLine } from '../persistence/runLog.ts';
import { durablePhases, durableProvider, durableTool } from './durable.ts';
import { durablePrepare, nextCallRunId } from './children.ts';
import { CHANNEL, type Engine } from './engine.ts';
import { AgentFollows, FOLLOW_LINGER_MS, Lingering, parseStepNotice, type StepNotice } from './notices.ts';
import { HeldCalls, noticeEntries, parseTokenNotice, TOKEN_CHANNEL } from './tokens.ts';
import { liveFromStart } from '../events/liveDeltas.ts';
import type { HumanDecision } from './running.ts';
import { post, queueRun, wake } from './outbox.ts';
import { isConnectionError, transaction, whileReconnecting } from './transaction.ts';
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

/** Covers a notice lost with a connection. */
const CHECK_EVERY_MS = 5_000;

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

  // One listening connection, opened on first need.
  let listener: Promise<pg.Client> | undefined;
  /** The agents whose events this process follows, told to steps and workers by locks on the listener. */
  const follows = new AgentFollows();
  // The last subscriber of an agent left: steps stop notifying and workers stop publishing to this process, unless one comes back first.
  const lingering = new Lingering(options.followLingerMs ?? FOLLOW_LINGER_MS, (agentId) => {
    if (follows.follows(agentId)) return;
    feeds.delete(agentId);
    held.delete(agentId);
    void listener?.then((client) => follows.sync(client, agentId)).catch(() => undefined);
  });
  const following = new Map<string, string>();
  /** Each is called once with the next notice about the run. */
  const waiters = new Map<string, Set<() => void>>();
  const feeds = new Map<string, Subject<JournalEntry>>();
  /** Per followed agent: its calls in flight, for a subscriber that joins mid-call. */
  const held = new Map<string, HeldCalls>();
  const pass = (agentId: string, feed: Subject<JournalEntry>, entry: JournalEntry): void => {
    held.get(agentId)?.pass(entry);
    feed.next(entry);
  };
  /** Read in notification order, one batch at a time, so each feed stays in order. */
  let reading = Promise.resolve();
  const listen = (): Promise<pg.Client> =>
    (listener ??= (async () => {
      const client = new pg.Client({ connectionString });
      client.on('error', () => {
        listener = undefined;
        // Subscribers keep following: listen again (entries committed meanwhile are not replayed to them).
        if (follows.agents.length > 0) relisten();
        for (const waiting of waiters.values()) for (const wakeUp of waiting) wakeUp();
      });
      client.on('notification', (message) => {
        if (message.channel === TOKEN_CHANNEL) return void liveTokens(message.payload);
        const notice = parseStepNotice(message.payload);
        if (notice === undefined) return;
        if (following.has(notice.actor)) following.set(notice.actor, notice.status);
        if (FINAL.has(notice.status) || notice.status === 'awaiting_human') for (const wake of waiters.get(notice.actor) ?? []) wake();
        const feed = feeds.get(notice.agent);
        if (feed !== undefined && notice.to > notice.from) {
          reading = reading
            .then(() => emitEntries(feed, notice))
            .catch((error: unknown) => console.warn(`[actorloop] events of run ${notice.actor} could not be read: ${error instanceof Error ? error.message : String(error)}`));
        }
      });
      await client.connect();
      await client.query(`LISTEN ${CHANNEL}`);
      for (const agentId of follows.agents) await follows.sync(client, agentId);
      return client;
    })());


  /** In the order of the notices: a call's deltas before its reply's entries, which are read first. */
  const liveTokens = (payload: string | undefined): void => {
    const notice = parseTokenNotice(payload);
    const feed = notice === undefined ? undefined : feeds.get(notice.a);
    if (notice === undefined || feed === undefined) return;
    const entries = noticeEntries(notice, Date.now());
    reading = reading.then(() => {
      for (const entry of entries) pass(notice.a, feed, entry);
    });
  };

  /** Resolves once the agent's steps and streamed calls are all told here, if it has subscribers (at once if not, or the listener failed). */
  const followed = async (agentId: string): Promise<void> => {
    if (follows.follows(agentId)) await listen().then((client) => follows.sync(client, agentId)).catch(() => undefined);
  };

  const relisten = (): void => {
    setTimeout(() => void listen().catch(() => (follows.agents.length > 0 ? relisten() : undefined)), 1_000).unref();
  };

  const emitEntries = async (feed: Subject<JournalEntry>, notice: StepNotice): Promise<void> => {
    const lines = await pool.query<{ seq: number; line: string }>(`SELECT seq, line FROM ${SCHEMA}.log WHERE actor_id = $1 AND seq >= $2 AND seq < $3 ORDER BY seq`, [
      notice.actor,
      notice.from,
      notice.to,
    ]);
    for (const entry of journalEntries(lines.rows.map((row) => parseRow(notice.actor, row)))) pass(notice.agent, feed, entry);
  };

  const readResult = async (runId: string): Promise<{ status: string; result: StoredResult | null }> => {
    const found = await pool.query<{ status: string; result: StoredResult | null }>(`SELECT status, result FROM ${SCHEMA}.actors WHERE id = $1`, [runId]);
    const row = found.rows[0];
    if (row === undefined) throw new DurableRunError(`No durable run ${runId}.`, { runId });
    return row;
  };

  /** One query for all the runs waited for in this process, however many wait. */
  let checking: ReturnType<typeof setInterval> | undefined;
  const checkWaiters = async (): Promise<void> => {
    if (waiters.size === 0) {
      clearInterval(checking);
      checking = undefined;
      return;
    }
    const found = await pool.query<{ id: string; status: string }>(`SELECT id, status FROM ${SCHEMA}.actors WHERE id = ANY($1::text[])`, [[...waiters.keys()]]);
    for (const { id, status } of found.rows) {
      if (following.has(id)) following.set(id, status);
      if (FINAL.has(status)) for (const wake of waiters.get(id) ?? []) wake();
    }
  };

  /** Resolves with the run's next notice that it ended or waits for a human (or the listener's loss). */
  const nextNotice = (runId: string): { readonly news: Promise<void>; stop(): void } => {
    let wake!: () => void;
    const news = new Promise<void>((resolve) => (wake = resolve));
    if (checking === undefined) {
      checking = setInterval(() => void checkWaiters().catch(() => undefined), CHECK_EVERY_MS);
      checking.unref();
    }
    const waiting = waiters.get(runId) ?? new Set();
    waiters.set(runId, waiting.add(wake));
    const stop = (): void => {
      waiting.delete(wake);
      if (waiting.size === 0 && waiters.get(runId) === waiting) waiters.delete(runId);
    };
    return { news, stop };
  };

  const finished = async (runId: string): Promise<StoredResult> => {
    for (;;) {
      // Through a database restart the wait goes on: listen and read again once it is back.
      await whileReconnecting(listen);
      // Listening before reading: a notice that arrives while the row is read is not lost.
      const notice = nextNotice(runId);
      try {
        const { status, result } = await whileReconnecting(() => readResult(runId));
        if (following.has(runId)) following.set(runId, status);
        if (FINAL.has(status) && result !== null) return result;
        await notice.news;
      } catch (error) {
        if (!isConnectionError(error)) throw error;
      } finally {
        notice.stop();
      }
    }
  };

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
    await followed(id);
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
      const run = await readResult(runId);
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
        following.set(runId, following.get(runId) ?? 'queued');
        void ended.finally(() => following.delete(runId)).catch(() => undefined);
        return followRun({
          runId,
          agentId: binding.agentId,
          ended,
          // Read once the agent's steps are all told here: none committed after the read goes unheard.
          entries: async () => {
            await followed(binding.agentId);
            return runtime.journal(runId);
          },
          live$: events$,
          status: () => following.get(runId) ?? 'queued',
          approve: (toolCallIds) => runtime.approve(runId, toolCallIds),
          reject: (reason, toolCallIds) => runtime.reject(runId, reason, toolCallIds),
          cancel: (reason) => runtime.cancel(runId, reason),
        });
      };
      let feed: Subject<JournalEntry> | undefined;
      const events$: Observable<JournalEntry> = new Observable<JournalEntry>((subscriber) => {
        feed ??= new Subject<JournalEntry>();
        const { agentId } = binding;
        feeds.set(agentId, feed);
        if (!held.has(agentId)) held.set(agentId, new HeldCalls());
        follows.count(agentId, 1);
        const sync = (): Promise<void> => listen().then((client) => follows.sync(client, agentId));
        void sync().catch((error: unknown) => subscriber.error(error));
        // Joined mid-call: the calls in flight so far first, then what comes.
        const calls = held.get(agentId);
        const following = concat(defer(() => from(calls?.entries() ?? [])), feed).pipe(liveFromStart()).subscribe(subscriber);
        return () => {
          following.unsubscribe();
          follows.count(agentId, -1);
          if (!follows.follows(agentId)) lingering.add(agentId);
        };
      });
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
      engine.strategies.set(id, { agentId: id, provider: definition.model ?? sub.provider, tool: async () => undefined, redact: sub.redact, redactStream: sub.redactStream, definition: definition as DurableStrategyDefinition });
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
        const run = await readResult(runId);
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
      clearInterval(checking);
      checking = undefined;
      lingering.clear();
      const client = listener;
      listener = undefined;
      for (const feed of feeds.values()) feed.complete();
      await client?.then((c) => c.end()).catch(() => undefined);
      await pool.end();
    },
  };
  engines.set(runtime, engine);
  return runtime;
}

type StoredResult = LoopResult | StrategyResult;

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

function parseRow(runId: string, { seq, line }: { seq: number; line: string }) {
  const parsed = parseLine(line);
  if (!parsed.ok) {
    throw DurableRunError.corruptRow(`Row actor_id=${runId}, seq=${seq} of ${SCHEMA}.log is corrupt (${parsed.reason}); it was left untouched.`, {
      table: `${SCHEMA}.log`,
      row: `actor_id=${runId}, seq=${seq}`,
      runId,
    });
  }
  return parsed.value;
}
