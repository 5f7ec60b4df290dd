/**
 * Run one piece of work with a deadline and a parent signal. The work gets its own signal that
 * aborts on timeout or when the parent aborts; the returned promise settles at that moment even
 * if the work ignores its signal, so a hung tool can never hang the loop.
 *
 * The work's signal is created on first read: an AbortSignal is dear to make and slow to
 * collect, and most tools never look at theirs. Work that answers synchronously
 * cannot time out, so it gets no timer and no listener either.
 */
import type { Cancellation } from '../core/run.ts';

export type TimedResult<T> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly timedOut: boolean; readonly error: unknown };

/**
 * @example
 * ```ts
 * const r = await runWithTimeout((signal) => fetch(url, { signal: signal() }), 5_000, runSignal);
 * if (!r.ok && r.timedOut) console.log('too slow');
 * ```
 */
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

/**
 * The work's abort controller, created on first read of its signal. A class rather than two
 * closures per call: under tsx (esbuild keepNames) every named closure costs an
 * Object.defineProperty each time it is created.
 */
class LazyAbort {
  #controller: AbortController | undefined;
  #aborted: { readonly reason: unknown } | undefined;

  signal(): AbortSignal {
    if (this.#controller === undefined) {
      this.#controller = new AbortController();
      // Aborted before anyone looked: whoever looks now sees it aborted, with the reason.
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
