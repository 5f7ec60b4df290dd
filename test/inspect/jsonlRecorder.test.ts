import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createActor, createMachine, type InspectionEvent } from 'xstate';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { combineInspectors, createJsonlRecorder, InspectionRecord, readInspectionRecording } from '../../src/inspect/index.ts';
import { echoAgent } from './fixtures.ts';
import type { InspectorError } from '../../src/inspect/errors.ts';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'actorloop-recorder-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('createJsonlRecorder', () => {
  it('writes one parseable, versioned record per line, numbered in order, for an agent run', async () => {
    const file = join(dir, 'run.jsonl');
    const recorder = createJsonlRecorder(file);
    const agent = echoAgent(recorder.inspect);
    await agent.run('say hello');
    agent.stop();
    await recorder.close();

    const lines = (await readFile(file, 'utf8')).split('\n');
    expect(lines.at(-1)).toBe(''); // every record ends its line
    const records = lines.slice(0, -1).map((line) => InspectionRecord.parse(JSON.parse(line)));
    expect(records.length).toBe(recorder.recorded);
    expect(records.map((r) => r.seq)).toEqual(records.map((_, i) => i));
    const times = records.map((r) => r.time);
    expect(times).toEqual([...times].sort((a, b) => a - b));
    expect(new Set(records.map((r) => r.type))).toEqual(
      new Set(['@xstate.actor', '@xstate.event', '@xstate.snapshot', '@xstate.action', '@xstate.microstep']),
    );

    // The first record registers the root agent actor with its machine definition.
    const first = records[0];
    expect(first?.type).toBe('@xstate.actor');
    expect((first?.definition as { id: string }).id).toBe('agent');
    const rootId = first?.sessionId;

    const rootEvents = records.filter((r) => r.type === '@xstate.event' && r.sessionId === rootId).map((r) => (r.event as { type: string }).type);
    expect(rootEvents[0]).toBe('xstate.init');
    expect(rootEvents).toContain('act.done');

    const rootSnapshots = records.filter((r) => r.type === '@xstate.snapshot' && r.sessionId === rootId);
    const last = rootSnapshots.at(-1)?.snapshot;
    expect(last?.status).toBe('done');
    expect(last?.value).toBe('done');
    expect((last?.context as { messages: Array<{ content: string | null }> }).messages.at(-1)?.content).toBe('done');

    // Invoked children name their parent (the `phases` worker, whose events are the phase
    // requests); actions carry their type.
    const worker = records.find((r) => r.type === '@xstate.actor' && r.actorId === 'phases');
    expect(worker?.parentSessionId).toBe(rootId);
    const workerEvents = records.filter((r) => r.type === '@xstate.event' && r.sessionId === worker?.sessionId).map((r) => (r.event as { type: string }).type);
    expect(workerEvents).toContain('phase.run');
    expect(records.some((r) => r.type === '@xstate.action' && r.action?.type === 'xstate.emit')).toBe(true);
    expect(records.some((r) => r.type === '@xstate.microstep' && Array.isArray(r.transitions))).toBe(true);
  });

  it('appends to an existing file through one stream instead of rewriting it', async () => {
    const file = join(dir, 'run.jsonl');
    await writeFile(file, '{"earlier":true}\n');
    const recorder = createJsonlRecorder(file);
    createActor(createMachine({ id: 'tiny', initial: 'a', states: { a: {} } }), { inspect: recorder.inspect }).start();
    await recorder.close();
    const text = await readFile(file, 'utf8');
    expect(text.startsWith('{"earlier":true}\n{"v":1,"seq":0,')).toBe(true);
    const { records, invalidLines } = await readInspectionRecording(file);
    expect(invalidLines).toEqual([1]);
    expect(records[0]?.definition).toMatchObject({ id: 'tiny' });
  });

  it('ignores events after close, and close is idempotent', async () => {
    const file = join(dir, 'run.jsonl');
    const recorder = createJsonlRecorder(file);
    const actor = createActor(createMachine({ id: 'm', on: { ping: {} } }), { inspect: recorder.inspect }).start();
    await recorder.close();
    const written = recorder.recorded;
    actor.send({ type: 'ping' });
    await recorder.close();
    expect(recorder.recorded).toBe(written);
    expect((await readFile(file, 'utf8')).trim().split('\n')).toHaveLength(written);
  });

  it('reports a file it cannot write as an InspectorError (inspection_recording) on close, without disturbing the run', async () => {
    const file = join(dir, 'missing', 'run.jsonl');
    const recorder = createJsonlRecorder(file);
    const agent = echoAgent(recorder.inspect);
    const result = await agent.run('say hello');
    agent.stop();
    expect(result.text).toBe('done');
    const error = await recorder.close().catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'inspection_recording' });
    expect((error as InspectorError).filePath).toBe(file);
    expect((error as InspectorError).message).toContain('ENOENT');
  });

  it('drops records instead of buffering without bound when the stream is backed up', async () => {
    const file = join(dir, 'run.jsonl');
    const recorder = createJsonlRecorder(file, { maxBufferedBytes: 0 });
    const actor = createActor(createMachine({ id: 'm', on: { ping: {} } }), { inspect: recorder.inspect }).start();
    for (let i = 0; i < 5; i++) actor.send({ type: 'ping' });
    await recorder.close();
    expect(recorder.recorded).toBe(1);
    expect(recorder.dropped).toBeGreaterThan(5);
  });

  it('applies extra redaction rules', async () => {
    const file = join(dir, 'run.jsonl');
    const recorder = createJsonlRecorder(file, { redact: { keys: ['pin'] } });
    const actor = createActor(createMachine({ id: 'm', context: { pin: '4321', note: 'ok' } }), { inspect: recorder.inspect }).start();
    actor.stop();
    await recorder.close();
    const text = await readFile(file, 'utf8');
    expect(text).not.toContain('4321');
    expect(text).toContain('"pin":"[REDACTED]"');
  });
});

describe('combineInspectors', () => {
  it('feeds every target, even when one of them throws', () => {
    const seen: string[] = [];
    const combined = combineInspectors(
      () => {
        throw new Error('broken inspector');
      },
      (event: InspectionEvent) => seen.push(event.type),
      { next: (event: InspectionEvent) => seen.push(`observer:${event.type}`) },
    );
    createActor(createMachine({ id: 'm' }), { inspect: combined }).start();
    expect(seen).toContain('@xstate.actor');
    expect(seen).toContain('observer:@xstate.snapshot');
  });
});
