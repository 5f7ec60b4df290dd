import { InferenceError } from './errors.ts';
/**
 * The AbortSignal of one attempt: the caller's signal plus this attempt's own timeout. Kept
 * separate so a timeout (ours to retry) is never confused with a cancellation (never retried).
 */

/**
 * One attempt's signal. The timer runs only while we wait on the server (`touch` … `pause`),
 * so a slow consumer of a stream is not mistaken for a silent server.
 *
 * @example
 * ```ts
 * const attempt = new AttemptSignal(request.signal, 30_000);
 * try { await fetch(url, { signal: attempt.signal }); }
 * catch (e) { if (attempt.timedOut) throw InferenceError.timeout(30_000); throw e; }
 * finally { attempt.dispose(); }
 * ```
 */
export class AttemptSignal {
  readonly #controller = new AbortController();
  readonly #parent: AbortSignal | undefined;
  readonly #timeoutMs: number;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #timedOut = false;
  readonly #forward = (): void => this.#controller.abort(this.#parent?.reason);

  constructor(parent: AbortSignal | undefined, timeoutMs: number) {
    this.#parent = parent;
    this.#timeoutMs = timeoutMs;
    if (parent?.aborted) this.#forward();
    else parent?.addEventListener('abort', this.#forward, { once: true });
    this.touch();
  }

  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /** True when this attempt was aborted by its own timer, not by the caller. */
  get timedOut(): boolean {
    return this.#timedOut;
  }

  /** (Re)start the timer: a full `timeoutMs` from now. */
  touch(): void {
    clearTimeout(this.#timer);
    if (this.#controller.signal.aborted) return;
    this.#timer = setTimeout(() => {
      this.#timedOut = true;
      this.#controller.abort(new DOMException(`No reply within ${this.#timeoutMs} ms`, 'TimeoutError'));
    }, this.#timeoutMs);
  }

  /** Stop the timer while the consumer, not the server, has the turn. */
  pause(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  /** Release the timer and the listener on the caller's signal. */
  dispose(): void {
    this.pause();
    this.#parent?.removeEventListener('abort', this.#forward);
  }
}

/** What an attempt failed with: the caller's abort reason, its timeout, or the provider's classified error. */
export function attemptFailure(error: unknown, attempt: AttemptSignal, signal: AbortSignal | undefined, timeoutMs: number, classify: (error: unknown) => unknown): unknown {
  if (signal?.aborted) return signal.reason;
  if (attempt.timedOut) return InferenceError.timeout(timeoutMs, { cause: error });
  return classify(error);
}
