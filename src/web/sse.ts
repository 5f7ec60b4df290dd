// An event id is `<entry sequence>.<index among the entry's events>`, so a page that reconnects with
// `Last-Event-ID` gets exactly the events after it. A worker's live delta, in no journal, adds how much of
// the live message the page has (`12.3.t457`, `12.3.r20t457`, `12.3.r20e` once its reasoning ended): the reconnect goes on from there.
import type { Observable } from 'rxjs';
import type { JournalEntry } from '../core/loopEvent.ts';
import { describeError } from '../core/errors.ts';
import { WebRequestError } from './errors.ts';
import { FeedPump, MAX_ENTRIES_AHEAD } from './feedPump.ts';
import { FrameQueue } from './frameQueue.ts';
import { liveDelta } from '../events/liveDeltas.ts';
import type { LiveMark } from '../events/sentText.ts';
import type { StreamEncoder, WebProtocol } from './protocol.ts';

export interface EventCursor {
  readonly sequence: number;
  readonly index: number;
  /** How much of a live message (after the entry) the page has. */
  readonly mark?: LiveMark;
}

export function parseEventId(value: string | null): EventCursor | undefined {
  if (value === null || value.trim() === '') return undefined;
  const match = /^(\d{1,15})\.(\d{1,6})(?:\.(.*))?$/.exec(value.trim());
  const mark = match?.[3] === undefined ? undefined : parseMark(match[3]);
  if (match === null || mark === null) throw new WebRequestError(400, `Last-Event-ID "${value.slice(0, 40)}" is not an event id of this stream (they look like 12.0 or 12.0.t40); reconnect without it to get the run from its start.`);
  const cursor = { sequence: Number(match[1]), index: Number(match[2]) };
  return mark === undefined ? cursor : { ...cursor, mark };
}

/** A live mark as an id writes it (`r20t457`, `t4`, `r20e`); `null` when it is none. */
export function parseMark(text: string): LiveMark | null {
  const match = /^(?:r(\d{1,12})(e)?)?(?:t(\d{1,12}))?$/.exec(text);
  if (match === null || text === '') return null;
  const [, reasoning, ended, characters] = match;
  if (ended !== undefined && characters !== undefined) return null;
  return { ...(reasoning === undefined ? {} : { reasoning: Number(reasoning) }), ...(ended === undefined ? {} : { ended: true }), ...(characters === undefined ? {} : { text: Number(characters) }) };
}

export const markText = (mark: LiveMark): string =>
  `${mark.reasoning === undefined ? '' : `r${mark.reasoning}${mark.ended === true ? 'e' : ''}`}${mark.text === undefined ? '' : `t${mark.text}`}`;

export const SSE_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache, no-transform',
  connection: 'keep-alive',
  // Proxies such as nginx would otherwise hold events back until their buffer fills.
  'x-accel-buffering': 'no',
} as const;

/**
 * Every entry is encoded, since the encoder's state needs them all. Text deltas that wait for a
 * slow reader join (`protocol.deltas`), at most one chunk an event-loop turn.
 */
export function sseBody<TEvent>(
  feed: Observable<JournalEntry>,
  encoderFor: () => StreamEncoder<TEvent>,
  protocol: Pick<WebProtocol<TEvent>, 'frame' | 'deltas'>,
  after: EventCursor | undefined,
  signal: AbortSignal,
  maxAhead = MAX_ENTRIES_AHEAD,
): ReadableStream<Uint8Array> {
  const waiting = new FrameQueue(protocol);
  let cursorSequence = after === undefined ? -1 : after.sequence;
  let cursorIndex = after === undefined ? -1 : after.index;
  let encodedUpTo = -1;
  const pump = new FeedPump(maxAhead);
  /** What a page has of a live message, given to the encoder at the first entry past `resumeAfter`. */
  let resume = after?.mark;
  let resumeAfter = after === undefined ? -1 : after.sequence;
  let encoder: StreamEncoder<TEvent> | undefined;

  /**
   * The encoder's last event is the last that waits, with its id: a token it says continues that event
   * (`continueText`) joins it as text alone.
   */
  let continuing = false;
  // A sequence of -1 is an event without an id.
  const queue = (sequence: number, index: number, event: TEvent): void => {
    continuing = false;
    waiting.pushAt(sequence, index, event);
  };
  /**
   * A worker's streamed delta is in no journal: each event's id is the committed cursor and how much of the live
   * message the page has with it, from which a reconnect goes on (the call's catch-up or its reply).
   */
  const sendLive = (encoder: StreamEncoder<TEvent>, events: readonly (TEvent | undefined)[]): void => {
    const last = events.findLastIndex((event) => event !== undefined);
    if (last < 0) return;
    for (let index = 0; index <= last; index++) {
      const event = events[index];
      if (event === undefined) continue;
      // A start before the text: a page that has only it resumes without a second one.
      const mark = index === last ? encoder.mark?.() : encoder.markAt?.(index);
      continuing = false;
      waiting.push(mark === undefined || cursorSequence < 0 ? undefined : `${cursorSequence}.${cursorIndex}.${markText(mark)}`, event);
    }
    pump.queued();
  };
  const resumeId = (): string => (cursorSequence < 0 ? '(none)' : `${cursorSequence}.${cursorIndex}`);
  const follow = (): void => {
    // Followed again from the start: what the page will have once it read what waits is the old encoder's.
    if (encoder !== undefined) {
      resume = encoder.mark?.();
      resumeAfter = encodedUpTo;
    }
    const following = encoderFor();
    encoder = following;
    continuing = false;
    const replayUpTo = encodedUpTo;
    let first = true;
    pump.follow(() =>
      feed.subscribe({
        next(entry) {
          if (!pump.following) return;
          // A run whose first entries this process no longer holds cannot be encoded again here.
          if (first && replayUpTo >= 0 && entry.sequence !== 0) {
            queue(-1, 0, following.failure(`The stream fell behind and the run's first entries are no longer held here. Reconnect with Last-Event-ID ${resumeId()} to go on.`, 'web_stream'));
            return pump.finish();
          }
          first = false;
          const { sequence } = entry;
          const live = liveDelta(entry) !== undefined;
          if (resume !== undefined && (live ? sequence >= resumeAfter : sequence > resumeAfter)) {
            following.resume?.(resume);
            resume = undefined;
          }
          // A streamed token after the delta that waits: past the cursor and the replay, as that delta was.
          const text = continuing && waiting.continuable && !live ? following.continueText?.(entry) : undefined;
          if (text !== undefined) {
            cursorSequence = sequence;
            cursorIndex = 0;
            waiting.continueAt(sequence, 0, text);
            encodedUpTo = sequence;
            return pump.queued();
          }
          const events = following.encode(entry);
          if (live) return sendLive(following, events);
          if (entry.sequence <= replayUpTo) {
            if (events.length > 0) continuing = false;
            return;
          }
          let queued = false;
          // A committed entry while a live message is open (rare) keeps the page's mark of it.
          const mark = following.mark?.();
          for (let index = 0; index < events.length; index++) {
            const event = events[index];
            if (event === undefined || sequence < cursorSequence || (sequence === cursorSequence && index <= cursorIndex)) continue;
            cursorSequence = sequence;
            cursorIndex = index;
            if (mark === undefined) queue(sequence, index, event);
            else {
              continuing = false;
              waiting.push(`${sequence}.${index}.${markText(mark)}`, event);
            }
            queued = true;
          }
          // Whether the encoder's last event is the one that waits last.
          if (events.length > 0) continuing = queued && mark === undefined && cursorSequence === sequence && cursorIndex === events.length - 1;
          encodedUpTo = entry.sequence;
          // An entry before the cursor was answered already: the stream goes on past it.
          if (following.endsResponse?.(entry) === true && (after === undefined || entry.sequence > after.sequence)) return pump.finish();
          if (queued) pump.queued();
        },
        error(error: unknown) {
          if (!pump.following) return;
          // No id: a page that reconnects after it resumes where the last good event left it.
          queue(-1, 0, following.failure(`Reading run's journal failed: ${describeError(error)}. Reconnect with Last-Event-ID ${resumeId()} to go on.`, 'web_stream'));
          pump.finish();
        },
        complete() {
          // A feed completes after the stream stopped following it when it replays to the end at once.
          if (pump.following) pump.finish();
        },
      }),
    );
  };

  return pump.body(
    {
      follow,
      waiting: () => waiting.waiting,
      take: () => {
        continuing = false;
        return waiting.take();
      },
    },
    signal,
  );
}
