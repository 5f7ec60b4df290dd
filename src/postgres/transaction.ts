import type pg from 'pg';

export async function transaction<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken = false;
  try {
    await client.query('BEGIN');
    const value = await work(client);
    await client.query('COMMIT');
    return value;
  } catch (error) {
    // A connection that cannot even roll back is dropped, not handed to the next caller.
    await client.query('ROLLBACK').catch(() => (broken = true));
    throw error;
  } finally {
    client.release(broken);
  }
}

const CONNECTION_CODES = new Set(['ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', '57P01', '57P02', '57P03', '08000', '08001', '08003', '08004', '08006']);

/** The server went away or is starting (a restart), not that the work was wrong. */
export function isConnectionError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && CONNECTION_CODES.has(code)) return true;
  const message = error instanceof Error ? error.message : '';
  return /Connection terminated|connection to server|Client has encountered a connection error|the database system is (starting up|shutting down|in recovery mode)/i.test(message);
}

/** Waits longer each time, up to `patienceMs` in all; other errors, and the last one, go to the caller. */
export async function whileReconnecting<T>(work: () => Promise<T>, options: { readonly patienceMs?: number; readonly signal?: AbortSignal } = {}): Promise<T> {
  const deadline = Date.now() + (options.patienceMs ?? 300_000);
  for (let attempt = 0; ; attempt++) {
    try {
      return await work();
    } catch (error) {
      if (!isConnectionError(error) || Date.now() >= deadline || options.signal?.aborted === true) throw error;
      await new Promise((resolve) => setTimeout(resolve, Math.min(250 * 2 ** attempt, 5_000)));
    }
  }
}
