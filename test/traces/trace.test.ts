/**
 * Runs as traces: the step DAG read back from real runs' journals (scripted models, real file
 * stores), single calls, strategy runs with their branches' sub-traces, queries and Mermaid.
 */
import fc from 'fast-check';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent, type Agent, type AgentConfig } from '../../src/agent/createAgent.ts';
import { createFileStore } from '../../src/persistence/fileStore.ts';
import { runStrategy, strategies } from '../../src/strategies/index.ts';
import { scriptedModel, type ScriptStep } from '../../src/testing/index.ts';
import { defineTool } from '../../src/tools/defineTool.ts';
import { buildTrace, type Trace, type TraceStep } from '../../src/traces/trace.ts';
import { traceToMermaid } from '../../src/traces/mermaid.ts';
import { removeTempDirs, tempDir } from '../persistence/support.ts';
import { answering } from '../strategies/support.ts';

const agents: Agent[] = [];
afterEach(() => {
  for (const agent of agents.splice(0)) agent.stop();
});
afterAll(removeTempDirs);

const lookup = defineTool({ name: 'lookup', description: 'Look up a word', input: z.object({ word: z.string() }), execute: ({ word }) => `${word}!` });

function agentWith(config: Omit<AgentConfig, 'tools'> & { tools?: AgentConfig['tools'] }): Agent {
  const agent = createAgent({ tools: [lookup], resilience: { breakers: false }, ...config });
  agents.push(agent);
  return agent;
}

const byId = (trace: Trace) => new Map(trace.steps.map((step) => [step.id, step]));
const ofType = (trace: Trace, type: TraceStep['type']) => trace.steps.filter((step) => step.type === type);

describe('a run as a trace', () => {
  it('parallel calls share their model call as parent; the next model call has their results as parents', async () => {
    const model = scriptedModel([
      { text: 'Looking both up.', toolCalls: [{ id: 'a', name: 'lookup', arguments: { word: 'x' } }, { id: 'b', name: 'lookup', arguments: { word: 'y' } }] },
      { text: 'x! and y!' },
    ]);
    const agent = agentWith({ model });
    const result = await agent.run('Look up x and y');
    const trace = await agent.traces.get(result.runId);
    expect(trace).toMatchObject({ id: result.runId, mode: 'agent', task: 'Look up x and y', status: 'done', context: { iterations: 2, reason: 'final_answer' } });
    const steps = byId(trace as Trace);
    expect(steps.get('llm_1')?.parentIds).toEqual([]);
    expect(steps.get('call_a')).toMatchObject({ type: 'tool_call', parentIds: ['llm_1'], data: { tool: 'lookup', decision: 'allow' } });
    expect(steps.get('call_b')?.parentIds).toEqual(['llm_1']);
    expect(steps.get('result_a')).toMatchObject({ type: 'tool_result', parentIds: ['call_a'], data: { status: 'ok' } });
    expect(steps.get('reasoning_1')).toMatchObject({ type: 'reasoning', parentIds: ['llm_1'], data: { text: 'Looking both up.' } });
    expect(steps.get('llm_2')).toMatchObject({ parentIds: ['result_a', 'result_b'], data: { text: 'x! and y!' } });
    expect(trace?.completed).toBeGreaterThanOrEqual(trace?.created ?? Infinity);
    // A trace is plain data: exported as JSON, it reads back the same.
    expect(JSON.parse(JSON.stringify(trace))).toEqual(trace);
  });

  it('a blocked call ends its own branch: the next model call hangs from it', async () => {
    const model = scriptedModel([{ toolCalls: [{ id: 'u', name: 'nope', arguments: {} }] }, { text: 'fine' }]);
    const agent = agentWith({ model });
    const trace = await agent.traces.get((await agent.run('Try')).runId);
    const steps = byId(trace as Trace);
    expect(steps.get('call_u')?.data['decision']).toBe('unknown_tool');
    expect(steps.has('result_u')).toBe(false);
    expect(steps.get('llm_2')?.parentIds).toEqual(['call_u']);
  });

  it('agent.call is a run of one model call, offered no tools, traced in call mode', async () => {
    const model = scriptedModel([{ text: 'Paris' }]);
    const agent = agentWith({ model });
    const result = await agent.call('Capital of France?');
    expect(result.text).toBe('Paris');
    expect(model.calls[0]?.tools).toBeUndefined();
    const trace = await agent.traces.get(result.runId);
    expect(trace).toMatchObject({ mode: 'call', status: 'done', context: { tools: [], iterations: 1 } });
    expect(trace?.steps.map((step) => step.type)).toEqual(['llm_call']);
  });

  it('is read from the store by another agent on it, and listed newest first with filters', async () => {
    const store = createFileStore({ dir: tempDir() });
    const first = agentWith({ id: 'agent_traces', model: scriptedModel([{ text: 'one' }]), persistence: { store } });
    const done = await first.run('First task');
    const failing = agentWith({ id: 'agent_traces', model: scriptedModel([{ toolCalls: [{ name: 'lookup', arguments: { word: 'w' } }] }]), persistence: { store }, limits: { maxIterations: 1 } });
    const failed = await failing.start('Second task').settled;
    expect(failed.status).toBe('failed');

    const reader = agentWith({ id: 'agent_traces', model: scriptedModel([]), persistence: { store } });
    expect((await reader.traces.get(done.runId))?.task).toBe('First task');
    expect((await reader.traces.list()).map((t) => t.id)).toEqual([failed.runId, done.runId]);
    expect((await reader.traces.list({ status: 'failed' })).map((t) => t.id)).toEqual([failed.runId]);
    expect(await reader.traces.list({ limit: 1 })).toHaveLength(1);
    expect(await reader.traces.list({ since: new Date(Date.now() + 60_000) })).toEqual([]);
    expect(await reader.traces.get('run_missing')).toBeUndefined();
  });

  it('a strategy run links each branch step to the sub-trace of its sub-agent run', async () => {
    const result = await runStrategy({ strategy: strategies.vote({ samples: 3 }), task: 'What is 2 + 2?', subAgent: answering(() => '4') });
    const trace = buildTrace(result.events, result.runId) as Trace;
    const branches = trace.steps.filter((step) => step.data['branchId'] !== undefined);
    expect(branches).toHaveLength(3);
    expect(trace.children).toHaveLength(3);
    for (const branch of branches) {
      const child = trace.children.find((c) => c.id === branch.data['subTraceId']);
      expect(child).toMatchObject({ status: 'done', task: expect.any(String) });
      expect(ofType(child as Trace, 'llm_call')).toHaveLength(1);
    }
  });

  it('holds for any shape of run: parents exist and come first, one model step per iteration, one result per call', () =>
    fc.assert(
      fc.asyncProperty(fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 0, maxLength: 4 }), async (turns) => {
        let n = 0;
        const script: ScriptStep[] = [...turns.filter((k) => k > 0).map((k) => ({ toolCalls: Array.from({ length: k }, () => ({ id: `c${n++}`, name: 'lookup', arguments: { word: 'w' } })) })), { text: 'done' }];
        // Up to twelve identical calls on purpose: stuck detection would end the run.
        const agent = agentWith({ model: scriptedModel(script), resilience: { breakers: false, stuckDetection: false } });
        const result = await agent.run('Go');
        const trace = (await agent.traces.get(result.runId)) as Trace;
        const seen = new Set<string>();
        for (const step of trace.steps) {
          for (const parent of step.parentIds) expect(seen.has(parent)).toBe(true);
          seen.add(step.id);
        }
        expect(ofType(trace, 'llm_call')).toHaveLength(result.iterations);
        expect(ofType(trace, 'tool_result')).toHaveLength(n);
        agent.stop();
      }),
      { numRuns: 25 },
    ));
});

describe('a trace as Mermaid', () => {
  it('draws every step and link, subgraphs for sub-traces, and escapes what the model wrote', async () => {
    const model = scriptedModel([{ text: 'Say "hi" <b>', toolCalls: [{ id: 'a', name: 'lookup', arguments: { word: 'x' } }] }, { text: 'done' }]);
    const agent = agentWith({ model });
    const trace = (await agent.traces.get((await agent.run('Go')).runId)) as Trace;
    const chart = traceToMermaid(trace);
    expect(chart.startsWith('flowchart TD\n')).toBe(true);
    const edges = chart.split('\n').filter((line) => line.includes('-->'));
    expect(edges).toHaveLength(trace.steps.reduce((sum, step) => sum + step.parentIds.length, 0));
    expect(chart).not.toContain('"hi"');
    expect(chart).not.toContain('<b>');

    const strategy = await runStrategy({ strategy: strategies.vote({ samples: 2 }), task: 'q', subAgent: answering(() => 'a') });
    const drawn = traceToMermaid(buildTrace(strategy.events, strategy.runId) as Trace);
    expect(drawn.match(/subgraph /g)).toHaveLength(2);
    expect(drawn.match(/-\.->/g)).toHaveLength(2);
  });
});
