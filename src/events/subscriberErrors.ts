/**
 * A throwing events$ subscriber is a bug in the host's code, reported in one line and then
 * left alone: it fires on every event, so a stack trace per event would bury everything else.
 */
import { config, type Observer } from 'rxjs';

/** Distinct errors the process-wide handler remembers; beyond that it stays quiet rather than grow. */
const MAX_REMEMBERED = 100;

/** `TypeError: x is undefined`, on one line and short enough for a log. */
function describeError(error: unknown): string {
  const text = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  const line = text.split('\n')[0] ?? text;
  return line.length > 200 ? `${line.slice(0, 199)}…` : line;
}

function warnOnce(what: string, error: unknown): void {
  console.warn(`[actorloop] ${what} threw ${describeError(error)} (the run continues; further errors from it are not reported)`);
}

/**
 * Wrap one subscriber so that a throw is reported once, in one line, and never reaches RxJS:
 * later throws of the same subscriber are silent, and it keeps receiving entries.
 *
 * @example
 * ```ts
 * entries$.subscribe(reportingOnce(settings.events, 'the observe.events handler'));
 * ```
 */
export function reportingOnce<T>(observer: Partial<Observer<T>> | ((value: T) => void), what: string): Partial<Observer<T>> {
  let reported = false;
  const guard =
    <A extends unknown[]>(handler: ((...args: A) => void) | undefined) =>
    (...args: A): void => {
      try {
        handler?.(...args);
      } catch (error) {
        if (reported) return;
        reported = true;
        warnOnce(what, error);
      }
    };
  if (typeof observer === 'function') return { next: guard(observer) };
  return {
    next: guard(observer.next?.bind(observer)),
    error: guard(observer.error?.bind(observer)),
    complete: guard(observer.complete?.bind(observer)),
  };
}

/**
 * Install the process-wide report of subscriber errors RxJS could not deliver (a subscriber
 * of `agent.events$` or of a stream piped from it), unless the host installed its own. RxJS
 * raises those from a timer, which would crash Node unhandled. It cannot say which subscriber
 * threw, so an error is reported once per distinct message.
 */
export function installSubscriberErrorReport(): void {
  if (config.onUnhandledError !== null) return;
  const seen = new Set<string>();
  config.onUnhandledError = (error: unknown) => {
    const key = describeError(error);
    if (seen.has(key) || seen.size >= MAX_REMEMBERED) return;
    seen.add(key);
    warnOnce('an events$ subscriber', error);
  };
}
