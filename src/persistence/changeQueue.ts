/**
 * For a store written whole after every change: changes run one at a time in call order, and one
 * whose write fails leaves the state as it was, so what readers see is what the file holds.
 */

export interface Change<T> {
  readonly result: T;
  /** Omitted when nothing changed or nothing is kept on disk. */
  readonly write?: (() => Promise<void>) | undefined;
  /** For a change applied before its write: takes it back when the write fails. */
  readonly undo?: () => void;
  /** For a change applied only once written: makes it visible. */
  readonly commit?: () => void;
}

export interface ChangeQueue {
  assertOpen(): void;
  /** With `prepare`, a bad call rejects at once instead of after the writes ahead of it. */
  change<T>(apply: () => Change<T>): Promise<T>;
  change<A, T>(apply: (input: A) => Change<T>, prepare: () => A): Promise<T>;
  /** `release` runs once, however often this is called. */
  close(release?: () => void): Promise<void>;
}

export function createChangeQueue(closedError: () => Error): ChangeQueue {
  let tail: Promise<unknown> = Promise.resolve();
  let closing: Promise<void> | undefined;

  const assertOpen = (): void => {
    if (closing !== undefined) throw closedError();
  };

  async function run<T>(apply: () => Change<T>): Promise<T> {
    const { result, write, undo, commit } = apply();
    if (write !== undefined) {
      try {
        await write();
      } catch (error) {
        undo?.();
        throw error;
      }
    }
    commit?.();
    return result;
  }

  function change<T>(apply: () => Change<T>): Promise<T>;
  function change<A, T>(apply: (input: A) => Change<T>, prepare: () => A): Promise<T>;
  function change<A, T>(apply: (input: A | undefined) => Change<T>, prepare?: () => A): Promise<T> {
    let input: A | undefined;
    try {
      assertOpen();
      input = prepare?.();
    } catch (error) {
      return Promise.reject(error);
    }
    const next = (): Promise<T> => run(() => apply(input));
    const done = tail.then(next, next);
    tail = done.catch(() => undefined);
    return done;
  }

  return {
    assertOpen,
    change,
    close(release) {
      closing ??= tail.then(() => release?.());
      return closing;
    },
  };
}
