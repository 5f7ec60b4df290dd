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

describe('secret canary', () => {
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
      persistence: { store: createFileStore({ dir }) },
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

  it('copies only the path to a secret: clean values come back as the same objects', () => {
    const redactor = createRedactor({}, {});
    const clean = { role: 'tool', toolCallId: 'call_1', content: '{"i":3}' };
    const dirty = { role: 'tool', content: 'Authorization: Bearer abc.def' };
    const input = { messages: [clean, dirty], limits: { maxIterations: 10 } };
    const out = redactor.deep(input);
    expect(out).not.toBe(input);
    expect(out.messages).not.toBe(input.messages);
    expect(out.messages[0]).toBe(clean);
    expect(out.limits).toBe(input.limits);
    expect(out.messages[1]).toEqual({ role: 'tool', content: 'Authorization: Bearer [REDACTED]' });
    expect(dirty.content).toBe('Authorization: Bearer abc.def');
    const untouched = { a: [1, 'two', { three: 3 }] };
    expect(redactor.deep(untouched)).toBe(untouched);
  });

  it('gives the same verdicts with its short-string memo, past the memo\'s capacity, and survives cycles', () => {
    const redactor = createRedactor({ secrets: ['pw-0123456789'] }, {});
    const strings = Array.from({ length: 3000 }, (_, i) => (i % 3 === 0 ? `key sk-${String(i).padStart(10, '0')}` : i % 3 === 1 ? `pw-0123456789 #${i}` : `plain ${i}`));
    for (let round = 0; round < 2; round++) {
      const out = redactor.deep(strings);
      out.forEach((value, i) => expect(value).toBe(redactor.text(strings[i] as string)));
      expect(out.filter((value) => value.includes('[REDACTED]'))).toHaveLength(2000);
    }
    const cyclic: Record<string, unknown> = { token: 'abc', name: 'loop' };
    cyclic.self = cyclic;
    const out = redactor.deep(cyclic) as Record<string, unknown>;
    expect(out.token).toBe('[REDACTED]');
    expect(out.name).toBe('loop');
  });

  it('redacts at any depth and ends on cycles of any length, copying only the path to a secret', () => {
    const redactor = createRedactor({}, {});
    type Node = { name: string; next?: Node; items?: unknown[]; password?: string };
    // 200 levels, a secret at the bottom: every level on the way is a copy, the originals untouched.
    const bottom: Node = { name: 'bottom', password: 'hunter2', items: ['Bearer abc.def.ghi'] };
    let deep: Node = bottom;
    for (let i = 0; i < 200; i++) deep = { name: `level ${i}`, items: [i], next: deep };
    let out = redactor.deep(deep);
    for (let level: Node = deep; level !== bottom; level = level.next as Node) {
      expect(out).not.toBe(level);
      expect(out.items).toBe(level.items);
      out = out.next as Node;
    }
    expect(out).toEqual({ name: 'bottom', password: '[REDACTED]', items: ['Bearer [REDACTED]'] });
    expect(bottom.password).toBe('hunter2');

    // Cycles through 1, 31, 32, 33 and 100 nodes, each node holding a secret: the walk ends.
    for (const length of [1, 31, 32, 33, 100]) {
      const ring: Node[] = Array.from({ length }, (_, i) => ({ name: `n${i}`, password: `pw-${i}` }));
      ring.forEach((node, i) => (node.next = ring[(i + 1) % length]));
      const first = redactor.deep(ring[0] as Node);
      expect(first.password).toBe('[REDACTED]');
      expect(first.next?.password).toBe('[REDACTED]');
    }
    const untouched = { a: { b: { c: [{ d: 'plain' }] } } };
    expect(redactor.deep(untouched)).toBe(untouched);
  });

  it('keeps each agent\'s own secrets, patterns and replacement when redactors share compiled rules', () => {
    const a = createRedactor({ secrets: ['alpha-secret-1'] }, {});
    const b = createRedactor({ secrets: ['bravo-secret-2'] }, {});
    const again = createRedactor({ secrets: ['alpha-secret-1'] }, {});
    const custom = createRedactor({ patterns: [/pin-\d{4}/], replacement: '***' }, {});
    const caseless = createRedactor({ patterns: [/pin-\d{4}/i], replacement: '***' }, {});
    const text = 'alpha-secret-1 bravo-secret-2 pin-1234 PIN-5678';
    expect(a.text(text)).toBe('[REDACTED] bravo-secret-2 pin-1234 PIN-5678');
    expect(b.text(text)).toBe('alpha-secret-1 [REDACTED] pin-1234 PIN-5678');
    expect(again.text(text)).toBe(a.text(text));
    expect(custom.text(text)).toBe('alpha-secret-1 bravo-secret-2 *** PIN-5678');
    expect(caseless.text(text)).toBe('alpha-secret-1 bravo-secret-2 *** ***');
    // An API key in the environment is a secret for redactors made while it is set.
    expect(createRedactor({}, { OPENAI_API_KEY: 'env-key-0123456789' }).text('k=env-key-0123456789 x')).toBe('k=[REDACTED] x');
    expect(createRedactor({}, {}).text('env-key-0123456789')).toBe('env-key-0123456789');
  });

  it('drops __proto__ keys that JSON.parse made own properties', () => {
    const redactor = createRedactor({}, {});
    const parsed = JSON.parse('{"a":1,"__proto__":{"polluted":true},"b":{"c":2}}') as Record<string, unknown>;
    const out = redactor.deep(parsed);
    expect(Object.keys(out)).toEqual(['a', 'b']);
    expect(Object.hasOwn(out, '__proto__')).toBe(false);
  });

  it('leaves events without secrets as the same object (no copy on the hot path)', () => {
    const redactor = createRedactor({}, {});
    const event = { type: 'reasoning.completed' as const, text: 'all clear', toolCalls: [], usage: { promptTokens: 1, completionTokens: 1, totalTokens: 2 } };
    expect(redactor.event(event)).toBe(event);
  });

  it("redacts secrets in the model's thinking, in completed replies and in streamed deltas", () => {
    const redactor = createRedactor({}, {});
    const usage = { promptTokens: 1, completionTokens: 1, totalTokens: 2 };
    const completed = redactor.event({ type: 'reasoning.completed', text: 'done', toolCalls: [], usage, reasoning: `I will use ${CANARY}.` });
    expect(JSON.stringify(completed)).not.toContain(CANARY);
    expect(completed).toMatchObject({ text: 'done' });
    // Deltas are redacted by their stream, which sees a secret across them.
    const stream = redactor.stream();
    const deltas = [stream.push(`key ${CANARY.slice(0, 9)}`), stream.push(`${CANARY.slice(9)} done`), stream.end()];
    expect(deltas.join('')).toBe('key [REDACTED] done');
  });

  it('redacts secrets in the tool arguments and observations events carry', () => {
    const redactor = createRedactor({}, {});
    const usage = { promptTokens: 1, completionTokens: 1, totalTokens: 2 };
    const calls = redactor.event({ type: 'reasoning.completed', text: null, toolCalls: [{ id: 'c1', name: 'login', arguments: `{"token":"${CANARY}"}` }, { id: 'c2', name: 'add', arguments: '{}' }], usage });
    expect(JSON.stringify(calls)).not.toContain(CANARY);
    expect(calls).toMatchObject({ toolCalls: [{ id: 'c1', name: 'login' }, { id: 'c2', arguments: '{}' }] });
    const observed = redactor.event({ type: 'observations.collected', count: 1, errors: 0, results: [{ toolCallId: 'c1', content: `logged in with ${CANARY}` }] });
    expect(JSON.stringify(observed)).not.toContain(CANARY);
    const clean = { type: 'observations.collected' as const, count: 1, errors: 0, results: [{ toolCallId: 'c2', content: '3' }] };
    expect(redactor.event(clean)).toBe(clean);
  });
});
