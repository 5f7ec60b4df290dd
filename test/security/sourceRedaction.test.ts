/**
 * Secrets are redacted at the source, before anything enters a run's machine: an API-key canary
 * that the model echoes (in its text and in tool arguments), that a tool returns, that a tool's
 * error carries, and that a human's rejection quotes appears in no snapshot (XState's own
 * `getPersistedSnapshot()` included, taken mid-run and at the end), no event, no log record and
 * no later model request. A real OpenAI-compatible server on 127.0.0.1 records the requests.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { createAgent, createFileStore, defineTool, openAICompatible } from '../../src/index.ts';
import type { JournalEntry } from '../../src/core/loopEvent.ts';
import { reply, useOpenAIServer } from '../support/openaiServer.ts';
import { humanAwaited, removeTempDirs, tempDir } from '../persistence/support.ts';

const CANARY = 'sk-canary-source-0123456789abcdef';

const openai = useOpenAIServer();
afterAll(removeTempDirs);
afterEach(() => {
  vi.unstubAllEnvs();
});

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

describe('redaction at the source', () => {
  it('keeps an API-key canary from the model, tool results and tool errors out of snapshots, events, records and model requests', async () => {
    vi.stubEnv('OPENAI_API_KEY', CANARY);
    const dir = tempDir();
    const lookup = defineTool({
      name: 'lookup',
      description: 'Look a key up.',
      input: z.object({ key: z.string() }),
      execute: ({ key }) => ({ found: key, stored: CANARY }),
    });
    const login = defineTool({
      name: 'login',
      description: 'Log in.',
      input: z.object({ token: z.string() }),
      execute: () => {
        throw new Error(`login refused for key ${CANARY}`);
      },
    });
    const deploy = defineTool({ name: 'deploy', description: 'Deploy.', input: z.object({}), requiresConfirmation: true, execute: () => 'deployed' });
    openai().enqueue(
      reply.completion({
        textPieces: [`I will use ${CANARY}.`],
        toolCalls: [
          { id: 'call_a', name: 'lookup', argumentPieces: [JSON.stringify({ key: CANARY })] },
          { id: 'call_b', name: 'login', argumentPieces: [JSON.stringify({ token: CANARY })] },
          { id: 'call_c', name: 'deploy', argumentPieces: ['{}'] },
        ],
      }),
      reply.completion({ textPieces: [`Done with ${CANARY}.`] }),
    );
    // The key comes from the environment, as a user would set it.
    const model = openAICompatible({ baseURL: openai().baseURL, model: 'gpt-4o-mini', timeoutMs: 10_000 });
    const agent = createAgent({ model, tools: [lookup, login, deploy], persistence: { store: createFileStore({ dir }) } });
    const entries: JournalEntry[] = [];
    agent.events$.subscribe((entry) => entries.push(entry));

    const handle = agent.start(`Deploy with key ${CANARY}`);
    await humanAwaited(handle);
    const snapshots = [JSON.stringify(handle.actor.getPersistedSnapshot())];
    handle.reject(`not with ${CANARY}`);
    const result = await handle.settled;
    snapshots.push(JSON.stringify(handle.actor.getPersistedSnapshot()));

    expect(result.status).toBe('done');
    // The secret really was there: the server's replies carried it, and the key authenticated each request.
    expect(openai().requests).toHaveLength(2);
    expect(openai().requests.every((request) => request.headers.authorization === `Bearer ${CANARY}`)).toBe(true);
    const sent = openai().requests.map((request) => JSON.stringify(request.body)).join('\n');
    const everything = [...snapshots, JSON.stringify(entries), JSON.stringify(result), sent, ...filesUnder(dir).map((file) => readFileSync(file, 'utf8'))];
    for (const text of everything) expect(text).not.toContain(CANARY);
    // …and flowed through, redacted: the model's text, the tool's result and error, the rejection.
    expect(snapshots[0]).toContain('I will use [REDACTED].');
    expect(sent).toContain('[REDACTED]');
    const tool = (id: string) => result.messages.find((m) => m.role === 'tool' && m.toolCallId === id)?.content ?? '';
    expect(tool('call_a')).toContain('[REDACTED]');
    expect(tool('call_b')).toContain('login refused for key [REDACTED]');
    expect(tool('call_c')).toContain('not with [REDACTED]');
    expect(result.text).toBe('Done with [REDACTED].');
  });
});
