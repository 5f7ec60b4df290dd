/**
 * `agent.session(id)` as a user meets it: a conversation continued across runs, across agents on
 * the same folder (as another process would), with a memory its tools share through
 * `ctx.session`, and secrets kept out of the session file.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent, type Agent, type AgentConfig } from '../../src/agent/createAgent.ts';
import type { Message } from '../../src/core/messages.ts';
import { scriptedModel } from '../../src/testing/index.ts';
import { defineTool } from '../../src/tools/defineTool.ts';

const agents: Agent[] = [];
const dirs: string[] = [];
afterEach(() => {
  for (const agent of agents.splice(0)) agent.stop();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function agentWith(config: AgentConfig): Agent {
  const agent = createAgent(config);
  agents.push(agent);
  return agent;
}

function sessionDir(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'actorloop-sessions-'));
  dirs.push(dir);
  return dir;
}

const contents = (messages: readonly Message[] | undefined) => (messages ?? []).map((m) => `${m.role}:${m.content ?? ''}`);

/** Remembers a note in the session's memory, or reads it back. */
const notes = defineTool({
  name: 'notes',
  description: 'Keep or read the note',
  input: z.object({ write: z.string().optional() }),
  execute: async ({ write }, ctx) => {
    if (ctx.session === undefined) return 'no session';
    if (write !== undefined) {
      await ctx.session.set('note', write);
      return 'kept';
    }
    return String(ctx.session.get('note') ?? 'nothing');
  },
});

describe('agent.session', () => {
  it('each run continues the conversation where the last one ended', async () => {
    const model = scriptedModel([{ text: 'Hello Ada.' }, { text: 'Your name is Ada.' }]);
    const agent = agentWith({ model, system: 'Be brief.' });
    const session = await agent.session('chat-1');
    await session.run('My name is Ada.');
    const second = await session.run('What is my name?');
    expect(second.text).toBe('Your name is Ada.');
    expect(contents(model.calls[1]?.messages)).toEqual(['system:Be brief.', 'user:My name is Ada.', 'assistant:Hello Ada.', 'user:What is my name?']);
    expect(contents(session.history())).toEqual(['user:My name is Ada.', 'assistant:Hello Ada.', 'user:What is my name?', 'assistant:Your name is Ada.']);
    await session.close();
  });

  it('survives the process: another agent on the same folder continues it, and tools share its memory', async () => {
    const dir = sessionDir();
    const first = agentWith({ model: scriptedModel([{ toolCalls: [{ name: 'notes', arguments: { write: 'blue' } }] }, { text: 'Noted.' }]), tools: [notes], memory: { sessions: { dir } } });
    const one = await first.session('support 42/ä');
    await one.run('Remember blue.');
    expect(one.memory('tools').get('note')).toBe('blue');
    await one.close();

    const model = scriptedModel([{ toolCalls: [{ name: 'notes', arguments: {} }] }, { text: 'It was blue.' }]);
    const second = agentWith({ model, tools: [notes], memory: { sessions: { dir } } });
    const two = await second.session('support 42/ä');
    const result = await two.run('What did I ask you to remember?');
    expect(contents(model.calls[0]?.messages).slice(0, 2)).toEqual(['user:Remember blue.', 'assistant:']);
    expect(result.messages.filter((m) => m.role === 'tool').at(-1)?.content).toBe('blue');
    await two.close();
  });

  it('a run that fails leaves the history as it was', async () => {
    const model = scriptedModel([{ text: 'Hi.' }, { toolCalls: [{ name: 'notes', arguments: {} }] }]);
    const agent = agentWith({ model, tools: [notes], limits: { maxIterations: 1 } });
    const session = await agent.session('chat-2');
    await session.run('Hello');
    await expect(session.run('Read the note')).rejects.toThrow();
    expect(contents(session.history())).toEqual(['user:Hello', 'assistant:Hi.']);
  });

  it('runs started together take turns, each starting from the last one', async () => {
    const model = scriptedModel([{ text: 'one', delayMs: 20 }, { text: 'two' }]);
    const agent = agentWith({ model });
    const session = await agent.session('chat-3');
    await Promise.all([session.run('first'), session.run('second')]);
    expect(contents(model.calls[1]?.messages)).toEqual(['user:first', 'assistant:one', 'user:second']);
  });

  it('keeps secrets out of the session file', async () => {
    const dir = sessionDir();
    const secret = 'sk-proj-abcdefghijklmnopqrstuvwxyz012345';
    const model = scriptedModel([{ toolCalls: [{ name: 'notes', arguments: { write: `key ${secret}` } }] }, { text: 'ok' }]);
    const agent = agentWith({ model, tools: [notes], memory: { sessions: { dir } } });
    const session = await agent.session('chat-4');
    await session.run(`Keep my key ${secret}`);
    await session.close();
    const files = readdirSync(dir).filter((name) => name.endsWith('.json'));
    expect(files).toHaveLength(1);
    const text = readFileSync(path.join(dir, files[0] as string), 'utf8');
    expect(text).toContain('Keep my key');
    expect(text).not.toContain(secret);
  });
});
