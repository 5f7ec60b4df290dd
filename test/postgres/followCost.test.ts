/**
 * What following a durable agent's tokens costs the database, counted (not timed): a model server
 * that sends each token only once the follower has the one before makes every notice carry one token,
 * so a run with a follower and the same run without one differ by a known number of transactions.
 */
import type { ServerResponse } from 'node:http';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createPostgresRuntime, runWorker } from '../../src/postgres/index.ts';
import { TOKEN_FLUSH_MS, TOKEN_LOCK } from '../../src/postgres/tokens.ts';
import { createAgentSystem } from '../../src/system/createAgentSystem.ts';
import { chunksFor, listenLocally, sseBytes } from '../support/openaiServer.ts';
import { freshDatabase, postgresMissing } from '../support/postgres.ts';
import { streamingAgent } from './fixtures/agents.ts';

const missing = postgresMissing();
const TOKENS = Array.from({ length: 40 }, (_, i) => `word${i} `);

/** Streams the reply; between tokens it waits for `next` (resolved at once when nobody gates). */
class PacedServer {
  #server: { close(): Promise<void> } | undefined;
  next: () => Promise<void> = () => Promise.resolve();
  tokens: readonly string[] = TOKENS;
  baseURL = '';

  async start(): Promise<void> {
    const server = await listenLocally((_body, response) => void this.#reply(response));
    this.#server = server;
    this.baseURL = server.baseURL;
  }

  async #reply(response: ServerResponse): Promise<void> {
    const tokens = this.tokens;
    const chunks = chunksFor({ textPieces: [...tokens], usage: { prompt_tokens: 10, completion_tokens: tokens.length, total_tokens: 10 + tokens.length } });
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    // The role chunk, then one text chunk at a time; the finish and usage chunks at the end.
    response.write(sseBytes([chunks[0]], { done: false }));
    for (const chunk of chunks.slice(1, 1 + tokens.length)) {
      response.write(sseBytes([chunk], { done: false }));
      await this.next();
    }
    response.end(sseBytes(chunks.slice(1 + tokens.length)));
  }

  close(): Promise<void> {
    return this.#server?.close() ?? Promise.resolve();
  }
}

/** The processes that hold an agent's follow lock. */
async function followLocks(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const found = await client.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND classid = $1::int4::oid AND granted`, [TOKEN_LOCK]);
    return found.rows[0]?.n ?? 0;
  } finally {
    await client.end();
  }
}

/** Committed and rolled back transactions of the database; read once every connection to it closed, as a backend reports its counts late. */
async function transactions(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    for (;;) {
      const found = await client.query<{ others: string; n: string }>(
        `SELECT (SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()) AS others,
                (SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = current_database()) AS n`,
      );
      await client.query('SELECT pg_stat_clear_snapshot()');
      if (Number(found.rows[0]?.others) === 0) return Number(found.rows[0]?.n);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  } finally {
    await client.end();
  }
}

describe.skipIf(missing !== '')('what following a durable agent’s tokens costs the database', () => {
  const server = new PacedServer();
  beforeAll(() => server.start());
  afterAll(() => server.close());

  /** One run of the streaming agent on a fresh database, a worker in this process; its transactions, and the deltas a follower got. */
  const oneRun = async (followed: boolean, tokens: readonly string[] = TOKENS): Promise<{ transactions: number; deltas: string[] }> => {
    const url = await freshDatabase('followcost');
    const runtime = createPostgresRuntime({ connectionString: url, migrate: true, poolSize: 4 });
    await runtime.migrate();
    const agent = streamingAgent(runtime, server.baseURL);
    // Long intervals: no poll or heartbeat adds a transaction while the run is on.
    const worker = await runWorker({ runtime, concurrency: 1, pollIntervalMs: 600_000, heartbeatMs: 600_000, staleAfterMs: 1_800_000 });
    const deltas: string[] = [];
    let arrived: () => void = () => undefined;
    const following = followed ? agent.tokens$.subscribe(({ delta }) => (deltas.push(delta), arrived())) : undefined;
    server.tokens = tokens;
    server.next = followed ? () => new Promise<void>((resolve) => (arrived = resolve)) : () => Promise.resolve();
    try {
      expect((await agent.run('Count to forty.', { runId: 'run-cost' })).text).toBe(tokens.join(''));
    } finally {
      following?.unsubscribe();
      await worker.stop();
      await runtime.close();
    }
    return { transactions: await transactions(url), deltas };
  };

  /** One run after a subscriber followed the agent and left, with no lingering: its locks let go (polled through `pg_locks`), tokens come flush windows apart. */
  const runAfterFollowerLeft = async (tokens: readonly string[]): Promise<number> => {
    const url = await freshDatabase('followcost');
    const runtime = createPostgresRuntime({ connectionString: url, migrate: true, poolSize: 4, followLingerMs: 0 });
    await runtime.migrate();
    const agent = streamingAgent(runtime, server.baseURL);
    const worker = await runWorker({ runtime, concurrency: 1, pollIntervalMs: 600_000, heartbeatMs: 600_000, staleAfterMs: 1_800_000 });
    server.tokens = tokens;
    server.next = () => new Promise<void>((resolve) => setTimeout(resolve, 3 * TOKEN_FLUSH_MS));
    try {
      const watching = agent.tokens$.subscribe(() => undefined);
      await vi.waitFor(() => expect(followLocks(url)).resolves.toBe(1), { timeout: 10_000 });
      watching.unsubscribe();
      await vi.waitFor(() => expect(followLocks(url)).resolves.toBe(0), { timeout: 10_000 });
      expect((await agent.run('Count to forty.', { runId: 'run-cost' })).text).toBe(tokens.join(''));
    } finally {
      await worker.stop();
      await runtime.close();
    }
    return transactions(url);
  };

  /** The same run asked of a system whose member the agent is, its worker in this process; `watched`: a subscriber follows the system's events$. */
  const systemRun = async (watched: boolean, tokens: readonly string[] = TOKENS): Promise<{ transactions: number; deltas: string[] }> => {
    const url = await freshDatabase('followcost');
    const runtime = createPostgresRuntime({ connectionString: url, migrate: true, poolSize: 4 });
    await runtime.migrate();
    const system = createAgentSystem({ runtime });
    system.spawn('streamer', streamingAgent(runtime, server.baseURL));
    const worker = await runWorker({ runtime, concurrency: 1, pollIntervalMs: 600_000, heartbeatMs: 600_000, staleAfterMs: 1_800_000 });
    const deltas: string[] = [];
    let arrived: () => void = () => undefined;
    const watching = watched
      ? system.events$.subscribe(({ event }) => event.type === 'token.delta' && (deltas.push(event.delta), arrived()))
      : undefined;
    server.tokens = tokens;
    // Unwatched, tokens come flush windows apart: a worker that published would send a notice for each.
    const apart = () => new Promise<void>((resolve) => setTimeout(resolve, 3 * TOKEN_FLUSH_MS));
    server.next = watched ? () => new Promise<void>((resolve) => (arrived = resolve)) : apart;
    try {
      // A watcher's follow lock is taken before the run starts, or its worker would find nobody to publish to.
      if (watched) await vi.waitFor(() => expect(followLocks(url)).resolves.toBe(1), { timeout: 10_000 });
      expect((await system.ask('streamer', 'Count to forty.', { timeoutMs: 60_000 })).text).toBe(tokens.join(''));
    } finally {
      watching?.unsubscribe();
      system.stopAll();
      await worker.stop();
      await runtime.close();
    }
    return { transactions: await transactions(url), deltas };
  };

  it('a worker whose system of durable agents nobody watches streams a long reply for the transactions of a one-token one, and a watcher of the system gets the deltas live', { timeout: 180_000 }, async () => {
    const short = await systemRun(false, TOKENS.slice(0, 1));
    const long = await systemRun(false, TOKENS.slice(0, 12));
    // The system follows its members only for a watcher: no process holds the lock, the worker publishes nothing.
    // A notice a token would be 11 more at least; two alike runs differ by up to 2 either way under load.
    expect(long.transactions - short.transactions).toBeLessThanOrEqual(5);
    // One token a notice, each sent only once the watcher had the one before.
    expect((await systemRun(true)).deltas).toEqual(TOKENS);
  });

  it("a process whose last follower of an agent left no longer makes workers publish that agent's calls", { timeout: 180_000 }, async () => {
    const short = await runAfterFollowerLeft(TOKENS.slice(0, 1));
    const long = await runAfterFollowerLeft(TOKENS.slice(0, 20));
    // A worker that still found a follower would send a notice a token, each about three transactions; the lock polls vary by a few.
    expect(long - short).toBeLessThanOrEqual(8);
  });

  it('a worker whose agent nobody follows streams a long reply for the transactions of a one-token one', { timeout: 120_000 }, async () => {
    const short = await oneRun(false, TOKENS.slice(0, 1));
    const long = await oneRun(false);
    // One statement at the first delta finds nobody follows; nothing more however many deltas come. A notice a token
    // would be 39 more at least; two alike runs differ by up to 2 either way under load.
    expect(long.transactions - short.transactions).toBeLessThanOrEqual(5);
  });

  it('a follower costs each notice one transaction to send it and one in each of the two listening connections, and reads the journal only for committed steps', { timeout: 120_000 }, async () => {
    const alone = await oneRun(false);
    const followed = await oneRun(true);
    // One token a notice, as the server paced them.
    expect(followed.deltas).toEqual(TOKENS);
    const notices = followed.deltas.length;
    const extra = followed.transactions - alone.transactions;
    // The notice's statement, and PostgreSQL's read of its queue in the worker's and the follower's listening connections.
    expect(extra).toBeGreaterThanOrEqual(notices);
    expect(extra).toBeLessThanOrEqual(3 * notices + 12);
  });
});
