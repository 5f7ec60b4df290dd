/**
 * A throwing events$ subscriber is a bug in the host's code, reported in one line and then
 * left alone: it fires on every event, so a stack trace per event would bury everything else.
 */
import { config, type Observer } from 'rxjs';

/** Distinct errors the process-wide handler remembers; beyond that it stays quiet rather than grow. */
const MAX_REMEMBERED = 100;

function describeError(error: unknown): string {
  const text = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  const line = text.split('\n')[0] ?? text;
  return line.length > 200 ? `${line.slice(0, 199)}…` : line;
}

function warnOnce(what: string, error: unknown): void {
  console.warn(`[actorloop] ${what} threw ${describeError(error)} (the run continues; further errors from it are not reported)`);
}

/** A throw is reported once, in one line, and never reaches RxJS; the subscriber keeps receiving entries. */
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
 * RxJS raises undeliverable subscriber errors from a timer, which would crash Node. It cannot say which subscriber
 * threw, so each distinct message is reported once; a host's own handler is left in place.
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
