/**
 * The change queue of a store that is written whole after every change: changes run one at a
 * time in call order, each resolves once written, and one whose write fails leaves the state as
 * it was, so what readers see is what the file holds. Closing waits for the writes under way.
 */

/** What one change did: its result, and how its write is made and taken back. */
export interface Change<T> {
  readonly result: T;
  /** Writes the store; omitted when nothing changed or nothing is kept on disk. */
  readonly write?: (() => Promise<void>) | undefined;
  /** For a change applied before its write: takes it back when the write fails. */
  readonly undo?: () => void;
  /** For a change applied only once written: makes it visible. */
  readonly commit?: () => void;
}

/**
 * One store's queue and closed state.
 *
 * @example
 * ```ts
 * const queue = createChangeQueue(() => new StoreError('knowledge_store_closed', 'closed'));
 * await queue.change(() => { items.push(item); return { result: item, write: save, undo: () => items.pop() }; });
 * await queue.close(() => lock.release());
 * ```
 */
export interface ChangeQueue {
  /** Throws the store's closed error once `close` was called. */
  assertOpen(): void;
  /**
   * Queue `apply` behind the changes before it. With `prepare`, the input is checked first, so a
   * bad call rejects at once instead of after the writes ahead of it.
   */
  change<T>(apply: () => Change<T>): Promise<T>;
  change<A, T>(apply: (input: A) => Change<T>, prepare: () => A): Promise<T>;
  /** Refuse later changes, wait for those queued, then `release` (once, however often called). */
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
