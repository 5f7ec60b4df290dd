/** Once deltas were yielded, every failure reaches the caller as an `InferenceError` (`stream_interrupted`), never a silent retry. */
import { describeError } from '../core/errors.ts';
import type { AttemptSignal } from './attemptSignal.ts';
import type { DeltaEvent } from './streamAssembler.ts';
import { InferenceError } from './errors.ts';

export interface Assembler<TRaw> {
  push(chunk: unknown): DeltaEvent[];
  finish(): TRaw;
  readonly finished: boolean;
  readonly emitted: number;
}

export interface OpenedStream<TRaw> {
  readonly attempt: AttemptSignal;
  readonly events: AsyncIterator<unknown>;
  readonly assembler: Assembler<TRaw>;
  readonly first: readonly DeltaEvent[];
  readonly raw: TRaw | undefined;
}

export interface Reading {
  readonly signal: AbortSignal | undefined;
  readonly timeoutMs: number;
  readonly unit: string;
  failure(error: unknown): unknown;
}

/** The SDKs end a stream quietly when its request is aborted: "done" may mean cancelled, timed out, cut, or complete. */
export function endOfStream<TRaw>(assembler: Assembler<TRaw>, attempt: AttemptSignal, reading: Reading): TRaw {
  if (reading.signal?.aborted) throw reading.signal.reason;
  if (attempt.timedOut && !assembler.finished) {
    const timeout = InferenceError.timeout(reading.timeoutMs);
    if (assembler.emitted === 0) throw timeout;
    throw InferenceError.streamInterrupted(`no ${reading.unit} for ${reading.timeoutMs} ms`, { deltasYielded: true, cause: timeout });
  }
  return assembler.finish();
}

/** The part a retry may repeat, since nothing was yielded yet. */
export async function openStream<TRaw>(attempt: AttemptSignal, open: (signal: AbortSignal) => Promise<AsyncIterable<unknown>>, assembler: Assembler<TRaw>, reading: Reading): Promise<OpenedStream<TRaw>> {
  let events: AsyncIterator<unknown> | undefined;
  try {
    events = (await open(attempt.signal))[Symbol.asyncIterator]();
    for (;;) {
      attempt.touch();
      const next = await events.next();
      attempt.pause();
      if (next.done) return { attempt, events, assembler, first: [], raw: endOfStream(assembler, attempt, reading) };
      const first = assembler.push(next.value);
      if (first.length > 0) return { attempt, events, assembler, first, raw: undefined };
    }
  } catch (error) {
    attempt.dispose();
    if (events !== undefined) await closeQuietly(events);
    throw reading.failure(error);
  }
}

export async function* readStream<TRaw>(opened: OpenedStream<TRaw>, reading: Reading): AsyncGenerator<DeltaEvent, TRaw, undefined> {
  const { attempt, events, assembler } = opened;
  try {
    for (const event of opened.first) yield event;
    if (opened.raw !== undefined) return opened.raw;
    for (;;) {
      let deltas: DeltaEvent[];
      try {
        attempt.touch();
        const next = await events.next();
        attempt.pause();
        if (next.done) return endOfStream(assembler, attempt, reading);
        deltas = assembler.push(next.value);
      } catch (error) {
        if (reading.signal?.aborted) throw reading.signal.reason;
        if (error instanceof InferenceError && error.code === 'stream_interrupted') throw error;
        const cause = reading.failure(error);
        throw InferenceError.streamInterrupted(describeError(cause), { deltasYielded: true, cause });
      }
      for (const delta of deltas) yield delta;
    }
  } finally {
    attempt.dispose();
    // Ends the HTTP request when the consumer stops early or the stream failed.
    await closeQuietly(events);
  }
}

/** Closing must never replace the error that made us close. */
export async function closeQuietly(events: AsyncIterator<unknown>): Promise<void> {
  try {
    await events.return?.();
  } catch {
    // The stream is being abandoned; its own failure is irrelevant now.
  }
}
