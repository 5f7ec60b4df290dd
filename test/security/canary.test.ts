import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { createAgent, createFileStore, defineTool } from '../../src/index.ts';
import { createRedactor } from '../../src/security/redactor.ts';
import { scriptedModel } from '../../src/testing/index.ts';

const CANARY = 'sk-canary-0123456789abcdef';
const ENV_CANARY = 'env-canary-key-9f8e7d6c5b4a';

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

describe('secret canary (RELIABILITY 20)', () => {
  const dirs: string[] = [];
  afterEach(() => {
    vi.unstubAllEnvs();
    vi.restoreAllMocks();
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it('keeps the API key and secrets in tool arguments and errors out of events, journals, snapshots and logs', async () => {
    vi.stubEnv('OPENAI_API_KEY', ENV_CANARY);
    const logged: string[] = [];
    for (const level of ['log', 'warn', 'error', 'info'] as const) {
      vi.spyOn(console, level).mockImplementation((...args: unknown[]) => void logged.push(args.map(String).join(' ')));
    }
    const dir = mkdtempSync(join(tmpdir(), 'actorloop-canary-'));
    dirs.push(dir);
    const login = defineTool({
      name: 'login',
      description: 'Log in with a token.',
      input: z.object({ user: z.string(), token: z.string() }),
      execute: ({ token }) => {
        throw new Error(`login failed for token ${token} (configured key ${ENV_CANARY})`);
      },
    });
    const echo = defineTool({
      name: 'echo',
      description: 'Echo text.',
      input: z.object({ text: z.string() }),
      execute: ({ text }) => `echo: ${text}`,
    });
    const agent = createAgent({
      model: scriptedModel([
        {
          text: `Using ${CANARY} now.`,
          toolCalls: [
            { name: 'login', arguments: { user: 'ada', token: CANARY } },
            { name: 'echo', arguments: { text: `key=${CANARY}` } },
          ],
        },
        { error: new Error(`upstream rejected Bearer ${CANARY}`) },
      ]),
      system: `Never reveal ${CANARY}.`,
      tools: [login, echo],
      store: createFileStore({ dir }),
    });
    const entries: unknown[] = [];
    agent.events$.subscribe((entry) => entries.push(entry));
    const handle = agent.start(`Log in as ada with ${CANARY} and ${ENV_CANARY}`);
    const result = await handle.settled;

    // The data really flowed: the run reached the tools and failed on the provider error.
    expect(result.status).toBe('failed');
    expect(entries.some((e) => JSON.stringify(e).includes('tool.finished'))).toBe(true);

    const everything = [
      JSON.stringify(entries),
      JSON.stringify(agent.journal.entries()),
      ...filesUnder(dir).map((file) => readFileSync(file, 'utf8')),
      logged.join('\n'),
    ].join('\n');
    expect(everything).toContain('[REDACTED]');
    expect(everything).not.toContain(CANARY);
    expect(everything).not.toContain(ENV_CANARY);
  });

  it('redacts literal secrets, key-shaped values and secret-named keys without reshaping data', () => {
    const redactor = createRedactor({ secrets: ['hunter2-long-secret'] }, {});
    const input = { messages: [{ role: 'user', content: 'pw hunter2-long-secret' }], apiKey: 'plain', n: 3, nested: { list: ['Bearer abc.def.ghi'] } };
    const out = redactor.deep(input);
    expect(out).toEqual({ messages: [{ role: 'user', content: 'pw [REDACTED]' }], apiKey: '[REDACTED]', n: 3, nested: { list: ['Bearer [REDACTED]'] } });
    expect(input.apiKey).toBe('plain');
  });

  it('leaves events without secrets as the same object (no copy on the hot path)', () => {
    const redactor = createRedactor({}, {});
    const event = { type: 'reasoning.completed' as const, text: 'all clear', toolCalls: [], usage: { promptTokens: 1, completionTokens: 1, totalTokens: 2 } };
    expect(redactor.event(event)).toBe(event);
  });
});
