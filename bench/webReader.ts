/**
 * The page of bench/webProcess.ts, in a process of its own: reads each run it is sent over HTTP with
 * the plain `fetch` reader of the other web rows, checks the reassembled text, and answers with its
 * count of text events (or why the check failed); a ping it answers at once.
 */
import { check, readStream, type Protocol } from './webRuns.ts';

export interface ReadOrder {
  readonly url: string;
  readonly protocol: Protocol;
  readonly task: string;
  readonly id: string;
  readonly tokens: number;
}

/** Answered at once: what an order and its answer cost the server, with no HTTP. */
export interface Ping {
  readonly ping: true;
}

export type ReadAnswer = { readonly deltas: number } | { readonly error: string };

const answer = (message: ReadAnswer) => process.send?.(message);

process.on('message', (order: ReadOrder | Ping) => {
  if ('ping' in order) return void answer({ deltas: 0 });
  readStream(fetch, order.url, order.protocol, order.task, order.id)
    .then((got) => {
      check(`${order.protocol} read by a page in its own process`, order.task, order.tokens, got, true);
      return got.deltas;
    })
    .then(
      (deltas) => answer({ deltas }),
      (error: unknown) => answer({ error: error instanceof Error ? error.message : String(error) }),
    );
});
