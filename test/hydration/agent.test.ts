/**
 * Pre-hydration through `createAgent`: the hydrator runs once before the first model call, and
 * the first request already holds the `[PRE_HYDRATED_CONTEXT]` message, right before the task.
 * The second half uses the real built-in tools against a local server and a temp folder.
 */
import { contentText } from '../../src/core/messages.ts';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createAgent } from '../../src/agent/createAgent.ts';
import type { LoopEventOf } from '../../src/core/loopEvent.ts';
import { createPreHydrator } from '../../src/hydration/createPreHydrator.ts';
import { PRE_HYDRATED_CONTEXT_TAG } from '../../src/hydration/format.ts';
import { scriptedModel } from '../../src/testing/index.ts';
import { fileRead } from '../../src/tools/builtin/fileRead.ts';
import { webFetch } from '../../src/tools/builtin/webFetch.ts';
import { guardLoopbackOnly, startLocalServer, type LocalServer } from '../tools/builtin/support.ts';

let server: LocalServer;
let guard: ReturnType<typeof guardLoopbackOnly>;
let root: string;

beforeAll(async () => {
  guard = guardLoopbackOnly();
  server = await startLocalServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'text/plain' });
    response.end('The spec says: retries are capped at 3.');
  });
  root = mkdtempSync(path.join(tmpdir(), 'actorloop-hydrate-'));
  mkdirSync(path.join(root, 'docs'));
  writeFileSync(path.join(root, 'docs', 'spec.md'), 'Local notes: retries are capped at 5.');
});

afterAll(async () => {
  await server.close();
  guard.restore();
  rmSync(root, { recursive: true, force: true });
});

afterEach(() => {
  expect(guard.violations).toEqual([]);
});

function completedEvent(agent: ReturnType<typeof createAgent>, runId: string): LoopEventOf<'prehydration.completed'>[] {
  return agent.journal
    .entries(runId)
    .map((entry) => entry.event)
    .filter((event): event is LoopEventOf<'prehydration.completed'> => event.type === 'prehydration.completed');
}

describe('pre-hydration in an agent run', () => {
  it('puts the [PRE_HYDRATED_CONTEXT] message in the first request, after the system prompt and before the task', async () => {
    const model = scriptedModel([{ text: 'done' }]);
    const task = 'Summarise https://a.test/spec and #42';
    const agent = createAgent({
      model,
      system: 'You are careful.',
      context: { experimental_hydrator: createPreHydrator({ resolvers: { url: () => 'SPEC TEXT', issue: () => 'ISSUE TEXT' } }) },
    });
    const result = await agent.run(task);
    const first = model.calls[0]!.messages;
    expect(first.map((m) => m.role)).toEqual(['system', 'user', 'user']);
    expect(first[0]!.content).toBe('You are careful.');
    expect(contentText(first[1]!.content ?? '').startsWith(PRE_HYDRATED_CONTEXT_TAG)).toBe(true);
    expect(first[1]!.content).toContain('SPEC TEXT');
    expect(first[1]!.content).toContain('ISSUE TEXT');
    expect(first[2]).toEqual({ role: 'user', content: task });
    expect(completedEvent(agent, result.runId)).toEqual([
      { type: 'prehydration.completed', found: 2, resolved: 2, failed: 0, tokens: Math.ceil(first[1]!.content!.length / 4) },
    ]);
  });

  it('leaves the first request alone when nothing resolves, and the run still succeeds', async () => {
    const model = scriptedModel([{ text: 'done' }]);
    const agent = createAgent({ model, context: { experimental_hydrator: createPreHydrator({ resolvers: { url: () => Promise.reject(new Error('down')) } }) } });
    const result = await agent.run('Look at https://a.test/');
    expect(result.status).toBe('done');
    expect(model.calls[0]!.messages).toEqual([{ role: 'user', content: 'Look at https://a.test/' }]);
    expect(completedEvent(agent, result.runId)[0]).toMatchObject({ found: 1, resolved: 0, failed: 1 });
  });

  it('resolves through web_fetch and file_read, and refuses the metadata URL a task slips in', async () => {
    const model = scriptedModel([{ text: 'done' }]);
    const tools = { url: webFetch({ allowHosts: ['127.0.0.1'] }), file: fileRead({ root }) };
    const agent = createAgent({ model, context: { experimental_hydrator: createPreHydrator({ resolvers: tools }) } });
    const task = `Compare ${server.url('/spec')} with docs/spec.md, and also read http://169.254.169.254/latest/meta-data/ and ../etc/passwd`;
    const result = await agent.run(task);
    const context = model.calls[0]!.messages[0]!.content!;
    expect(context).toContain('The spec says: retries are capped at 3.');
    expect(context).toContain('Local notes: retries are capped at 5.');
    expect(context).toMatch(/- url "http:\/\/169\.254\.169\.254\/latest\/meta-data\/": WebFetchError: web_fetch refused .*link-local/);
    expect(context).toMatch(/- file "\.\.\/etc\/passwd": FileReadError: file_read refused/);
    expect(completedEvent(agent, result.runId)[0]).toMatchObject({ found: 4, resolved: 2, failed: 2 });
  });
});
