/**
 * Run one piece of work with a deadline and a parent signal. The work gets its own signal that
 * aborts on timeout or when the parent aborts; the returned promise settles at that moment even
 * if the work ignores its signal, so a hung tool can never hang the loop.
 */

export type TimedResult<T> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly timedOut: boolean; readonly error: unknown };

/**
 * @example
 * ```ts
 * const r = await runWithTimeout((signal) => fetch(url, { signal }), 5_000, runSignal);
 * if (!r.ok && r.timedOut) console.log('too slow');
 * ```
 */
export function runWithTimeout<T>(
  work: (signal: AbortSignal) => T | Promise<T>,
  timeoutMs: number,
  parent: AbortSignal,
): Promise<TimedResult<T>> {
  const controller = new AbortController();
  if (parent.aborted) return Promise.resolve({ ok: false, timedOut: false, error: parent.reason });
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
      controller.abort(parent.reason);
      finish({ ok: false, timedOut: false, error: parent.reason });
    };
    const timer = setTimeout(() => {
      const reason = new Error(`timed out after ${timeoutMs} ms`);
      reason.name = 'TimeoutError';
      controller.abort(reason);
      finish({ ok: false, timedOut: true, error: reason });
    }, timeoutMs);
    parent.addEventListener('abort', onParentAbort, { once: true });
    let pending: T | Promise<T>;
    try {
      pending = work(controller.signal);
    } catch (error) {
      finish({ ok: false, timedOut: false, error });
      return;
    }
    Promise.resolve(pending).then(
      (value) => finish({ ok: true, value }),
      (error: unknown) => finish({ ok: false, timedOut: false, error }),
    );
  });
}
