// An event id is `<entry sequence>.<index among the entry's events>`, so a page that reconnects with
// `Last-Event-ID` gets exactly the events after it.
import type { Observable } from 'rxjs';
import type { JournalEntry } from '../core/loopEvent.ts';
import { describeError } from '../core/errors.ts';
import { WebRequestError } from './errors.ts';
import { FeedPump, MAX_ENTRIES_AHEAD } from './feedPump.ts';
import { FrameQueue } from './frameQueue.ts';
import { liveDelta } from '../events/liveDeltas.ts';
import type { StreamEncoder, WebProtocol } from './protocol.ts';

export interface EventCursor {
  readonly sequence: number;
  readonly index: number;
}

export function parseEventId(value: string | null): EventCursor | undefined {
  if (value === null || value.trim() === '') return undefined;
  const match = /^(\d{1,15})\.(\d{1,6})$/.exec(value.trim());
  if (match === null) throw new WebRequestError(400, `Last-Event-ID "${value.slice(0, 40)}" is not an event id of this stream (they look like 12.0); reconnect without it to get the run from its start.`);
  return { sequence: Number(match[1]), index: Number(match[2]) };
}

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
  // A worker's streamed delta is in no journal: without an id, a page that reconnects resumes from the journal, whose reply has its text.
  const sendLive = (events: readonly (TEvent | undefined)[]): void => {
    let queued = false;
    for (const event of events) {
      if (event === undefined) continue;
      queue(-1, 0, event);
      queued = true;
    }
    if (queued) pump.queued();
  };
  const resumeId = (): string => (cursorSequence < 0 ? '(none)' : `${cursorSequence}.${cursorIndex}`);
  const follow = (): void => {
    const encoder = encoderFor();
    continuing = false;
    const replayUpTo = encodedUpTo;
    let first = true;
    pump.follow(() =>
      feed.subscribe({
        next(entry) {
          if (!pump.following) return;
          // A run whose first entries this process no longer holds cannot be encoded again here.
          if (first && replayUpTo >= 0 && entry.sequence !== 0) {
            queue(-1, 0, encoder.failure(`The stream fell behind and the run's first entries are no longer held here. Reconnect with Last-Event-ID ${resumeId()} to go on.`, 'web_stream'));
            return pump.finish();
          }
          first = false;
          const { sequence } = entry;
          // A streamed token after the delta that waits: past the cursor and the replay, as that delta was.
          const text = continuing && waiting.continuable && liveDelta(entry) === undefined ? encoder.continueText?.(entry) : undefined;
          if (text !== undefined) {
            cursorSequence = sequence;
            cursorIndex = 0;
            waiting.continueAt(sequence, 0, text);
            encodedUpTo = sequence;
            return pump.queued();
          }
          const events = encoder.encode(entry);
          if (liveDelta(entry) !== undefined) return sendLive(events);
          if (entry.sequence <= replayUpTo) {
            if (events.length > 0) continuing = false;
            return;
          }
          let queued = false;
          for (let index = 0; index < events.length; index++) {
            const event = events[index];
            if (event === undefined || sequence < cursorSequence || (sequence === cursorSequence && index <= cursorIndex)) continue;
            cursorSequence = sequence;
            cursorIndex = index;
            queue(sequence, index, event);
            queued = true;
          }
          // Whether the encoder's last event is the one that waits last.
          if (events.length > 0) continuing = queued && cursorSequence === sequence && cursorIndex === events.length - 1;
          encodedUpTo = entry.sequence;
          // An entry before the cursor was answered already: the stream goes on past it.
          if (encoder.endsResponse?.(entry) === true && (after === undefined || entry.sequence > after.sequence)) return pump.finish();
          if (queued) pump.queued();
        },
        error(error: unknown) {
          if (!pump.following) return;
          // No id: a page that reconnects after it resumes where the last good event left it.
          queue(-1, 0, encoder.failure(`Reading run's journal failed: ${describeError(error)}. Reconnect with Last-Event-ID ${resumeId()} to go on.`, 'web_stream'));
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
