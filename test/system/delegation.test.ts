/**
 * Delegation as a tool: agent A's model hands a sub-task to agent B, B's answer comes back to A
 * as an observation, and the hand-off is in both journals (`delegate`, then `delegate.result`).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createFileStore } from '../../src/persistence/fileStore.ts';
import type { ToolMessage } from '../../src/core/messages.ts';
import { delegateToolName } from '../../src/system/delegateTool.ts';
import { scriptedModel } from '../../src/testing/index.ts';
import { messagesIn, nextEvent, trackedSystem } from './helpers.ts';

const delegating = (tool: string, task: string) => scriptedModel([{ toolCalls: [{ name: tool, arguments: { task } }] }, { text: 'A is done' }]);

function toolReplies(messages: readonly { role: string }[]): ToolMessage[] {
  return messages.filter((m): m is ToolMessage => m.role === 'tool');
}

describe('delegation', () => {
  it("gives A B's answer as an observation and records the hand-off in both journals", async () => {
    const { system } = trackedSystem();
    const bModel = scriptedModel([{ text: 'B found 42' }]);
    const b = system.spawn('b', { model: bModel });
    const aModel = delegating('delegate_to_b', 'find the answer');
    const a = system.spawn('a', { model: aModel, tools: [system.delegateTool('b')] });

    const result = await system.ask('a', 'solve it');

    expect(result.text).toBe('A is done');
    expect(bModel.calls[0]?.messages.at(-1)).toEqual({ role: 'user', content: 'find the answer' });
    // A's second model call sees B's answer as the tool result.
    expect(toolReplies(aModel.calls[1]?.messages ?? [])).toEqual([{ role: 'tool', toolCallId: 'call_0_0', name: 'delegate_to_b', content: 'B found 42' }]);

    const aMessages = messagesIn(a.agent.journal.entries()).filter((m) => m.kind.startsWith('delegate'));
    const bMessages = messagesIn(b.agent.journal.entries());
    const correlationId = bMessages[0]?.correlationId;
    expect(correlationId).toMatch(/^msg_/);
    const bRun = bMessages[0]?.runId;
    // On A's side the hand-off belongs to A's run; on B's side to the run it started.
    expect(aMessages).toEqual([
      { runId: result.runId, kind: 'delegate', from: 'a', to: 'b', correlationId },
      { runId: result.runId, kind: 'delegate.result', from: 'b', to: 'a', correlationId },
    ]);
    expect(bMessages).toEqual([
      { runId: bRun, kind: 'delegate', from: 'a', to: 'b', correlationId },
      { runId: bRun, kind: 'delegate.result', from: 'b', to: 'a', correlationId },
    ]);
    // A's side names the run the hand-off started, so a reader of A's journal can follow it into B's.
    const handOffs = a.agent.journal.entries(result.runId).flatMap((e) => (e.event.type === 'agent.message' && e.event.kind.startsWith('delegate') ? [e.event.runId] : []));
    expect(handOffs).toEqual([bRun, bRun]);
    // Order in A's run: the call starts, the request goes out, the answer returns, the call ends.
    const aRun: string[] = a.agent.journal.entries(result.runId).map((e) => (e.event.type === 'agent.message' ? e.event.kind : e.event.type));
    const at = (type: string) => aRun.indexOf(type);
    expect(at('tool.started')).toBeLessThan(at('delegate'));
    expect(at('delegate')).toBeLessThan(at('delegate.result'));
    expect(at('delegate.result')).toBeLessThan(at('tool.finished'));
    // In B's run: the request precedes the run, the result follows its end.
    const bEntries = b.agent.journal.entries(bRun).map((e) => (e.event.type === 'agent.message' ? e.event.kind : e.event.type));
    expect(bEntries[0]).toBe('delegate');
    expect(bEntries.at(-1)).toBe('delegate.result');
    expect(bEntries.at(-2)).toBe('run.terminated');
  });

  it("puts the delegating run's messages on A's own events$ and into its persisted journal, in sequence", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'actorloop-delegate-'));
    try {
      const { system } = trackedSystem();
      system.spawn('b', { model: scriptedModel([{ text: 'B found 42' }]) });
      const store = createFileStore({ dir });
      const a = system.spawn('a', { model: delegating('delegate_to_b', 'find it'), tools: [system.delegateTool('b')], persistence: { store } });
      const onEvents: string[] = [];
      a.agent.events$.subscribe(({ event }) => event.type === 'agent.message' && onEvents.push(event.kind));
      const result = await system.ask('a', 'solve it');
      expect(onEvents).toEqual(['delegate', 'delegate.result']);
      const persisted = store.readJournal(result.runId).entries;
      expect(persisted.filter((e) => e.event.type === 'agent.message').map((e) => (e.event as { kind: string }).kind)).toEqual([
        'delegate',
        'delegate.result',
      ]);
      const sequences = persisted.map((e) => e.sequence);
      expect(sequences).toEqual(sequences.map((_, i) => i));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("returns B's failure to A's model as an error observation, and A still finishes", async () => {
    const { system } = trackedSystem();
    system.spawn('b', { model: scriptedModel([{ error: new Error('provider down') }]) });
    const aModel = delegating('delegate_to_b', 'try');
    system.spawn('a', { model: aModel, tools: [system.delegateTool('b')] });

    const result = await system.ask('a', 'solve it');

    expect(result.status).toBe('done');
    const [reply] = toolReplies(aModel.calls[1]?.messages ?? []);
    expect(reply?.content).toMatch(/provider down/);
  });

  it('cancels the delegated run when the delegating run is cancelled', async () => {
    const { system } = trackedSystem();
    const b = system.spawn('b', { model: scriptedModel([{ text: 'never', delayMs: 60_000 }]) });
    system.spawn('a', { model: delegating('delegate_to_b', 'slow'), tools: [system.delegateTool('b')] });
    const controller = new AbortController();
    const bStarted = nextEvent(system.events$, 'run.started', 'b');
    const answer = system.ask('a', 'solve it', { signal: controller.signal });
    const { runId } = await bStarted;

    controller.abort(new Error('stop'));
    await expect(answer).rejects.toThrow('stop');
    // The abort travels A's task → A's run → the tool's signal → B's task → B's run, synchronously.
    const end = b.agent.journal.entries(runId).find((e) => e.event.type === 'run.terminated');
    expect(end?.event).toMatchObject({ reason: 'cancelled' });
    expect(b.actor.getSnapshot().context.running).toEqual([]);
  });

  it('refuses a delegation back to an agent whose every slot waits on it, instead of deadlocking until the ask times out', async () => {
    const { system } = trackedSystem();
    // A (one task at a time) delegates to B; B's model tries to hand work back to A.
    const bModel = scriptedModel([{ toolCalls: [{ name: 'delegate_to_a', arguments: { task: 'back to you' } }] }, { text: 'B gave up on A' }]);
    system.spawn('b', { model: bModel, tools: [system.delegateTool('a', { timeoutMs: 600_000 })] });
    const aModel = delegating('delegate_to_b', 'help');
    system.spawn('a', { model: aModel, tools: [system.delegateTool('b', { timeoutMs: 600_000 })] });

    await expect(system.ask('a', 'solve it', { timeoutMs: 600_000 })).resolves.toMatchObject({ text: 'A is done' });
    const [back] = toolReplies(bModel.calls[1]?.messages ?? []);
    expect(back?.content).toMatch(/"a" is waiting on this delegation/);
    // A ran once: the hand-back never reached its queue.
    expect(aModel.calls).toHaveLength(2);
  }, 20_000);

  it('lets a delegation go back to an agent that still has a free slot', async () => {
    const { system } = trackedSystem();
    const bModel = scriptedModel([{ toolCalls: [{ name: 'delegate_to_a', arguments: { task: 'back to you' } }] }, { text: 'B used A' }]);
    system.spawn('b', { model: bModel, tools: [system.delegateTool('a')] });
    const aModel = scriptedModel([{ toolCalls: [{ name: 'delegate_to_b', arguments: { task: 'help' } }] }, { text: 'A answered B' }, { text: 'A is done' }]);
    system.spawn('a', { model: aModel, tools: [system.delegateTool('b')] }, { concurrency: 2 });

    await expect(system.ask('a', 'solve it')).resolves.toMatchObject({ text: 'A is done' });
    const [back] = toolReplies(bModel.calls[1]?.messages ?? []);
    expect(back?.content).toBe('A answered B');
  }, 20_000);

  it('names and describes the tool, with overrides', () => {
    const { system } = trackedSystem();
    const tool = system.delegateTool('research.team');
    expect(tool.name).toBe('delegate_to_research_team');
    expect(delegateToolName('x'.repeat(80))).toHaveLength(64);
    expect(tool.description).toContain('"research.team"');
    expect(tool.spec.parameters).toMatchObject({ required: ['task'], additionalProperties: false });
    // The executor's 30 s tool timeout must not cut a sub-agent's run short.
    expect(tool.timeoutMs).toBe(5 * 60_000);
    const custom = system.delegateTool('b', { name: 'ask_researcher', description: 'Find sources.', timeoutMs: 1_000 });
    expect([custom.name, custom.description, custom.timeoutMs]).toEqual(['ask_researcher', 'Find sources.', 1_000]);
  });

  it('tells the model when the target is unknown or itself, without running anything', async () => {
    const { system } = trackedSystem();
    const aModel = scriptedModel([
      { toolCalls: [{ name: 'delegate_to_ghost', arguments: { task: 'x' } }, { name: 'delegate_to_a', arguments: { task: 'y' } }] },
      { text: 'gave up' },
    ]);
    system.spawn('a', { model: aModel, tools: [system.delegateTool('ghost'), system.delegateTool('a')] });
    await expect(system.ask('a', 'go')).resolves.toMatchObject({ text: 'gave up' });
    const [ghost, self] = toolReplies(aModel.calls[1]?.messages ?? []);
    expect(ghost?.content).toMatch(/No agent "ghost"/);
    expect(self?.content).toMatch(/cannot delegate to itself/);
  });
});
