/**
 * Lifecycle hooks, through `createAgent` against a scripted model whose recorded requests show
 * what the model was sent: what each hook sees, what its decisions change, that each call is a
 * `hook.completed` event, and that a hook that throws, hangs or answers nonsense fails the run
 * closed with a `HookError` (`hook_failed`) naming it.
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent, type Agent, type AgentConfig } from '../../src/agent/createAgent.ts';
import type { AgentHooks } from '../../src/core/hooks.ts';
import { ConfigurationError } from '../../src/core/errors.ts';
import type { JournalEntry, LoopEventOf } from '../../src/core/loopEvent.ts';
import type { Message } from '../../src/core/messages.ts';
import { createFileStore } from '../../src/persistence/fileStore.ts';
import { gates } from '../../src/policy/gates.ts';
import { scriptedModel } from '../../src/testing/index.ts';
import { defineTool } from '../../src/tools/defineTool.ts';
import { removeTempDirs, tempDir } from '../persistence/support.ts';
import { InferenceError } from '../../src/inference/errors.ts';
import type { HookError } from '../../src/agent/errors.ts';

const agents: Agent[] = [];
afterEach(() => {
  for (const agent of agents.splice(0)) agent.stop();
});
afterAll(removeTempDirs);

function agentWith(config: AgentConfig): { agent: Agent; entries: JournalEntry[] } {
  const agent = createAgent(config);
  agents.push(agent);
  const entries: JournalEntry[] = [];
  agent.events$.subscribe((entry) => entries.push(entry));
  return { agent, entries };
}

function echo(executed: unknown[] = [], options: { requiresConfirmation?: boolean; untrusted?: boolean } = {}) {
  return defineTool({
    name: 'echo',
    description: 'Echo a word',
    input: z.object({ word: z.string().max(10) }),
    ...options,
    execute: ({ word }) => {
      executed.push(word);
      return `echo ${word}`;
    },
  });
}

const hookEvents = (entries: readonly JournalEntry[]) =>
  entries.flatMap((entry) => (entry.event.type === 'hook.completed' ? [entry.event as LoopEventOf<'hook.completed'>] : []));
const toolMessages = (messages: readonly Message[]) => messages.filter((m) => m.role === 'tool').map((m) => m.content);
const echoOnce = () => scriptedModel([{ toolCalls: [{ name: 'echo', arguments: { word: 'hi' } }] }, { text: 'done' }]);

describe('beforeModelCall', () => {
  it('changes the request the model is sent, and is journalled as a modify', async () => {
    const model = scriptedModel([{ text: 'ok' }]);
    const hooks: AgentHooks = {
      beforeModelCall: (request) => ({ kind: 'modify', request: { messages: [...request.messages, { role: 'user', content: 'Answer in French.' }], model: 'other-model' }, reason: 'locale' }),
    };
    const { agent, entries } = agentWith({ model, hooks });
    const result = await agent.run('Hello');
    expect(model.calls[0]?.messages.at(-1)).toEqual({ role: 'user', content: 'Answer in French.' });
    expect(model.calls[0]?.model).toBe('other-model');
    // The stored conversation is the run's, not the hook's view of it.
    expect(result.messages.map((m) => m.content)).toEqual(['Hello', 'ok']);
    expect(hookEvents(entries)).toEqual([expect.objectContaining({ hook: 'beforeModelCall', decision: 'modify', reason: 'locale', durationMs: expect.any(Number) })]);
  });

  it('blocks the call: no request is sent and the run fails with HookError (model_call_blocked) and the reason', async () => {
    const model = scriptedModel([{ text: 'never' }]);
    const { agent, entries } = agentWith({ model, hooks: { beforeModelCall: () => ({ kind: 'block', reason: 'outside office hours' }) } });
    const error: unknown = await agent.run('Hello').catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'model_call_blocked' });
    expect((error as HookError).reason).toBe('outside office hours');
    expect(model.calls).toHaveLength(0);
    expect(hookEvents(entries)).toEqual([expect.objectContaining({ hook: 'beforeModelCall', decision: 'block', reason: 'outside office hours' })]);
    expect(entries.at(-1)?.event).toMatchObject({ type: 'run.terminated', reason: 'error', error: { code: 'model_call_blocked' } });
  });

  it('sees the request as it will be sent, and what it adds is redacted before it goes', async () => {
    const model = scriptedModel([{ text: 'ok' }]);
    const seen: number[] = [];
    const hooks: AgentHooks = {
      beforeModelCall: (request) => {
        seen.push(request.messages.length);
        return { kind: 'modify', request: { messages: [...request.messages, { role: 'user', content: 'key sk-proj-abcdefghijklmnopqrstuvwxyz0123' }] } };
      },
    };
    const { agent } = agentWith({ model, hooks });
    await agent.run('Hello');
    expect(seen).toEqual([1]);
    expect(JSON.stringify(model.calls[0]?.messages)).not.toContain('sk-proj-abcdefghijklmnopqrstuvwxyz0123');
  });
});

describe('afterModelCall', () => {
  it('sees each reply with secrets already redacted', async () => {
    const replies: (string | null)[] = [];
    const model = scriptedModel([{ toolCalls: [{ name: 'echo', arguments: { word: 'hi' } }] }, { text: 'the key is sk-proj-abcdefghijklmnopqrstuvwxyz0123' }]);
    const { agent } = agentWith({ model, tools: [echo()], hooks: { afterModelCall: (reply) => void replies.push(reply.toolCalls.length > 0 ? `calls:${reply.toolCalls.length}` : reply.text) } });
    await agent.run('Hello');
    expect(replies).toHaveLength(2);
    expect(replies[0]).toBe('calls:1');
    expect(replies[1]).not.toContain('sk-proj-abcdefghijklmnopqrstuvwxyz0123');
  });
});

describe('beforeToolCall', () => {
  it('denies a call: the tool does not run and the model reads the reason', async () => {
    const executed: unknown[] = [];
    const model = echoOnce();
    const { agent, entries } = agentWith({ model, tools: [echo(executed)], hooks: { beforeToolCall: () => ({ kind: 'deny', reason: 'echo is switched off' }) } });
    const result = await agent.run('Say hi');
    expect(executed).toEqual([]);
    expect(toolMessages(result.messages)).toEqual(['Denied by the beforeToolCall hook: echo is switched off']);
    expect(entries.map((e) => e.event)).toContainEqual(expect.objectContaining({ type: 'policy.evaluated', decision: 'deny' }));
    expect(hookEvents(entries)).toEqual([expect.objectContaining({ hook: 'beforeToolCall', decision: 'deny', toolCallId: expect.any(String) })]);
  });

  it('modifies the arguments, checked against the tool schema again', async () => {
    const executed: unknown[] = [];
    const { agent } = agentWith({ model: echoOnce(), tools: [echo(executed)], hooks: { beforeToolCall: (call) => ({ kind: 'modify', arguments: { word: `${(call.arguments as { word: string }).word}!` } }) } });
    await agent.run('Say hi');
    expect(executed).toEqual(['hi!']);

    const refused: unknown[] = [];
    const bad = agentWith({ model: echoOnce(), tools: [echo(refused)], hooks: { beforeToolCall: () => ({ kind: 'modify', arguments: { word: 'far too long a word' } }) } });
    const result = await bad.agent.run('Say hi');
    expect(refused).toEqual([]);
    expect(toolMessages(result.messages)[0]).toContain('does not accept');
  });

  it('approves a call that would wait for a human: it runs at once', async () => {
    const executed: unknown[] = [];
    const verdicts: string[] = [];
    const { agent, entries } = agentWith({
      model: echoOnce(),
      tools: [echo(executed, { requiresConfirmation: true })],
      hooks: { beforeToolCall: (call) => (verdicts.push(call.verdict), { kind: 'approve', reason: 'echo is harmless' }) },
    });
    const result = await agent.run('Say hi');
    expect(result.status).toBe('done');
    expect(verdicts).toEqual(['confirm']);
    expect(executed).toEqual(['hi']);
    expect(entries.some((e) => e.event.type === 'human.awaiting')).toBe(false);
  });

  it('is not asked about a call the gate already denied', async () => {
    let asked = 0;
    const { agent } = agentWith({ model: echoOnce(), tools: [echo()], policy: { gate: gates.rules({ deny: ['echo'] }) }, hooks: { beforeToolCall: () => void asked++ } });
    await agent.run('Say hi');
    expect(asked).toBe(0);
  });
});

describe('afterToolCall', () => {
  it('rewrites what the model reads; the rewrite is redacted and an untrusted tool is fenced again', async () => {
    const model = echoOnce();
    const seen: string[] = [];
    const hooks: AgentHooks = {
      afterToolCall: (result) => (seen.push(result.content), { kind: 'rewrite', content: `${result.content.toUpperCase()} sk-proj-abcdefghijklmnopqrstuvwxyz0123` }),
    };
    const { agent } = agentWith({ model, tools: [echo([], { untrusted: true })], policy: { taint: false }, hooks });
    const result = await agent.run('Say hi');
    // The hook saw the tool's own text, not the fence around it.
    expect(seen).toEqual(['echo hi']);
    const [content] = toolMessages(result.messages);
    expect(content).toContain('ECHO HI');
    expect(content).toMatch(/^\[UNTRUSTED CONTENT from echo/);
    expect(content).not.toContain('sk-proj-abcdefghijklmnopqrstuvwxyz0123');
  });

  it('is recorded with the call: a resumed run reads the rewrite without calling the hook again', async () => {
    const store = createFileStore({ dir: tempDir() });
    let rewrites = 0;
    const hooks: AgentHooks = { afterToolCall: () => ({ kind: 'rewrite', content: `rewrite ${++rewrites}` }) };
    const down = scriptedModel([{ toolCalls: [{ name: 'echo', arguments: { word: 'hi' } }] }, { error: () => InferenceError.server('upstream unavailable', { status: 503 }) }]);
    const failed = await agentWith({ id: 'agent_hooks', model: down, tools: [echo()], persistence: { store }, hooks }).agent.start('Say hi', { runId: 'run_hooks' }).settled;
    expect(failed).toMatchObject({ status: 'failed', resumable: true });

    const back = scriptedModel([{ text: 'done' }]);
    const resumed = await agentWith({ id: 'agent_hooks', model: back, tools: [echo()], persistence: { store }, hooks }).agent.resume('run_hooks').settled;
    expect(resumed.status).toBe('done');
    expect(rewrites).toBe(1);
    expect(toolMessages(resumed.messages)).toEqual(['rewrite 1']);
  });
});

describe('onTurnStart and onTurnEnd', () => {
  const threeTurns = () =>
    scriptedModel([{ toolCalls: [{ name: 'echo', arguments: { word: 'a' } }] }, { toolCalls: [{ name: 'echo', arguments: { word: 'b' } }] }, { text: 'done' }]);

  it('run once per turn, in order; a turn ends with its observations or its answer', async () => {
    const log: string[] = [];
    const ends: Message[][] = [];
    const { agent } = agentWith({
      model: threeTurns(),
      tools: [echo()],
      hooks: {
        onTurnStart: (turn) => void log.push(`start ${turn.iteration}`),
        onTurnEnd: (turn) => void (log.push(`end ${turn.iteration}`), ends.push([...turn.messages])),
      },
    });
    await agent.run('Echo twice');
    expect(log).toEqual(['start 1', 'end 1', 'start 2', 'end 2', 'start 3', 'end 3']);
    expect(ends[0]?.at(-1)).toMatchObject({ role: 'tool', content: 'echo a' });
    expect(ends[2]?.at(-1)).toEqual({ role: 'assistant', content: 'done' });
  });

  it('end each turn once across a failure and its resume: the resumed run does not end the last turn again', async () => {
    const store = createFileStore({ dir: tempDir() });
    const log: string[] = [];
    const hooks: AgentHooks = { onTurnStart: (turn) => void log.push(`start ${turn.iteration}`), onTurnEnd: (turn) => void log.push(`end ${turn.iteration}`) };
    const down = scriptedModel([
      { toolCalls: [{ name: 'echo', arguments: { word: 'a' } }] },
      { toolCalls: [{ name: 'echo', arguments: { word: 'b' } }] },
      { error: () => InferenceError.server('upstream unavailable', { status: 503 }) },
    ]);
    const failed = await agentWith({ id: 'agent_turns', model: down, tools: [echo()], persistence: { store }, hooks }).agent.start('Echo twice', { runId: 'run_turns' }).settled;
    expect(failed).toMatchObject({ status: 'failed', resumable: true });
    const resumed = await agentWith({ id: 'agent_turns', model: scriptedModel([{ text: 'done' }]), tools: [echo()], persistence: { store }, hooks }).agent.resume('run_turns').settled;
    expect(resumed.status).toBe('done');
    // Turn 3's model call failed, so it starts again; turns 1 and 2 ended before the failure.
    expect(log).toEqual(['start 1', 'end 1', 'start 2', 'end 2', 'start 3', 'start 3', 'end 3']);
  });

  it('end the last turn when a limit stops the run after it', async () => {
    const ends: number[] = [];
    const { agent } = agentWith({ model: threeTurns(), tools: [echo()], limits: { maxIterations: 2 }, hooks: { onTurnEnd: (turn) => void ends.push(turn.iteration) } });
    const result = await agent.start('Echo twice').settled;
    expect(result.reason).toBe('max_iterations');
    expect(ends).toEqual([1, 2]);
  });
});

describe('onError', () => {
  it('hears of the error a phase failed with, and the run still fails with it', async () => {
    const heard: unknown[] = [];
    const boom = InferenceError.server('upstream unavailable', { status: 500 });
    const { agent } = agentWith({ model: scriptedModel([{ error: boom }]), hooks: { onError: (error) => void heard.push(error) } });
    const result = await agent.start('Hello').settled;
    expect(result).toMatchObject({ status: 'failed', error: { code: 'server_error' } });
    expect(heard).toEqual([boom]);
  });

  it('is not called for a cancelled run, and its own failure does not replace the error', async () => {
    const heard: unknown[] = [];
    const slow = scriptedModel([{ text: 'late', delayMs: 60_000 }]);
    const { agent } = agentWith({ model: slow, hooks: { onError: (error) => void heard.push(error) } });
    const run = agent.start('Hello');
    run.cancel();
    expect((await run.settled).status).toBe('cancelled');
    expect(heard).toEqual([]);

    const failing = agentWith({ model: scriptedModel([{ error: InferenceError.server('down', { status: 500 }) }]), hooks: { onError: () => { throw new Error('logger down'); } } });
    const result = await failing.agent.start('Hello').settled;
    expect(result.error?.code).toBe('server_error');
    expect(hookEvents(failing.entries)).toEqual([expect.objectContaining({ hook: 'onError', decision: 'failed' })]);
  });
});

describe('a hook that fails', () => {
  it('throws: the run fails closed with HookError (hook_failed) naming the hook, and the guarded call is not made', async () => {
    const executed: unknown[] = [];
    const { agent, entries } = agentWith({ model: echoOnce(), tools: [echo(executed)], hooks: { beforeToolCall: () => { throw new Error('policy service down'); } } });
    const error: unknown = await agent.run('Say hi').catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'hook_failed' });
    expect((error as HookError).hook).toBe('beforeToolCall');
    expect((error as HookError).message).toContain('policy service down');
    expect(executed).toEqual([]);
    expect(hookEvents(entries)).toEqual([expect.objectContaining({ hook: 'beforeToolCall', decision: 'failed' })]);
    expect(entries.at(-1)?.event).toMatchObject({ type: 'run.terminated', reason: 'error', error: { code: 'hook_failed' } });
  });

  it('never settles: fails with HookError (hook_failed) once hooks.timeoutMs has passed', async () => {
    const { agent } = agentWith({ model: scriptedModel([{ text: 'ok' }]), hooks: { timeoutMs: 20, onTurnStart: () => new Promise<void>(() => undefined) } });
    const error: unknown = await agent.run('Hello').catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'hook_failed' });
    expect((error as HookError).hook).toBe('onTurnStart');
    expect((error as HookError).message).toContain('did not settle within 20 ms');
  });

  it('answers something that is not a decision: HookError (hook_failed) saying what was wrong', async () => {
    const hooks = { beforeToolCall: () => ({ kind: 'allow' }) } as unknown as AgentHooks;
    const executed: unknown[] = [];
    const { agent } = agentWith({ model: echoOnce(), tools: [echo(executed)], hooks });
    const error: unknown = await agent.run('Say hi').catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'hook_failed' });
    expect((error as HookError).message).toMatch(/beforeToolCall hook answered wrongly.*not a decision/);
    expect(executed).toEqual([]);
  });

  it('async hooks are awaited and their decisions applied', async () => {
    const executed: unknown[] = [];
    const hooks: AgentHooks = { beforeToolCall: async () => (await new Promise((resolve) => setTimeout(resolve, 5)), { kind: 'deny', reason: 'later no' }) };
    const { agent } = agentWith({ model: echoOnce(), tools: [echo(executed)], hooks });
    const result = await agent.run('Say hi');
    expect(executed).toEqual([]);
    expect(toolMessages(result.messages)).toEqual(['Denied by the beforeToolCall hook: later no']);
  });
});

describe('hooks config', () => {
  const create = (config: unknown) => () => createAgent(config as AgentConfig);
  it('rejects unknown hooks, hooks that are not functions and a bad timeout, naming them', () => {
    const model = scriptedModel([]);
    expect(create({ model, hooks: { beforeCall: () => undefined } })).toThrow(/unknown hook `hooks\.beforeCall`/);
    expect(create({ model, hooks: { onTurnEnd: 'log' } })).toThrow(/`hooks\.onTurnEnd` must be a function/);
    expect(create({ model, hooks: { timeoutMs: 0 } })).toThrow(ConfigurationError);
    expect(create({ model, hooks: [] })).toThrow(/`hooks` must be an object/);
  });
});
