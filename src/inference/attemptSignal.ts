/** Kept apart from the caller's signal so a timeout (ours to retry) is never confused with a cancellation. */
import { InferenceError } from './errors.ts';

/** The timer runs only while we wait on the server, so a slow consumer of a stream is not mistaken for a silent server. */
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

  get timedOut(): boolean {
    return this.#timedOut;
  }

  touch(): void {
    clearTimeout(this.#timer);
    if (this.#controller.signal.aborted) return;
    this.#timer = setTimeout(() => {
      this.#timedOut = true;
      this.#controller.abort(new DOMException(`No reply within ${this.#timeoutMs} ms`, 'TimeoutError'));
    }, this.#timeoutMs);
  }

  pause(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  dispose(): void {
    this.pause();
    this.#parent?.removeEventListener('abort', this.#forward);
  }
}

export function attemptFailure(error: unknown, attempt: AttemptSignal, signal: AbortSignal | undefined, timeoutMs: number, classify: (error: unknown) => unknown): unknown {
  if (signal?.aborted) return signal.reason;
  if (attempt.timedOut) return InferenceError.timeout(timeoutMs, { cause: error });
  return classify(error);
}
