/**
 * OpenTelemetry spans of real runs, exported to the SDK's in-memory exporter: the span tree's
 * shape (run → model calls and tool calls; strategy runner → its branches' runs), the GenAI
 * attributes, errors, no secret in any attribute, and a no-op without a tracer provider.
 */
import { trace } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent, type Agent, type AgentConfig } from '../../src/agent/createAgent.ts';
import { startStrategy, strategies } from '../../src/strategies/index.ts';
import { createAgentSystem } from '../../src/system/index.ts';
import { traceEvents } from '../../src/telemetry/index.ts';
import { scriptedModel } from '../../src/testing/index.ts';
import { defineTool } from '../../src/tools/defineTool.ts';
import { answering } from '../strategies/support.ts';

const SECRET = 'sk-proj-abcdefghijklmnopqrstuvwxyz012345';
const agents: Agent[] = [];
afterEach(() => {
  for (const agent of agents.splice(0)) agent.stop();
  trace.disable();
});

function tracing() {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  return { exporter, provider, tracer: provider.getTracer('test') };
}

function agentWith(config: AgentConfig): Agent {
  const agent = createAgent(config);
  agents.push(agent);
  return agent;
}

const lookup = defineTool({ name: 'lookup', description: 'Look up', input: z.object({ key: z.string() }), execute: ({ key }) => `value of ${key}` });
const broken = defineTool({ name: 'broken', description: 'Fails', input: z.object({}), execute: () => { throw new Error('down'); } });

const parentId = (span: ReadableSpan) => span.parentSpanContext?.spanId;
const byName = (spans: readonly ReadableSpan[], prefix: string) => spans.filter((span) => span.name.startsWith(prefix));

describe('OpenTelemetry spans', () => {
  it('a run is invoke_agent with chat and execute_tool children carrying gen_ai attributes', async () => {
    const { exporter, tracer } = tracing();
    const model = scriptedModel([{ toolCalls: [{ name: 'lookup', arguments: { key: 'a' } }, { name: 'broken', arguments: {} }] }, { text: 'done' }]);
    const agent = agentWith({ id: 'agent_otel', model: { provider: model, name: 'gpt-test' }, tools: [lookup, broken], resilience: { breakers: false }, observe: { telemetry: { tracer } } });
    const result = await agent.run('Look it up');
    const spans = exporter.getFinishedSpans();
    const [run] = byName(spans, 'invoke_agent');
    expect(run?.name).toBe('invoke_agent agent_otel');
    expect(run?.attributes).toMatchObject({
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.id': 'agent_otel',
      'gen_ai.agent.name': 'agent_otel',
      'gen_ai.conversation.id': result.runId,
      'gen_ai.request.model': 'gpt-test',
    });
    const chats = byName(spans, 'chat ');
    expect(chats.map((span) => span.name)).toEqual(['chat gpt-test', 'chat gpt-test']);
    expect(chats.every((span) => parentId(span) === run?.spanContext().spanId)).toBe(true);
    expect(chats[0]?.attributes).toMatchObject({ 'gen_ai.operation.name': 'chat', 'gen_ai.usage.input_tokens': expect.any(Number), 'gen_ai.usage.output_tokens': expect.any(Number) });
    const tools = byName(spans, 'execute_tool');
    expect(tools.map((span) => span.name).sort()).toEqual(['execute_tool broken', 'execute_tool lookup']);
    expect(tools.every((span) => parentId(span) === run?.spanContext().spanId)).toBe(true);
    expect(tools.find((span) => span.name.endsWith('lookup'))?.attributes).toMatchObject({ 'gen_ai.tool.name': 'lookup', 'gen_ai.tool.call.id': expect.any(String) });
    expect(tools.find((span) => span.name.endsWith('broken'))?.attributes['error.type']).toBe('error');
    // Spans are timed from the journal: every child lies within its run.
    for (const span of [...chats, ...tools]) expect(span.startTime[0] * 1e3 + span.startTime[1] / 1e6).toBeGreaterThanOrEqual((run?.startTime[0] ?? 0) * 1e3 + (run?.startTime[1] ?? 0) / 1e6);
  });

  it('a failed run says why in error.type, and no secret reaches any attribute', async () => {
    const { exporter, tracer } = tracing();
    const model = scriptedModel([{ toolCalls: [{ name: 'lookup', arguments: { key: SECRET } }] }, { toolCalls: [{ name: 'lookup', arguments: { key: 'b' } }] }]);
    const agent = agentWith({ model, tools: [lookup], limits: { maxIterations: 1 }, observe: { telemetry: { tracer } } });
    await agent.start(`Use the key ${SECRET}`).settled;
    const spans = exporter.getFinishedSpans();
    expect(byName(spans, 'invoke_agent')[0]?.attributes['error.type']).toBe('max_iterations');
    expect(JSON.stringify(spans.map((span) => [span.name, span.attributes, span.events]))).not.toContain(SECRET);
  });

  it('a strategy run: the runner is invoke_agent and each branch run a child invoke_agent with its own calls', async () => {
    const { exporter, tracer } = tracing();
    const run = startStrategy({ strategy: strategies.vote({ samples: 3 }), task: 'What is 2 + 2?', subAgent: answering(() => '4') });
    traceEvents(run.events$, { tracer });
    await run.result;
    const runs = byName(exporter.getFinishedSpans(), 'invoke_agent');
    const runner = runs.find((span) => span.attributes['gen_ai.conversation.id'] === run.runId);
    const branches = runs.filter((span) => span !== runner);
    expect(branches).toHaveLength(3);
    expect(branches.every((span) => parentId(span) === runner?.spanContext().spanId)).toBe(true);
    expect(branches.every((span) => span.spanContext().traceId === runner?.spanContext().traceId)).toBe(true);
    const chats = byName(exporter.getFinishedSpans(), 'chat ');
    expect(chats).toHaveLength(3);
    expect(chats.every((chat) => branches.some((branch) => branch.spanContext().spanId === parentId(chat)))).toBe(true);
  });

  it('a delegated task: the helper run is a child of the run that delegated it', async () => {
    const { exporter, tracer } = tracing();
    const system = createAgentSystem();
    traceEvents(system.events$, { tracer });
    system.spawn('helper', { model: scriptedModel([{ text: 'helper found 42' }]) });
    system.spawn('lead', {
      model: scriptedModel([{ toolCalls: [{ name: 'delegate_to_helper', arguments: { task: 'find it' } }] }, { text: 'lead is done' }]),
      tools: [system.delegateTool('helper')],
    });
    await system.ask('lead', 'solve it');
    const runs = byName(exporter.getFinishedSpans(), 'invoke_agent');
    const lead = runs.find((span) => span.attributes['gen_ai.agent.id'] === 'lead');
    const helper = runs.find((span) => span.attributes['gen_ai.agent.id'] === 'helper');
    expect(parentId(helper as ReadableSpan)).toBe(lead?.spanContext().spanId);
    system.stopAll();
  });

  it('uses the registered provider when given none, and is a no-op without one', async () => {
    const { exporter, provider } = tracing();
    const quiet = agentWith({ model: scriptedModel([{ text: 'ok' }]), observe: { telemetry: true } });
    await quiet.run('Hello');
    expect(exporter.getFinishedSpans()).toEqual([]);

    trace.setGlobalTracerProvider(provider);
    const traced = agentWith({ model: scriptedModel([{ text: 'ok' }]), observe: { telemetry: true } });
    await traced.run('Hello');
    expect(byName(exporter.getFinishedSpans(), 'invoke_agent')).toHaveLength(1);
  });
});
