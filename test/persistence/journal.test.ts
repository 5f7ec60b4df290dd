/**
 * The persisted journal is the run's event stream: complete, in order, and replayable through
 * the `JournalEntry` schema. The run index lists runs with their status; run ids that are not
 * safe folder names are refused; and each iteration appends a constant amount (no rewrite of
 * history).
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { createAgent, type Agent, type AgentConfig } from '../../src/agent/createAgent.ts';
import { ConfigurationError } from '../../src/core/errors.ts';
import { JournalEntry } from '../../src/core/loopEvent.ts';
import { createFileStore } from '../../src/persistence/fileStore.ts';
import { scriptedModel } from '../../src/testing/index.ts';
import { defineTool } from '../../src/tools/defineTool.ts';
import { echoTool, removeTempDirs, runFiles, tempDir } from './support.ts';

const agents: Agent[] = [];
afterEach(() => {
  for (const agent of agents.splice(0)) agent.stop();
});
afterAll(removeTempDirs);

function agentWith(config: AgentConfig): Agent {
  const agent = createAgent(config);
  agents.push(agent);
  return agent;
}

const deploy = defineTool({
  name: 'deploy',
  description: 'Deploy (needs a human)',
  input: z.object({ env: z.string() }),
  requiresConfirmation: true,
  execute: ({ env }) => `deployed to ${env}`,
});
const broken = defineTool({
  name: 'broken',
  description: 'Always fails',
  input: z.object({}),
  execute: () => {
    throw new Error('disk on fire');
  },
});

describe('the persisted journal', () => {
  it('holds every event the run emitted, in order, and replays through the JournalEntry schema', async () => {
    const store = createFileStore({ dir: tempDir() });
    const model = scriptedModel([
      { toolCalls: [{ name: 'echo', arguments: { word: 'a' } }, { name: 'broken', arguments: {} }, { name: 'nope', arguments: {} }] },
      { toolCalls: [{ name: 'deploy', arguments: { env: 'prod' } }] },
      { text: 'shipped' },
    ]);
    const agent = agentWith({ id: 'agent_journal', model, tools: [echoTool(), broken, deploy], persistence: { store } });
    const emitted: JournalEntry[] = [];
    agent.events$.subscribe((entry) => emitted.push(entry));

    const run = agent.start('ship it', { runId: 'run_journal' });
    const onRun: JournalEntry[] = [];
    run.events$.subscribe((entry) => {
      onRun.push(entry);
      if (entry.event.type === 'human.awaiting') queueMicrotask(() => run.approve());
    });
    const result = await run.settled;
    expect(result.status).toBe('done');

    const { entries, warnings } = store.readJournal('run_journal');
    expect(warnings).toEqual([]);
    expect(entries).toHaveLength(emitted.length);
    expect(entries).toEqual(emitted);
    expect(entries).toEqual(agent.journal.entries('run_journal'));
    // run.events$ is hot: subscribed after start() it sees the tail, every entry of it journaled.
    expect(entries.slice(entries.length - onRun.length)).toEqual(onRun);
    expect(new Set(entries.map((e) => e.event.type))).toEqual(
      new Set([
        'run.started',
        'phase.entered',
        'reasoning.completed',
        'policy.evaluated',
        'tools.dispatched',
        'tool.started',
        'tool.finished',
        'recovery.triggered',
        'observations.collected',
        'human.awaiting',
        'human.decided',
        'run.terminated',
      ]),
    );

    // Replay: each raw entry of the `journal` records, with the record's ids and parsed back
    // through the zod schema, is the emitted entry.
    type Columns = { kind: string; runId: string; agentId: string; at: number; sequence: number[]; elapsed: number[]; iteration: number[]; events: unknown[] };
    const replayed = readFileSync(runFiles(store, 'run_journal').log, 'utf8')
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as Columns)
      .filter((record) => record.kind === 'journal')
      .flatMap(({ runId, agentId, at, sequence, elapsed, iteration, events }) =>
        events.map((event, i) => JournalEntry.parse({ sequence: sequence[i], timestamp: at + (elapsed[i] ?? NaN), agentId, runId, iteration: iteration[i], event })),
      );
    expect(replayed).toEqual(emitted);
    expect(replayed.map((e) => e.sequence)).toEqual(replayed.map((_, i) => i));
  });
});

describe('the run index', () => {
  it('lists every run with its status, newest first', async () => {
    const store = createFileStore({ dir: tempDir() });
    const tools = [echoTool(), deploy];
    await agentWith({ model: scriptedModel([{ text: 'ok' }]), tools, persistence: { store } }).start('a', { runId: 'run_done' }).settled;
    await agentWith({ model: scriptedModel([{ error: new Error('provider down') }]), tools, persistence: { store } }).start('b', { runId: 'run_failed' }).settled;
    const waiting = agentWith({ model: scriptedModel([{ toolCalls: [{ name: 'deploy', arguments: { env: 'prod' } }] }]), tools, persistence: { store } }).start('c', {
      runId: 'run_waiting',
    });
    await vi.waitFor(async () => expect((await store.getRun('run_waiting'))?.status).toBe('awaiting_human'), { timeout: 2_000 });

    const listed = await store.listRuns();
    expect(Object.fromEntries(listed.map((m) => [m.runId, m.status]))).toEqual({ run_done: 'done', run_failed: 'failed', run_waiting: 'awaiting_human' });
    expect(listed.find((m) => m.runId === 'run_failed')?.reason).toBe('error');
    expect(listed.map((m) => m.createdAt)).toEqual([...listed.map((m) => m.createdAt)].sort((a, b) => b - a));

    waiting.cancel('not today');
    await waiting.settled;
    expect((await store.getRun('run_waiting'))?.status).toBe('cancelled');
  });
});

describe('run ids', () => {
  it.each([['../x'], ['a/b'], [''], ['x'.repeat(200)], ['..'], ['a b'], ['nul\u0000byte'], ['C:\\x']])('refuses %j as a folder name', async (runId) => {
    const dir = tempDir();
    const store = createFileStore({ dir });
    const agent = agentWith({ model: scriptedModel([{ text: 'ok' }]), persistence: { store } });
    expect(() => store.createRun({ runId, agentId: 'a', task: 't' })).toThrow(ConfigurationError);
    expect(() => store.resumeRun(runId)).toThrow(ConfigurationError);
    expect(() => store.readJournal(runId)).toThrow(ConfigurationError);
    await expect(store.getRun(runId)).rejects.toBeInstanceOf(ConfigurationError);
    expect(() => agent.start('t', { runId })).toThrow(ConfigurationError);
    expect(() => agent.resume(runId)).toThrow(ConfigurationError);
    // Nothing was written anywhere, inside the store or next to it.
    expect(existsSync(join(dir, 'x'))).toBe(false);
    expect(existsSync(join(dir, 'runs')) ? readdirSync(join(dir, 'runs')) : []).toEqual([]);
  });

  it('accepts letters, digits, "_" and "-" up to 128 characters', async () => {
    const store = createFileStore({ dir: tempDir() });
    const runId = `Run_1-${'z'.repeat(122)}`;
    const result = await agentWith({ model: scriptedModel([{ text: 'ok' }]), persistence: { store } }).start('t', { runId }).settled;
    expect(result.status).toBe('done');
    expect((await store.getRun(runId))?.status).toBe('done');
  });
});

describe('write cost', () => {
  it('appends a constant number of bytes per iteration (no rewrite of history)', async () => {
    const tick = defineTool({ name: 'tick', description: 'Tick', input: z.object({ n: z.number() }), execute: ({ n }) => `tick ${n}` });
    const store = createFileStore({ dir: tempDir() });
    const perIteration: Record<number, number> = {};
    const timing: string[] = [];
    for (const iterations of [10, 100, 400]) {
      const model = scriptedModel((_request, i) => (i < iterations ? { toolCalls: [{ name: 'tick', arguments: { n: i } }] } : { text: 'done' }), {
        recordCalls: false,
      });
      const agent = agentWith({ model, tools: [tick], persistence: { store }, limits: { maxIterations: iterations + 1, maxTotalTokens: Number.MAX_SAFE_INTEGER } });
      const started = performance.now();
      const result = await agent.start('tick', { runId: `run_${iterations}` }).settled;
      expect(result.reason).toBe('final_answer');
      timing.push(`${iterations}: ${Math.round(performance.now() - started)} ms`);
      perIteration[iterations] = statSync(runFiles(store, `run_${iterations}`).log).size / iterations;
    }
    const [small, medium, large] = [perIteration[10] ?? 0, perIteration[100] ?? 0, perIteration[400] ?? 0];
    console.info(`[write cost] log bytes per iteration: 10 → ${small.toFixed(0)}, 100 → ${medium.toFixed(0)}, 400 → ${large.toFixed(0)}; run time ${timing.join(', ')}`);
    expect(medium).toBeLessThan(1.5 * small);
    expect(large).toBeLessThan(1.5 * small);
  });
});
