/**
 * A run cancelled before its first phase replied: the phase's late reply must not land after the
 * log's end record, or the log reads as unfinished (index `running`, resumable).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createAgent } from '../../src/agent/createAgent.ts';
import { createFileStore } from '../../src/persistence/fileStore.ts';
import { readRunLog } from '../../src/persistence/runLog.ts';
import { scriptedModel } from '../../src/testing/index.ts';

const dir = mkdtempSync(join(tmpdir(), 'actorloop-cancelled-early-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('a run cancelled as it starts', () => {
  it('ends its log with the end record, so it is listed cancelled and cannot be resumed', async () => {
    const store = createFileStore({ dir });
    const model = scriptedModel([{ text: 'never asked' }]);
    const agent = createAgent({ model, persistence: { store } });
    const run = agent.start('q', { runId: 'cancelled-at-start' });
    run.cancel('changed my mind');
    const result = await run.settled;

    expect(result.status).toBe('cancelled');
    expect(model.calls).toHaveLength(0);
    expect(await store.getRun('cancelled-at-start')).toMatchObject({ status: 'cancelled' });
    const kinds = readRunLog(join(dir, 'runs', 'cancelled-at-start.jsonl')).records.map((r) => r.kind);
    expect(kinds.at(-1)).toBe('end');
    expect(() => agent.resume('cancelled-at-start')).toThrow(/cancelled/);
  });
});
