/**
 * What one process hears from the database on its listening connection: which runs moved (step notices),
 * the calls workers stream to it, and when a run it waits for ends or waits for a human.
 */
import pg from 'pg';
import { concat, defer, from, Observable, Subject } from 'rxjs';
import type { JournalEntry } from '../core/loopEvent.ts';
import type { LoopResult } from '../core/run.ts';
import { liveFromStart } from '../events/liveDeltas.ts';
import { parseLine } from '../persistence/runLog.ts';
import { journalEntries } from '../persistence/runWriter.ts';
import type { StrategyResult } from '../strategies/result.ts';
import { CHANNEL } from './engine.ts';
import { DurableRunError } from './errors.ts';
import { SCHEMA } from './migrations.ts';
import { AgentFollows, FOLLOW_LINGER_MS, Lingering, parseStepNotice, type StepNotice } from './notices.ts';
import { FINAL } from './step.ts';
import { HeldCalls, noticeEntries, parseTokenNotice, TOKEN_CHANNEL } from './tokens.ts';
import { isConnectionError, whileReconnecting } from './transaction.ts';

export type StoredResult = LoopResult | StrategyResult;

/** Covers a notice lost with a connection. */
const CHECK_EVERY_MS = 5_000;

export interface Hearing {
  /** The listening connection, opened on first need and again after the database comes back. */
  listen(): Promise<pg.Client>;
  /** Resolves with the run's next notice that it ended or waits for a human (or the listener's loss). */
  nextNotice(runId: string): { readonly news: Promise<void>; stop(): void };
  /** The run's stored result once it has one; the wait goes on through a database restart. */
  finished(runId: string): Promise<StoredResult>;
  /** The status last heard of each run followed in this process, until `ended` settles. */
  track(runId: string, ended: Promise<unknown>): void;
  status(runId: string): string;
  /** An agent's journal entries as its steps commit them, with the calls its workers stream; one per agent. */
  events$(agentId: string): Observable<JournalEntry>;
  /** Resolves once the agent's steps and streamed calls are all told here, if it has subscribers (at once if not, or the listener failed). */
  followed(agentId: string): Promise<void>;
  close(): Promise<void>;
}

export function createHearing(pool: pg.Pool, connectionString: string, followLingerMs = FOLLOW_LINGER_MS): Hearing {
  let listener: Promise<pg.Client> | undefined;
  /** The agents whose events this process follows, told to steps and workers by locks on the listener. */
  const follows = new AgentFollows();
  // The last subscriber of an agent left: steps stop notifying and workers stop publishing to this process, unless one comes back first.
  const lingering = new Lingering(followLingerMs, (agentId) => {
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
      await whileReconnecting(listen);
      // Listening before reading: a notice that arrives while the row is read is not lost.
      const notice = nextNotice(runId);
      try {
        const { status, result } = await whileReconnecting(() => readResult(pool, runId));
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

  const events$ = (agentId: string): Observable<JournalEntry> => {
    let feed: Subject<JournalEntry> | undefined;
    return new Observable<JournalEntry>((subscriber) => {
      feed ??= new Subject<JournalEntry>();
      feeds.set(agentId, feed);
      if (!held.has(agentId)) held.set(agentId, new HeldCalls());
      follows.count(agentId, 1);
      void listen()
        .then((client) => follows.sync(client, agentId))
        .catch((error: unknown) => subscriber.error(error));
      // Joined mid-call: the calls in flight so far first, then what comes.
      const calls = held.get(agentId);
      const subscription = concat(defer(() => from(calls?.entries() ?? [])), feed).pipe(liveFromStart()).subscribe(subscriber);
      return () => {
        subscription.unsubscribe();
        follows.count(agentId, -1);
        if (!follows.follows(agentId)) lingering.add(agentId);
      };
    });
  };

  return {
    listen,
    nextNotice,
    finished,
    track(runId, ended) {
      following.set(runId, following.get(runId) ?? 'queued');
      void ended.finally(() => following.delete(runId)).catch(() => undefined);
    },
    status: (runId) => following.get(runId) ?? 'queued',
    events$,
    async followed(agentId) {
      if (follows.follows(agentId)) await listen().then((client) => follows.sync(client, agentId)).catch(() => undefined);
    },
    async close() {
      clearInterval(checking);
      checking = undefined;
      lingering.clear();
      const client = listener;
      listener = undefined;
      for (const feed of feeds.values()) feed.complete();
      await client?.then((c) => c.end()).catch(() => undefined);
    },
  };
}

export async function readResult(pool: pg.Pool, runId: string): Promise<{ status: string; result: StoredResult | null }> {
  const found = await pool.query<{ status: string; result: StoredResult | null }>(`SELECT status, result FROM ${SCHEMA}.actors WHERE id = $1`, [runId]);
  const row = found.rows[0];
  if (row === undefined) throw new DurableRunError(`No durable run ${runId}.`, { runId });
  return row;
}

export function parseRow(runId: string, { seq, line }: { seq: number; line: string }) {
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
