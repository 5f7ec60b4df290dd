/**
 * Request bodies and paths built to hurt the handler, over real HTTP on 127.0.0.1: each is a 4xx
 * with a one-line reason, never a 500, and the model is never called.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createFileStore } from '../../src/persistence/fileStore.ts';
import { scriptedModel } from '../../src/testing/index.ts';
import { createAgUiHandler } from '../../src/web/agUi.ts';
import { createAiSdkHandler } from '../../src/web/aiSdk.ts';
import { stopTrackedAgents, trackAgent } from '../support/agents.ts';
import { adderConfig } from './fixtures/adder.ts';
import { post, runInput, servedPerTest } from './support.ts';

const serve = servedPerTest();
const dirs: string[] = [];
afterEach(() => {
  stopTrackedAgents();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

async function refused(response: Response, status: number, says: RegExp): Promise<void> {
  const body = (await response.json()) as { error: { code: string; message: string } };
  expect({ status: response.status, code: body.error.code }).toEqual({ status, code: 'web_request' });
  expect(body.error.message).toMatch(says);
  expect(body.error.message).not.toContain('\n');
}

/** A JSON array of `count` zeros, as text: about two bytes an item. */
const zeros = (count: number): string => `[${'0,'.repeat(count - 1)}0]`;

describe('bad input to the web handlers', () => {
  it('refuses a body nested deeper than it reads with a 400, where a tool part copied whole would overflow the stack', async () => {
    const model = scriptedModel([{ text: 'never' }]);
    const { url } = await serve(createAiSdkHandler(trackAgent({ model })));
    const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
    const part = `{"type":"tool-add","toolCallId":"t1","state":"output-available","input":${deep},"output":1}`;
    const body = `{"id":"chat-1","messages":[{"id":"a1","role":"assistant","parts":[${part}]},{"id":"u1","role":"user","parts":[{"type":"text","text":"hi"}]}]}`;
    await refused(await post(url, body), 400, /deeper than 256 levels/);
    expect(model.calls).toHaveLength(0);
  });

  it('refuses a list of a million bad items at its first, without an issue for each (which overflowed the stack)', { timeout: 60_000 }, async () => {
    const model = scriptedModel([{ text: 'never' }]);
    const agent = trackAgent({ model });
    const aiSdk = await serve(createAiSdkHandler(agent));
    const agUi = await serve(createAgUiHandler(agent));
    const parts = `{"id":"chat-1","messages":[{"id":"u1","role":"user","parts":${zeros(1_900_000)}}]}`;
    await refused(await post(aiSdk.url, parts), 400, /messages\.0\.parts\.0: Invalid input/);
    const calls = JSON.stringify({ ...runInput('x', 'run-calls'), messages: [{ id: 'a1', role: 'assistant', toolCalls: 'CALLS' }, { id: 'u1', role: 'user', content: 'hi' }] }).replace('"CALLS"', zeros(1_900_000));
    await refused(await post(agUi.url, calls), 400, /messages\.0\.toolCalls\.0: Invalid input/);
    expect(model.calls).toHaveLength(0);
  });

  it('checks a decision\'s million bad call ids only to the first, at about the cost of a bad reason of the same bytes', { timeout: 120_000 }, async () => {
    const { url } = await serve(createAgUiHandler(trackAgent(adderConfig())));
    const took = async (body: string): Promise<number> => {
      const start = performance.now();
      await refused(await post(`${url}/runs/nope/approve`, body), 400, /toolCallIds\.0|reason/);
      return performance.now() - start;
    };
    // The same bytes to read and parse; only the call ids are items to check, and an issue made for each cost many times more.
    let ids = 0;
    let reason = 0;
    for (let round = 0; round < 3; round++) {
      ids += await took(`{"toolCallIds":${zeros(1_900_000)}}`);
      reason += await took(`{"reason":${zeros(1_900_000)}}`);
    }
    expect(ids / reason).toBeLessThan(5);
  });

  it('refuses an image or file whose data: URL does not carry base64, before the run starts', async () => {
    const model = scriptedModel([{ text: 'never' }]);
    const { url } = await serve(createAiSdkHandler(trackAgent({ model: { provider: model, vision: true } })));
    for (const [mediaType, data] of [['image/png', 'data:image/png;base64,@@not base64@@'], ['application/pdf', 'data:application/pdf;base64,JVBERi0=xyz']]) {
      const chat = { id: 'chat-1', messages: [{ id: 'u1', role: 'user', parts: [{ type: 'text', text: 'What is this?' }, { type: 'file', mediaType, url: data }] }] };
      await refused(await post(url, chat), 400, /Message 1, part 2 is a data: URL whose bytes are not base64/);
    }
    expect(model.calls).toHaveLength(0);
  });

  it('refuses history messages the conversation cannot hold with a 400 naming the message, not a 409', async () => {
    const model = scriptedModel([{ text: 'never' }]);
    const { url } = await serve(createAiSdkHandler(trackAgent({ model })));
    const call = { type: 'tool-add', toolCallId: '', state: 'output-available', input: { a: 1, b: 2 }, output: 3 };
    const chat = { id: 'chat-1', messages: [{ id: 'a1', role: 'assistant', parts: [call] }, { id: 'u1', role: 'user', parts: [{ type: 'text', text: 'And 2 + 2?' }] }] };
    await refused(await post(url, chat), 400, /Invalid conversation: Message 0 at toolCalls\.0\.id/);
    expect(model.calls).toHaveLength(0);
  });

  it('answers 404 for a run id in the path that the store cannot name a file by, to a stream and to a decision', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'actorloop-web-bad-'));
    dirs.push(dir);
    const agent = trackAgent({ ...adderConfig(), persistence: { store: createFileStore({ dir }) } });
    const { url } = await serve(createAgUiHandler(agent, { store: createFileStore({ dir }) }));
    for (const runId of ['a.b', 'a%20b', 'a%2Fb', 'x'.repeat(300)]) {
      await refused(await fetch(`${url}/runs/${runId}/stream`), 404, /No run/);
      await refused(await post(`${url}/runs/${runId}/approve`, {}), 404, /No run/);
      await refused(await post(`${url}/runs/${runId}/cancel`, {}), 404, /No run/);
    }
  });
});
