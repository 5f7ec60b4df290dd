import type { Subscription } from 'rxjs';

export const MAX_ENTRIES_AHEAD = 4096;

/** The encoding side of a feed's stream: what it follows, and what waits for the reader. */
export interface PumpSource {
  /** Subscribe to the feed from its start (again, with fresh encoders), through `FeedPump.follow`. */
  follow(): void;
  /** True while something waits for the reader. */
  waiting(): boolean;
  /** What waits, framed; taken. */
  take(): string;
}

/**
 * A feed's events as a byte stream its reader pulls. A reader `maxAhead` entries behind is no
 * longer fed; once it caught up the feed is followed again from its start, so a slow page holds a
 * bounded amount.
 */
export class FeedPump {
  following = false;
  finished = false;
  #ahead = 0;
  #subscription: Subscription | undefined;
  #wake: (() => void) | undefined;

  constructor(private readonly maxAhead = MAX_ENTRIES_AHEAD) {}

  /** Subscribe with `subscribe`: `following` is set before the feed can call back. */
  follow(subscribe: () => Subscription): void {
    this.following = true;
    const subscription = subscribe();
    this.#subscription = subscription;
    // A replayed journal can end or pause the stream while `subscribe` is still running.
    if (!this.following) subscription.unsubscribe();
  }

  readonly stop = (): void => {
    this.following = false;
    this.#subscription?.unsubscribe();
  };

  readonly finish = (): void => {
    this.finished = true;
    this.stop();
    this.#wake?.();
  };

  /** An entry queued events for the reader. */
  queued(): void {
    if (++this.#ahead >= this.maxAhead) this.stop();
    this.#wake?.();
  }

  body(source: PumpSource, signal: AbortSignal): ReadableStream<Uint8Array> {
    const bytes = new TextEncoder();
    return new ReadableStream<Uint8Array>(
      {
        start: () => {
          signal.addEventListener('abort', this.finish, { once: true });
          if (signal.aborted) this.finished = true;
          else source.follow();
        },
        pull: async (controller) => {
          for (;;) {
            if (signal.aborted) return controller.close();
            if (source.waiting() || this.finished) break;
            // The reader took all that waited: feed it from the run again.
            if (!this.following) source.follow();
            else {
              await new Promise<void>((resolve) => (this.#wake = resolve));
              this.#wake = undefined;
            }
          }
          // What the rest of this event-loop turn brings (a model chunk's other tokens) joins this chunk.
          if (!this.finished) await nextTurn();
          if (signal.aborted) return controller.close();
          if (source.waiting()) {
            this.#ahead = 0;
            controller.enqueue(bytes.encode(source.take()));
          }
          if (this.finished) controller.close();
        },
        cancel: () => this.finish(),
      },
      // Nothing is encoded into the stream's own queue before a read: what waits can still be joined.
      { highWaterMark: 0 },
    );
  }
}

const nextTurn = (): Promise<void> => new Promise((resolve) => (typeof setImmediate === 'function' ? setImmediate(resolve) : setTimeout(resolve, 0)));
