import { createServer } from 'node:net';
import WebSocket from 'ws';
import { afterEach, describe, expect, it } from 'vitest';
import { createInspector, type Inspector } from '../../src/inspect/index.ts';
import { CANARY, connect, echoAgent, tcpHandles, type Collector } from './fixtures.ts';
import type { InspectorError } from '../../src/inspect/errors.ts';

let inspector: Inspector | undefined;
let client: Collector | undefined;

afterEach(async () => {
  client?.close();
  await inspector?.stop();
  client = undefined;
  inspector = undefined;
});

const isRootSnapshotDone = (m: Record<string, unknown>) =>
  m['type'] === '@xstate.snapshot' && (m['snapshot'] as { status?: string } | undefined)?.status === 'done' && m['sessionId'] === m['rootId'];

describe('createInspector', () => {
  it('streams an agent run to a plain WebSocket client: the actor with its machine definition, events and snapshots', async () => {
    inspector = await createInspector();
    expect(inspector.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    client = await connect(inspector.wsUrl);

    const agent = echoAgent(inspector.inspect);
    const result = await agent.run('say hello');
    expect(result.text).toBe('done');
    await client.waitFor(isRootSnapshotDone);
    agent.stop();

    const messages = client.parsed();
    const rootActor = messages.find((m) => m['type'] === '@xstate.actor' && m['name'] === 'agent');
    expect(rootActor).toBeDefined();
    const definition = JSON.parse(String(rootActor?.['definition'])) as { id: string; states: Record<string, unknown> };
    expect(definition.id).toBe('agent');
    expect(Object.keys(definition.states)).toEqual(expect.arrayContaining(['running', 'done']));

    const rootId = rootActor?.['sessionId'];
    const rootEvents = messages.filter((m) => m['type'] === '@xstate.event' && m['sessionId'] === rootId);
    expect(rootEvents.map((m) => (m['event'] as { type: string }).type)).toEqual(
      expect.arrayContaining(['xstate.init', 'reason.done']),
    );
    const snapshots = messages.filter((m) => m['type'] === '@xstate.snapshot' && m['sessionId'] === rootId);
    expect(snapshots.length).toBeGreaterThan(2);
    const last = snapshots.at(-1)?.['snapshot'] as { status: string; context: { agentId: string; messages: Array<{ role: string }> } };
    expect(last.status).toBe('done');
    expect(last.context.agentId).toBe('agent_inspect');
    expect(last.context.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
    // The tool's breaker is an actor of its own, inspected too.
    expect(messages.some((m) => m['type'] === '@xstate.actor' && String(m['definition']).includes('"id":"circuitBreaker'))).toBe(true);
  });

  it('follows a run as AG-UI events with its task, tool arguments and results, the secrets in them redacted', async () => {
    inspector = await createInspector();
    client = await connect(inspector.wsUrl);
    const agent = echoAgent(inspector.inspect, { steps: [{ toolCalls: [{ name: 'echo', arguments: { text: `key ${CANARY}` } }] }, { text: 'done' }] });
    const run = agent.start('echo my key');
    inspector.follow(run);
    await run.result;
    await client.waitFor((m) => m['type'] === 'actorloop.run' && (m['event'] as { type?: string }).type === 'RUN_FINISHED');
    agent.stop();

    const mine = client.parsed().filter((m) => m['runId'] === run.runId);
    expect(mine[0]).toEqual({ type: 'actorloop.user', runId: run.runId, text: 'echo my key', agentId: agent.id });
    const events = mine.filter((m) => m['type'] === 'actorloop.run').map((m) => m['event'] as Record<string, unknown>);
    const args = events.find((e) => e['type'] === 'TOOL_CALL_ARGS');
    const result = events.find((e) => e['type'] === 'TOOL_CALL_RESULT');
    expect(JSON.parse(String(args?.['delta']))).toEqual({ text: 'key [REDACTED]' });
    expect(String(result?.['content'])).toContain('[REDACTED]');
    expect(JSON.stringify(mine)).not.toContain(CANARY);
    expect(events.at(-1)).toMatchObject({ type: 'RUN_FINISHED', result: { reason: 'final_answer', text: 'done' } });
  });

  it('replays earlier messages to a client that connects after the run', async () => {
    inspector = await createInspector();
    const agent = echoAgent(inspector.inspect);
    await agent.run('say hello');
    await new Promise((resolve) => setTimeout(resolve, 10));
    client = await connect(inspector.wsUrl);
    await client.waitFor(isRootSnapshotDone);
    expect(client.parsed()[0]?.['type']).toBe('@xstate.actor');
  });

  it('serves the bridge page that embeds the Stately inspector and connects back to the relay', async () => {
    inspector = await createInspector({ inspectorUrl: 'https://stately.ai/inspect' });
    const response = await fetch(inspector.url);
    expect(response.status).toBe(200);
    const html = await response.text();
    expect(html).toContain('"https://stately.ai/inspect"');
    expect(html).toContain("new WebSocket('ws://' + location.host)");
    expect((await fetch(new URL('/other', inspector.url))).status).toBe(404);
  });

  it('refuses WebSocket connections from other web origins', async () => {
    inspector = await createInspector();
    const foreign = new WebSocket(inspector.wsUrl, { headers: { origin: 'https://evil.example' } });
    const outcome = await new Promise<string>((resolve) => {
      foreign.once('open', () => resolve('open'));
      foreign.once('error', (error) => resolve(error.message));
    });
    expect(outcome).toContain('401');
    const port = new URL(inspector.url).port;
    client = await connect(inspector.wsUrl, { origin: `http://127.0.0.1:${port}` });
  });

  it('fails with an InspectorError (inspector_start) naming the port when it is taken', async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as { port: number }).port;
    try {
      const error = await createInspector({ port }).catch((e: unknown) => e);
      expect(error).toMatchObject({ code: 'inspector_start' });
      expect((error as InspectorError).port).toBe(port);
      expect((error as InspectorError).message).toContain('EADDRINUSE');
    } finally {
      await new Promise<void>((resolve) => blocker.close(() => resolve()));
    }
  });

  it('closes every client, socket and the server on stop, and ignores events afterwards', async () => {
    const stopped = await createInspector();
    const one = await connect(stopped.wsUrl);
    const two = await connect(stopped.wsUrl);
    expect(tcpHandles()).toBeGreaterThanOrEqual(5); // server + 2 × (client end, server end)
    await stopped.stop();
    expect(await one.closed).toBe(1001);
    expect(await two.closed).toBe(1001);
    await stopped.stop(); // idempotent
    // Nothing of this file may keep the process alive (earlier tests' fetch sockets included).
    expect(await eventually(() => tcpHandles() === 0)).toBe(true);
    const refused = await fetch(stopped.url).then(
      () => 'answered',
      () => 'refused',
    );
    expect(refused).toBe('refused');
    // A late event from a still-running actor must not throw.
    expect(() => stopped.inspect.next?.({ type: '@xstate.event' } as never)).not.toThrow();
  });
});

async function eventually(condition: () => boolean, timeoutMs = 2000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return true;
}
