/**
 * A run and its sub-runs as one server-sent event body. Entries of several runs interleave in
 * whatever order they arrived, so one position cannot say what a page has: each event's id is a
 * vector cursor, the position (`<sequence>.<index>`) of every run the page has events of, keyed
 * by the run's place in the tree — `12.3,1@4.0,1-1@2.5`. A page that reconnects with it gets each
 * run from its own position on: no event lost, none twice, whatever the interleaving was. A
 * stream with no sub-run (yet) has the single-run ids, `12.3`.
 */
import type { Observable, Subscription } from 'rxjs';
import { describeError } from '../core/errors.ts';
import { WebRequestError } from './errors.ts';
import type { StreamEncoder, SubRun, WebProtocol } from './protocol.ts';
import type { RunKey, TreeEntry } from './runTree.ts';
import { MAX_ENTRIES_AHEAD, type EventCursor } from './sse.ts';

/** Where a stream of a run tree resumes: each run after its own position; runs absent from it from their first event. */
export type TreeCursor = ReadonlyMap<RunKey, EventCursor>;

/** An index as long as a safe integer: a stream resumed after a wait starts past every index of the wait's entry. */
const POSITION = /^(\d{1,15})\.(\d{1,16})$/;
const KEY = /^[1-9]\d{0,5}(?:-[1-9]\d{0,5}){0,31}$/;
/** More sub-runs than a page could have been sent: a value past it is no id of this handler. */
const MAX_RUNS = 1_000;

function position(text: string, value: string): EventCursor {
  const match = POSITION.exec(text);
  if (match === null) throw refused(value);
  return { sequence: Number(match[1]), index: Number(match[2]) };
}

const refused = (value: string): WebRequestError =>
  new WebRequestError(400, `Last-Event-ID "${value.slice(0, 40)}" is not an event id of this stream (they look like 12.0 or 12.0,1@3.2); reconnect without it to get the run from its start.`);

/**
 * Read a `Last-Event-ID` of a run tree's stream (a single run's id too); `undefined` for none.
 * Throws WebRequestError (400) for a value that is no event id of this handler.
 *
 * @example
 * ```ts
 * parseTreeEventId('12.1,1@3.0'); // Map { '' => { sequence: 12, index: 1 }, '1' => { sequence: 3, index: 0 } }
 * ```
 */
export function parseTreeEventId(value: string | null): TreeCursor | undefined {
  if (value === null || value.trim() === '') return undefined;
  const parts = value.trim().split(',');
  if (parts.length > MAX_RUNS) throw refused(value);
  const cursor = new Map<RunKey, EventCursor>();
  const [root, ...subs] = parts;
  if (root !== undefined && root !== '') cursor.set('', position(root, value));
  for (const part of subs) {
    const at = part.indexOf('@');
    const key = part.slice(0, at);
    if (at < 0 || !KEY.test(key) || cursor.has(key)) throw refused(value);
    cursor.set(key, position(part.slice(at + 1), value));
  }
  if (cursor.size === 0) throw refused(value);
  return cursor;
}

/**
 * The id of an event sent at `cursor`: the served run's position first (alone, it is a single
 * run's id), then each sub-run's as `key@position`.
 *
 * @example
 * ```ts
 * formatTreeEventId(new Map([['', { sequence: 12, index: 1 }]])); // '12.1'
 * ```
 */
export function formatTreeEventId(cursor: TreeCursor): string {
  const at = (p: EventCursor): string => `${p.sequence}.${p.index}`;
  const root = cursor.get('');
  const subs = [...cursor].filter(([key]) => key !== '').map(([key, p]) => `${key}@${at(p)}`);
  return [root === undefined ? '' : at(root), ...subs].join(',');
}

const isAfter = (sequence: number, index: number, cursor: EventCursor | undefined): boolean =>
  cursor === undefined || sequence > cursor.sequence || (sequence === cursor.sequence && index > cursor.index);

/**
 * The body of a stream of a run tree: each run's entries are encoded by its own encoder (every
 * entry: the encoder's state needs them all), a sub-run's events are attributed to it by the
 * protocol, and each run's events after its position in `after` are sent. Ends when the tree
 * does, or at an entry of the served run that ends a response.
 *
 * Events wait until the reader pulls. A reader `maxAhead` entries behind is no longer fed: the
 * tree is dropped and followed again, with new encoders, once the reader has taken what waited
 * (each run is read again from its start and sent from where it stopped), so a slow page holds a
 * bounded amount.
 */
export function treeSseBody<TEvent>(
  feed: Observable<TreeEntry>,
  encoderOf: (sub: SubRun | undefined) => StreamEncoder<TEvent>,
  protocol: Pick<WebProtocol<TEvent>, 'frame' | 'attribute'>,
  after: TreeCursor | undefined,
  signal: AbortSignal,
  maxAhead = MAX_ENTRIES_AHEAD,
): ReadableStream<Uint8Array> {
  const bytes = new TextEncoder();
  /** Framed events waiting for the reader. */
  const waiting: string[] = [];
  /** Each run's last event queued: a new subscription sends only what comes after it. */
  const at = new Map<RunKey, EventCursor>(after ?? []);
  let ahead = 0;
  let followed = 0;
  let subscription: Subscription | undefined;
  let following = false;
  let finished = false;
  let wake: (() => void) | undefined;

  const queue = (id: string | undefined, event: TEvent): void => {
    waiting.push(`${id === undefined ? '' : `id: ${id}\n`}${protocol.frame(event)}`);
  };
  const stop = (): void => {
    following = false;
    subscription?.unsubscribe();
  };
  const finish = (): void => {
    finished = true;
    stop();
    wake?.();
  };
  const follow = (): void => {
    const encoders = new Map<RunKey, StreamEncoder<TEvent>>();
    const encoderFor = (key: RunKey, sub: SubRun | undefined): StreamEncoder<TEvent> => {
      const known = encoders.get(key);
      if (known !== undefined) return known;
      const made = encoderOf(sub);
      encoders.set(key, made);
      return made;
    };
    /** Runs this subscription has had entries of. */
    const seen = new Set<RunKey>();
    const again = followed++ > 0;
    following = true;
    subscription = feed.subscribe({
      next({ key, entry, sub }) {
        if (!following) return;
        const encoder = encoderFor(key, sub);
        // Followed again, a run whose first entries are no longer held cannot be encoded again here.
        if (again && !seen.has(key) && entry.sequence !== 0) {
          queue(undefined, encoderFor('', undefined).failure(`The stream fell behind and a run's first entries are no longer held here. Reconnect with Last-Event-ID ${idOf(at)} to go on.`, 'web_stream'));
          return finish();
        }
        seen.add(key);
        const events = encoder.encode(entry);
        const from = at.get(key);
        let queued = false;
        for (let index = 0; index < events.length; index++) {
          const event = events[index];
          if (event === undefined || !isAfter(entry.sequence, index, from)) continue;
          const shown = sub === undefined ? event : protocol.attribute?.(event, sub);
          at.set(key, { sequence: entry.sequence, index });
          if (shown !== undefined) {
            queue(formatTreeEventId(at), shown);
            queued = true;
          }
        }
        // Only the served run's waits end a response (the page answers those); one sent before was answered already.
        if (sub === undefined && encoder.endsResponse?.(entry) === true && (from === undefined || entry.sequence > from.sequence)) return finish();
        if (!queued) return;
        if (++ahead >= maxAhead) stop();
        wake?.();
      },
      error(error: unknown) {
        if (!following) return;
        queue(undefined, encoderFor('', undefined).failure(`Reading a run's journal failed: ${describeError(error)}. Reconnect with Last-Event-ID ${idOf(at)} to go on.`, 'web_stream'));
        finish();
      },
      complete() {
        if (following) finish();
      },
    });
    // A replayed journal can end or pause the stream while `subscribe` is still running.
    if (!following) subscription.unsubscribe();
  };

  return new ReadableStream<Uint8Array>(
    {
      start() {
        signal.addEventListener('abort', finish, { once: true });
        if (signal.aborted) finished = true;
        else follow();
      },
      async pull(controller) {
        for (;;) {
          if (signal.aborted) return controller.close();
          if (waiting.length > 0 || finished) break;
          // The reader took all that waited: feed it from the runs again.
          if (!following) follow();
          else {
            await new Promise<void>((resolve) => (wake = resolve));
            wake = undefined;
          }
        }
        if (waiting.length > 0) {
          const chunk = waiting.join('');
          waiting.length = 0;
          ahead = 0;
          controller.enqueue(bytes.encode(chunk));
        }
        if (finished) controller.close();
      },
      cancel() {
        finish();
      },
    },
    // Nothing is encoded into the stream's own queue before a read.
    { highWaterMark: 0 },
  );
}

const idOf = (at: TreeCursor): string => (at.size === 0 ? '(none)' : formatTreeEventId(at));
