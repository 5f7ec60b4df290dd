/**
 * A run's feed as a server-sent event body. Each event's id is `<sequence>.<index>`: the journal
 * sequence of the entry it came from and its place among that entry's events, so a page that
 * reconnects with `Last-Event-ID` gets exactly the events after it.
 */
import type { Observable, Subscription } from 'rxjs';
import type { JournalEntry } from '../core/loopEvent.ts';
import { describeError } from '../core/errors.ts';
import { WebRequestError } from './errors.ts';
import type { StreamEncoder, WebProtocol } from './protocol.ts';

/** Where a stream resumes: after the event with this id. */
export interface EventCursor {
  readonly sequence: number;
  readonly index: number;
}

/**
 * Read a `Last-Event-ID` value; `undefined` for none. Throws WebRequestError (400) for a value that
 * is no event id of this handler.
 *
 * @example
 * ```ts
 * parseEventId('12.1'); // { sequence: 12, index: 1 }
 * ```
 */
export function parseEventId(value: string | null): EventCursor | undefined {
  if (value === null || value.trim() === '') return undefined;
  const match = /^(\d{1,15})\.(\d{1,6})$/.exec(value.trim());
  if (match === null) throw new WebRequestError(400, `Last-Event-ID "${value.slice(0, 40)}" is not an event id of this stream (they look like 12.0); reconnect without it to get the run from its start.`);
  return { sequence: Number(match[1]), index: Number(match[2]) };
}

const isAfter = (sequence: number, index: number, cursor: EventCursor | undefined): boolean =>
  cursor === undefined || sequence > cursor.sequence || (sequence === cursor.sequence && index > cursor.index);

export const SSE_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache, no-transform',
  connection: 'keep-alive',
  // Proxies such as nginx would otherwise hold events back until their buffer fills.
  'x-accel-buffering': 'no',
} as const;

/**
 * The body of a stream of `feed`: every entry is encoded (the encoder's state needs them all),
 * the events after `after` are sent. Ends when the feed does; a page that goes away stops only
 * its stream, never the run.
 */
export function sseBody<TEvent>(
  feed: Observable<JournalEntry>,
  encoder: StreamEncoder<TEvent>,
  protocol: Pick<WebProtocol<TEvent>, 'frame'>,
  after: EventCursor | undefined,
  signal: AbortSignal,
): ReadableStream<Uint8Array> {
  const bytes = new TextEncoder();
  let subscription: Subscription | undefined;
  let lastId = after === undefined ? undefined : `${after.sequence}.${after.index}`;
  return new ReadableStream<Uint8Array>({
    start(controller) {
      let open = true;
      const close = (): void => {
        if (!open) return;
        open = false;
        subscription?.unsubscribe();
        controller.close();
      };
      const send = (id: string | undefined, event: TEvent): void => {
        if (open) controller.enqueue(bytes.encode(`${id === undefined ? '' : `id: ${id}\n`}${protocol.frame(event)}`));
      };
      signal.addEventListener('abort', close, { once: true });
      subscription = feed.subscribe({
        next(entry) {
          const events = encoder.encode(entry);
          for (let index = 0; index < events.length; index++) {
            const event = events[index];
            if (event === undefined || !isAfter(entry.sequence, index, after)) continue;
            lastId = `${entry.sequence}.${index}`;
            send(lastId, event);
          }
          // An entry before the cursor was answered already: the stream goes on past it.
          if (encoder.endsResponse?.(entry) === true && (after === undefined || entry.sequence > after.sequence)) close();
        },
        error(error: unknown) {
          // No id: a page that reconnects after it resumes where the last good event left it.
          send(undefined, encoder.failure(`Reading run's journal failed: ${describeError(error)}. Reconnect with Last-Event-ID ${lastId ?? '(none)'} to go on.`, 'web_stream'));
          close();
        },
        complete: close,
      });
      // A replayed journal can end the response while `subscribe` is still running.
      if (!open) subscription.unsubscribe();
      if (signal.aborted) close();
    },
    cancel() {
      subscription?.unsubscribe();
    },
  });
}
