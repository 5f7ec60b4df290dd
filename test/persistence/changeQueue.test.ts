/**
 * The change queue the knowledge, experience and session stores share: one change at a time in
 * call order, a failed write leaves the state as it was, and closing waits for the writes under
 * way. Writes are promises the test settles by hand, so the order is proved without timing.
 */
import { describe, expect, it } from 'vitest';
import { createChangeQueue } from '../../src/persistence/changeQueue.ts';

class ClosedForTest extends Error {}

/** A write the test settles by hand, and whether it started. */
function pendingWrite() {
  let settle: { resolve: () => void; reject: (error: Error) => void } | undefined;
  const started: boolean[] = [];
  const write = (): Promise<void> => {
    started.push(true);
    return new Promise<void>((resolve, reject) => (settle = { resolve, reject }));
  };
  return {
    write,
    get started() {
      return started.length;
    },
    resolve: () => settle?.resolve(),
    reject: (error: Error) => settle?.reject(error),
  };
}

/** Lets every settled promise's callbacks run. */
const drain = async (): Promise<void> => {
  for (let i = 0; i < 10; i += 1) await Promise.resolve();
};

describe('createChangeQueue', () => {
  it('applies the next change only once the write before it has finished, in call order', async () => {
    const queue = createChangeQueue(() => new ClosedForTest());
    const applied: string[] = [];
    const first = pendingWrite();
    const one = queue.change(() => (applied.push('one'), { result: 1, write: first.write }));
    const two = queue.change(() => (applied.push('two'), { result: 2 }));
    await drain();
    expect(applied).toEqual(['one']);
    first.resolve();
    expect(await one).toBe(1);
    expect(await two).toBe(2);
    expect(applied).toEqual(['one', 'two']);
  });

  it('takes back a change whose write fails, rejects with the write\'s error, and runs the next change', async () => {
    const queue = createChangeQueue(() => new ClosedForTest());
    const items = ['kept'];
    const failing = pendingWrite();
    const add = queue.change(() => {
      items.push('lost');
      return { result: undefined, write: failing.write, undo: () => items.pop() };
    });
    const after = queue.change(() => ({ result: [...items] }));
    await drain();
    expect(items).toEqual(['kept', 'lost']);
    failing.reject(new Error('disk full'));
    await expect(add).rejects.toThrow('disk full');
    expect(await after).toEqual(['kept']);
  });

  it('makes a change that commits after its write visible only once written, and never when the write fails', async () => {
    const queue = createChangeQueue(() => new ClosedForTest());
    let state = 'old';
    const ok = pendingWrite();
    const saved = queue.change(() => ({ result: undefined, write: ok.write, commit: () => (state = 'new') }));
    await drain();
    expect(state).toBe('old');
    ok.resolve();
    await saved;
    expect(state).toBe('new');
    const failing = pendingWrite();
    const lost = queue.change(() => ({ result: undefined, write: failing.write, commit: () => (state = 'lost') }));
    await drain();
    failing.reject(new Error('disk full'));
    await expect(lost).rejects.toThrow('disk full');
    expect(state).toBe('new');
  });

  it('rejects a change that throws while applying without writing, and rejects a bad input before the writes ahead of it', async () => {
    const queue = createChangeQueue(() => new ClosedForTest());
    const ahead = pendingWrite();
    const first = queue.change(() => ({ result: 'first', write: ahead.write }));
    const write = pendingWrite();
    const bad = queue.change(
      () => ({ result: 'never', write: write.write }),
      () => {
        throw new RangeError('bad input');
      },
    );
    // Rejected while the first write is still pending.
    await expect(bad).rejects.toThrow('bad input');
    expect(ahead.started).toBe(1);
    const throwing = queue.change((): { result: string } => {
      throw new RangeError('no such item');
    });
    ahead.resolve();
    expect(await first).toBe('first');
    await expect(throwing).rejects.toThrow('no such item');
    expect(write.started).toBe(0);
  });

  it('refuses changes once closed, releases only after the queued writes, and once however often it is closed', async () => {
    const queue = createChangeQueue(() => new ClosedForTest('closed'));
    const pending = pendingWrite();
    const last = queue.change(() => ({ result: 'written', write: pending.write }));
    let releases = 0;
    const closed = queue.close(() => (releases += 1));
    const again = queue.close(() => (releases += 1));
    expect(() => queue.assertOpen()).toThrow(ClosedForTest);
    await expect(queue.change(() => ({ result: 'late' }))).rejects.toBeInstanceOf(ClosedForTest);
    await drain();
    expect(releases).toBe(0);
    pending.resolve();
    expect(await last).toBe('written');
    await Promise.all([closed, again]);
    expect(releases).toBe(1);
  });
});
