/**
 * The run index reads how a run ended from its log's last line only. Whatever the log holds —
 * records of any size, non-ASCII text, a tail torn at any byte — that must agree with reading
 * the whole log: the end record when the last complete record is one, else nothing.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { createFileStore } from '../../src/persistence/fileStore.ts';
import { LOG_VERSION, type LogRecord } from '../../src/persistence/records.ts';
import { readRunEnd, readRunLog } from '../../src/persistence/runLog.ts';

const dir = mkdtempSync(join(tmpdir(), 'actorloop-run-end-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const text = fc.string({ unit: 'grapheme', maxLength: 40 });
const record: fc.Arbitrary<LogRecord> = fc.oneof(
  fc.record({ v: fc.constant(LOG_VERSION), kind: fc.constant('call.started' as const), key: text, tool: text, args: text }),
  // Sometimes far longer than the 4 KB the reader looks at, sometimes quoting an end record.
  fc.record({
    v: fc.constant(LOG_VERSION),
    kind: fc.constant('call.started' as const),
    key: fc.oneof(fc.constant('"kind":"end"'), fc.nat({ max: 9000 }).map((n) => `ü${'x'.repeat(n)}`)),
    tool: text,
    args: text,
  }),
  // A nested object that looks like an end record, at the tail of a line that may be longer than 4 KB.
  fc.nat({ max: 9000 }).map(
    (n): LogRecord => ({
      v: LOG_VERSION,
      kind: 'gate',
      iteration: 0,
      output: { plan: [{ call: { id: 'c', name: 't', arguments: '{}' }, verdict: 'run', arguments: { pad: 'x'.repeat(n), tail: { kind: 'end', status: 'done' } } }] },
    }),
  ),
  fc.record({
    v: fc.constant(LOG_VERSION),
    kind: fc.constant('end' as const),
    status: fc.constantFrom('done' as const, 'failed' as const, 'cancelled' as const),
    reason: fc.constantFrom('final_answer' as const, 'max_iterations' as const, 'cancelled' as const),
    at: fc.nat(),
  }),
  // An end whose error message (a provider's error page, a long refusal) makes the line longer than 4 KB.
  fc.nat({ max: 9000 }).map(
    (n): LogRecord => ({ v: LOG_VERSION, kind: 'end', status: 'failed', reason: 'error', at: 1, error: { name: 'ProviderError', code: 'provider_error', message: `<html>${'x'.repeat(n)}</html>` } }),
  ),
);

describe('readRunEnd', () => {
  it('agrees with reading the whole log, for any records and any torn tail', () => {
    let k = 0;
    fc.assert(
      fc.property(fc.array(record, { minLength: 1, maxLength: 6 }), fc.option(fc.nat(), { nil: undefined }), (records, tearAt) => {
        const whole = Buffer.from(records.map((r) => `${JSON.stringify(r)}\n`).join(''));
        // A torn tail: the log cut anywhere inside its last record, its newline always gone.
        const lastLength = Buffer.byteLength(`${JSON.stringify(records.at(-1))}\n`);
        const cut = tearAt === undefined ? whole.length : whole.length - 1 - (tearAt % (lastLength - 1));
        const file = join(dir, `log_${k++}.jsonl`);
        writeFileSync(file, whole.subarray(0, cut));
        const log = readRunLog(file);
        const last = log.records.at(-1);
        // Torn, the run never acknowledged its end (the last flush was cut): it has not ended.
        expect(log.warnings.length > 0).toBe(cut < whole.length);
        expect(readRunEnd(file)).toEqual(last?.kind === 'end' && log.warnings.length === 0 ? last : null);
      }),
      { numRuns: 300 },
    );
  });
});

describe('a run whose end record is longer than the tail the index reads', () => {
  it('is listed as failed, with its error, not as running, and its owner is not reported gone', async () => {
    const store = createFileStore({ dir: mkdtempSync(join(tmpdir(), 'actorloop-run-end-store-')) });
    const message = `502 Bad Gateway: <html>${'<p>upstream error</p>'.repeat(400)}</html>`;
    const writer = store.createRun({ runId: 'run_long_error', agentId: 'a', task: 'Fail at length.' });
    writer.end('error', { error: { name: 'ProviderError', code: 'provider_error', message } });
    await writer.close();
    const meta = await store.getRun('run_long_error');
    expect(meta?.status).toBe('failed');
    expect(meta?.error?.message).toBe(message);
    expect((await store.listRuns()).map((run) => run.status)).toEqual(['failed']);
    expect(store.ownerGone('run_long_error')).toBe(false);
    rmSync(store.dir, { recursive: true, force: true });
  });
});
