/**
 * Run one piece of work with a deadline and a parent signal. The work gets its own signal that
 * aborts on timeout or when the parent aborts; the returned promise settles at that moment even
 * if the work ignores its signal, so a hung tool can never hang the loop.
 *
 * The work's signal is created on first read: on Node 20 an AbortSignal costs microseconds and
 * is slow to collect, and most tools never look at theirs. Work that answers synchronously
 * cannot time out, so it gets no timer and no listener either.
 */

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
  parent: AbortSignal,
): Promise<TimedResult<T>> {
  if (parent.aborted) return Promise.resolve({ ok: false, timedOut: false, error: parent.reason });
  let controller: AbortController | undefined;
  let abortReason: { readonly reason: unknown } | undefined;
  const signal = (): AbortSignal => {
    if (controller === undefined) {
      controller = new AbortController();
      // Aborted before anyone looked: whoever looks now sees it aborted, with the reason.
      if (abortReason !== undefined) controller.abort(abortReason.reason);
    }
    return controller.signal;
  };
  const abort = (reason: unknown): void => {
    abortReason ??= { reason };
    controller?.abort(reason);
  };

  let pending: T | PromiseLike<T>;
  try {
    pending = work(signal);
  } catch (error) {
    return Promise.resolve({ ok: false, timedOut: false, error });
  }
  // The work may have cancelled the run itself; the cancellation wins, as it would have below.
  if (parent.aborted) {
    abort(parent.reason);
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
      abort(parent.reason);
      finish({ ok: false, timedOut: false, error: parent.reason });
    };
    const timer = setTimeout(() => {
      const reason = new Error(`timed out after ${timeoutMs} ms`);
      reason.name = 'TimeoutError';
      abort(reason);
      finish({ ok: false, timedOut: true, error: reason });
    }, timeoutMs);
    parent.addEventListener('abort', onParentAbort, { once: true });
    Promise.resolve(promised).then(
      (value) => finish({ ok: true, value }),
      (error: unknown) => finish({ ok: false, timedOut: false, error }),
    );
  });
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    (typeof value === 'object' || typeof value === 'function') &&
    value !== null &&
    typeof (value as { then?: unknown }).then === 'function'
  );
}
