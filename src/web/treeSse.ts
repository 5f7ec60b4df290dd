// Runs interleave in arrival order, so one position cannot say what a page has: an event id is a vector
// cursor of every run's position, keyed by its place in the tree (`12.3,1@4.0,1-1@2.5`), with how much of
// a live message a run streams the page has (`1@4.0.t457`, as a single run's id says it).
import type { Observable } from 'rxjs';
import { describeError } from '../core/errors.ts';
import type { JournalEntry } from '../core/loopEvent.ts';
import { WebRequestError } from './errors.ts';
import type { StreamEncoder, SubRun, TreeWaits, WebProtocol } from './protocol.ts';
import type { RunKey, TreeEntry } from './runTree.ts';
import { FeedPump, MAX_ENTRIES_AHEAD } from './feedPump.ts';
import { FrameQueue } from './frameQueue.ts';
import { liveDelta } from '../events/liveDeltas.ts';
import type { LiveMark } from '../events/sentText.ts';
import { markText, parseMark, type EventCursor } from './sse.ts';

/**
 * A run's position; with `opened`, the page has the events before `index` and that many of those a wait's end closed
 * and its run opened again before the event at `index` (a live event's: after `index`).
 */
export interface TreePosition extends EventCursor {
  readonly opened?: number;
}

/** Runs absent from it resume from their first event. */
export type TreeCursor = ReadonlyMap<RunKey, TreePosition>;

/** An index as long as a safe integer: a stream resumed after a wait starts past every index of the wait's entry. */
const POSITION = /^(\d{1,15})\.(\d{1,16})(?:\.([^o]*))?(?:o(\d{1,6}))?$/;
const KEY = /^[1-9]\d{0,5}(?:-[1-9]\d{0,5}){0,31}$/;
/** More sub-runs than a page could have been sent: a value past it is no id of this handler. */
const MAX_RUNS = 1_000;

function position(text: string, value: string): TreePosition {
  const match = POSITION.exec(text);
  const mark = match?.[3] === undefined ? undefined : parseMark(match[3]);
  if (match === null || mark === null) throw refused(value);
  return { sequence: Number(match[1]), index: Number(match[2]), ...(mark === undefined ? {} : { mark }), ...(match[4] === undefined ? {} : { opened: Number(match[4]) }) };
}

const refused = (value: string): WebRequestError =>
  new WebRequestError(400, `Last-Event-ID "${value.slice(0, 40)}" is not an event id of this stream (they look like 12.0 or 12.0,1@3.2); reconnect without it to get the run from its start.`);

export function parseTreeEventId(value: string | null): TreeCursor | undefined {
  if (value === null || value.trim() === '') return undefined;
  const parts = value.trim().split(',');
  if (parts.length > MAX_RUNS) throw refused(value);
  const cursor = new Map<RunKey, TreePosition>();
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

/** Alone, the served run's position is a single run's id. */
export function formatTreeEventId(cursor: TreeCursor): string {
  const at = (p: TreePosition): string => `${p.sequence}.${p.index}${p.mark === undefined ? '' : `.${markText(p.mark)}`}${p.opened === undefined ? '' : `o${p.opened}`}`;
  const root = cursor.get('');
  const subs = [...cursor].filter(([key]) => key !== '').map(([key, p]) => `${key}@${at(p)}`);
  return [root === undefined ? '' : at(root), ...subs].join(',');
}

/**
 * A response that ended at a wait ended every part open then: each run goes on with none of what opens its parts again
 * yet (`o0`), a live message with the text the page lacks.
 */
const stopped = (cursor: TreeCursor): Map<RunKey, TreePosition> =>
  new Map([...cursor].map(([key, p]) => [key, { sequence: p.sequence, index: p.opened === undefined ? p.index + 1 : p.index, ...(p.mark === undefined ? {} : { mark: p.mark }), opened: 0 }]));

/** `rank`: the place of an event among those opened again before the event at `index` (`TreeCursor`'s `opened`); absent, that event. */
const isAfter = (sequence: number, index: number, cursor: TreePosition | undefined, rank = Infinity): boolean =>
  cursor === undefined || sequence > cursor.sequence || (sequence === cursor.sequence && (index > cursor.index || (index === cursor.index && rank > (cursor.opened ?? Infinity))));

export interface TreeStops<TEvent> {
  /** Made anew each time the tree is followed from its start. Absent: only the served run's waits end the response. */
  readonly waits?: () => TreeWaits<TEvent>;
  /** Told where every run stood when a wait ended the response: the page's next request goes on from there. */
  readonly onEnd?: (at: TreeCursor, wait: JournalEntry) => void;
  /** A sub-run's wait whose response the page has to its end, still unanswered: reached, it ends this one the same way. */
  readonly again?: JournalEntry;
}

/** As `sseBody`, with one encoder per run; a reader `maxAhead` behind is followed again from each run's start. */
export function treeSseBody<TEvent>(
  feed: Observable<TreeEntry>,
  encoderOf: (sub: SubRun | undefined) => StreamEncoder<TEvent>,
  protocol: Pick<WebProtocol<TEvent>, 'frame' | 'attribute' | 'deltas'>,
  after: TreeCursor | undefined,
  signal: AbortSignal,
  maxAhead = MAX_ENTRIES_AHEAD,
  stops: TreeStops<TEvent> = {},
): ReadableStream<Uint8Array> {
  const waiting = new FrameQueue(protocol);
  /** Each run's last event queued: a new subscription sends only what comes after it. */
  const at = new Map<RunKey, TreePosition>(after ?? []);
  let followed = 0;
  const pump = new FeedPump(maxAhead);

  const queue = (id: string | undefined, event: TEvent): void => waiting.push(id, event);
  /** Whether this reading has sent the page anything. */
  let sent = false;
  /** Each sub-run's key in the tree, by its run id. */
  let keys = new Map<string, RunKey>();
  /** How many events each run had opened again since the last wait's end in this reading. */
  let reopened = new Map<RunKey, number>();
  /**
   * What a wait's end closed, opened again before a run's next event, each in its own run's places as the how-many-th
   * it opened again (`opened`), whichever run's event it goes before on this reading. A run whose position says no
   * such count had an event since the wait's end, so had them all. Before a committed event of its run (`before`), it
   * takes that event's place; else, the place after its run's position.
   */
  const reopen = (key: RunKey, before: EventCursor | undefined, events: readonly TEvent[], waits: TreeWaits<TEvent>): boolean => {
    let queued = false;
    for (const event of events) {
      const runId = waits.owner?.(event);
      const owner = runId === undefined ? key : runId === '' ? '' : (keys.get(runId) ?? key);
      const rank = (reopened.get(owner) ?? 0) + 1;
      reopened.set(owner, rank);
      const position = at.get(owner);
      if (position !== undefined && (position.opened === undefined || rank <= position.opened)) continue;
      const place = position === undefined ? undefined : owner === key && before !== undefined && isAfter(before.sequence, before.index, position, rank) ? before : position;
      if (place !== undefined) at.set(owner, { sequence: place.sequence, index: place.index, opened: rank, ...(position?.mark === undefined || position.sequence !== place.sequence ? {} : { mark: position.mark }) });
      queue(place === undefined ? undefined : formatTreeEventId(at), event);
      queued = sent = true;
    }
    return queued;
  };
  /**
   * A worker's streamed delta is in no journal: each event's id leaves its run's position where it is, with how much
   * of the live message the page has with it (`StreamEncoder.markAt`), from which a reconnect goes on.
   */
  const sendLive = (key: RunKey, encoder: StreamEncoder<TEvent>, own: readonly (TEvent | undefined)[], sub: SubRun | undefined, waits: TreeWaits<TEvent> | undefined): void => {
    const last = own.findLastIndex((event) => event !== undefined);
    let queued = false;
    for (let index = 0; index <= last; index++) {
      const event = own[index];
      const shown = event === undefined || sub === undefined ? event : protocol.attribute?.(event, sub);
      if (shown === undefined) continue;
      const out = waits === undefined ? [shown] : waits.pass(shown, true);
      if (out.length > 1) reopen(key, undefined, out.slice(0, -1), waits as TreeWaits<TEvent>);
      const position = at.get(key);
      let id: string | undefined;
      if (position !== undefined) {
        const mark = index === last ? encoder.mark?.() : encoder.markAt?.(index);
        at.set(key, { sequence: position.sequence, index: position.opened === undefined ? position.index : position.index - 1, ...(mark === undefined ? {} : { mark }) });
        id = formatTreeEventId(at);
      }
      queue(id, out[out.length - 1] as TEvent);
      queued = sent = true;
    }
    if (queued) pump.queued();
  };
  /** The starts of the parts an encoder went on with for a page that had them (`StreamEncoder.resumedStarts`): the waits know them open. */
  const resumedStarts = (key: RunKey, encoder: StreamEncoder<TEvent>, sub: SubRun | undefined, waits: TreeWaits<TEvent>): TEvent[] | undefined => {
    const starts = encoder.resumedStarts?.() ?? [];
    if (starts.length === 0) return undefined;
    // Ended at a wait and not all opened again since, the part opens again before the run's next event.
    const closed = at.get(key)?.opened !== undefined;
    const reopened: TEvent[] = [];
    for (const start of starts) {
      const shown = sub === undefined ? start : protocol.attribute?.(start, sub);
      if (shown === undefined) continue;
      if (closed && waits.closed !== undefined) waits.closed(shown);
      else reopened.push(...waits.pass(shown, false).slice(0, -1));
    }
    return reopened;
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
    const seen = new Set<RunKey>();
    sent = false;
    keys = new Map();
    reopened = new Map();
    /** Runs resumed whose encoder may still give the starts the page had. */
    const resuming = new Set<RunKey>();
    /** The live message each run had open where the page is: its encoder goes on from there (`StreamEncoder.resume`). */
    const resumes = new Map([...at].flatMap(([key, p]): [RunKey, EventCursor & { mark: LiveMark }][] => (p.mark === undefined ? [] : [[key, { ...p, mark: p.mark }]])));
    const again = followed++ > 0;
    const waits = stops.waits?.();
    pump.follow(() =>
      feed.subscribe({
        next({ key, entry, sub }) {
          if (!pump.following) return;
          const encoder = encoderFor(key, sub);
          // Followed again, a run whose first entries are no longer held cannot be encoded again here.
          if (again && !seen.has(key) && entry.sequence !== 0) {
            queue(undefined, encoderFor('', undefined).failure(`The stream fell behind and a run's first entries are no longer held here. Reconnect with Last-Event-ID ${idOf(at)} to go on.`, 'web_stream'));
            return pump.finish();
          }
          if (sub !== undefined && !seen.has(key)) keys.set(sub.runId, key);
          seen.add(key);
          const live = liveDelta(entry) !== undefined;
          const resume = resumes.get(key);
          if (resume !== undefined && (live ? entry.sequence >= resume.sequence : entry.sequence > resume.sequence)) {
            encoder.resume?.(resume.mark);
            resumes.delete(key);
            if (waits !== undefined) resuming.add(key);
          }
          const own = encoder.encode(entry);
          // What a later wait closes, and what a wait before opens again first, though the page has the start.
          const held = resuming.has(key) ? resumedStarts(key, encoder, sub, waits as TreeWaits<TEvent>) : undefined;
          if (held !== undefined) resuming.delete(key);
          if (held !== undefined && reopen(key, undefined, held, waits as TreeWaits<TEvent>)) pump.queued();
          if (live) return sendLive(key, encoder, own, sub, waits);
          const from = at.get(key);
          // A wait sent before was answered already: it ends no response now.
          const ends = encoder.endsResponse?.(entry) === true && (from === undefined || entry.sequence > from.sequence);
          // Every event is seen, sent or not (the page may have it): what is open at a wait is known on every reading.
          const events: { readonly shown: TEvent | undefined; readonly held: boolean }[] = [];
          /** What a wait's end closed, opened again before the event at an index (`reopen`). */
          let reopens: Map<number, TEvent[]> | undefined;
          const see = (event: TEvent | undefined): void => {
            const shown = event === undefined || sub === undefined ? event : protocol.attribute?.(event, sub);
            if (shown === undefined || waits === undefined) return void events.push({ shown, held: event === undefined });
            const out = waits.pass(shown, isAfter(entry.sequence, events.length, from));
            if (out.length > 1) (reopens ??= new Map()).set(events.length, out.slice(0, -1));
            events.push({ shown: out[out.length - 1], held: false });
          };
          for (const event of own) see(event);
          // A wait the page saw before ends its part again only where this response has sent nothing yet: past that, the page went on.
          const repeat = stops.again !== undefined && entry.runId === stops.again.runId && entry.sequence === stops.again.sequence;
          const closing = sub !== undefined && encoder.endsResponse?.(entry) === true && (ends || repeat || !sent) ? waits?.suspend(own, sub) : undefined;
          if (closing !== undefined) reopened.clear();
          // Where the page has the wait's end already, its positions past it stand.
          if (closing !== undefined && (ends || repeat)) for (const [run, p] of stopped(at)) at.set(run, p);
          if (repeat && closing !== undefined) {
            for (const event of closing) queue(formatTreeEventId(at), event);
            return pump.finish();
          }
          for (const event of closing ?? []) events.push({ shown: event, held: false });
          let queued = false;
          // A committed entry while a live message is open (rare) keeps the page's mark of it.
          const mark = encoder.mark?.();
          for (let index = 0; index < events.length; index++) {
            const { shown, held } = events[index] as (typeof events)[number];
            const before = reopens?.get(index);
            if (before !== undefined && reopen(key, { sequence: entry.sequence, index }, before, waits as TreeWaits<TEvent>)) queued = true;
            if (held || !isAfter(entry.sequence, index, from)) continue;
            at.set(key, mark === undefined || closing !== undefined ? { sequence: entry.sequence, index } : { sequence: entry.sequence, index, mark });
            if (shown !== undefined) {
              queue(formatTreeEventId(at), shown);
              queued = sent = true;
            }
          }
          // The served run's waits end a response, and a sub-run's when the protocol ends the served run's part there.
          if (ends && (sub === undefined || closing !== undefined)) {
            stops.onEnd?.(stopped(at).set(key, { sequence: entry.sequence, index: Number.MAX_SAFE_INTEGER, opened: 0 }), entry);
            return pump.finish();
          }
          if (queued) pump.queued();
        },
        error(error: unknown) {
          if (!pump.following) return;
          queue(undefined, encoderFor('', undefined).failure(`Reading a run's journal failed: ${describeError(error)}. Reconnect with Last-Event-ID ${idOf(at)} to go on.`, 'web_stream'));
          pump.finish();
        },
        complete() {
          if (pump.following) pump.finish();
        },
      }),
    );
  };

  return pump.body(
    {
      follow,
      waiting: () => waiting.waiting,
      take: () => waiting.take(),
    },
    signal,
  );
}

const idOf = (at: TreeCursor): string => (at.size === 0 ? '(none)' : formatTreeEventId(at));
