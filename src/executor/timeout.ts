/**
 * The returned promise settles at the deadline even if the work ignores its signal, so a hung
 * tool never hangs the loop. Synchronous answers need no timer.
 */
import type { Cancellation } from '../core/run.ts';

export type TimedResult<T> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly timedOut: boolean; readonly error: unknown };

export function runWithTimeout<T>(
  work: (signal: () => AbortSignal) => T | PromiseLike<T>,
  timeoutMs: number,
  parent: Cancellation,
): Promise<TimedResult<T>> {
  if (parent.aborted) return Promise.resolve({ ok: false, timedOut: false, error: parent.reason });
  const lazy = new LazyAbort();
  let pending: T | PromiseLike<T>;
  try {
    pending = work(() => lazy.signal());
  } catch (error) {
    return Promise.resolve({ ok: false, timedOut: false, error });
  }
  // The work may have cancelled the run itself; the cancellation wins, as it would have below.
  if (parent.aborted) {
    lazy.abort(parent.reason);
    return Promise.resolve({ ok: false, timedOut: false, error: parent.reason });
  }
  if (!isThenable(pending)) return Promise.resolve({ ok: true, value: pending });
  const promised = pending;

  return new Promise<TimedResult<T>>((resolve) => {
    let settled = false;
    const finish = (result: TimedResult<T>) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      parent.removeEventListener('abort', onParentAbort);
      resolve(result);
    };
    const onParentAbort = () => {
      lazy.abort(parent.reason);
      finish({ ok: false, timedOut: false, error: parent.reason });
    };
    const timer = setTimeout(() => {
      const reason = new Error(`timed out after ${timeoutMs} ms`);
      reason.name = 'TimeoutError';
      lazy.abort(reason);
      finish({ ok: false, timedOut: true, error: reason });
    }, timeoutMs);
    parent.addEventListener('abort', onParentAbort, { once: true });
    Promise.resolve(promised).then(
      (value) => finish({ ok: true, value }),
      (error: unknown) => finish({ ok: false, timedOut: false, error }),
    );
  });
}

class LazyAbort {
  #controller: AbortController | undefined;
  #aborted: { readonly reason: unknown } | undefined;

  signal(): AbortSignal {
    if (this.#controller === undefined) {
      this.#controller = new AbortController();
      if (this.#aborted !== undefined) this.#controller.abort(this.#aborted.reason);
    }
    return this.#controller.signal;
  }

  abort(reason: unknown): void {
    this.#aborted ??= { reason };
    this.#controller?.abort(reason);
  }
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    (typeof value === 'object' || typeof value === 'function') &&
    value !== null &&
    typeof (value as { then?: unknown }).then === 'function'
  );
}
