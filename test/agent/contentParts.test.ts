/**
 * Images and files in a task, end to end over HTTP: the real `openai` client sends them to a
 * local OpenAI-compatible server in the chat format; a part the run cannot send is refused with
 * ConversationError (invalid_content_part) before any request; a file-store run keeps the bytes once, outside its log,
 * and a resumed run (another agent, same store) sends the image again.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createAgent, type Agent, type AgentConfig } from '../../src/agent/createAgent.ts';
import { file, image } from '../../src/conversation/parts.ts';
import { openAICompatible } from '../../src/inference/openaiCompatible.ts';
import { defineTool } from '../../src/tools/defineTool.ts';
import { z } from 'zod';
import { createFileStore } from '../../src/persistence/fileStore.ts';
import { reply, useOpenAIServer } from '../support/openaiServer.ts';
import { removeTempDirs, runFiles, tempDir } from '../persistence/support.ts';

const openai = useOpenAIServer();
afterAll(removeTempDirs);
const agents: Agent[] = [];
afterEach(() => {
  for (const agent of agents.splice(0)) agent.stop();
});

/** A PNG header and enough noise that an inline copy in a log would be plain to see. */
const BIG_PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.from(Array.from({ length: 60_000 }, (_, i) => (i * 7919) % 251))]);
const BIG_PNG_BASE64 = BIG_PNG.toString('base64');
const PDF = Buffer.from('%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF');

function model(maxRetries = 0) {
  return openAICompatible({ baseURL: openai().baseURL, apiKey: 'test', model: 'gpt-4o-mini', env: {}, timeoutMs: 10_000, retry: { maxRetries, baseDelayMs: 1, maxDelayMs: 2 } });
}

function agentWith(config: Omit<AgentConfig, 'model'> & { vision?: boolean }): Agent {
  const { vision = true, ...rest } = config;
  const agent = createAgent({ model: { provider: model(), vision }, ...rest });
  agents.push(agent);
  return agent;
}

const userContent = (index: number): unknown => (openai().requests[index]?.body as { messages: { role: string; content: unknown }[] }).messages.find((m) => m.role === 'user')?.content;

describe('a task with images and files', () => {
  it('reaches the endpoint as text, image_url and file parts, in order', async () => {
    openai().enqueue(reply.completion({ textPieces: ['A cat and a report.'] }));
    const result = await agentWith({}).run(['Describe these', image('https://example.com/cat.png'), image(BIG_PNG), file(PDF, { filename: 'r.pdf' })]);
    expect(result.text).toBe('A cat and a report.');
    expect(userContent(0)).toEqual([
      { type: 'text', text: 'Describe these' },
      { type: 'image_url', image_url: { url: 'https://example.com/cat.png' } },
      { type: 'image_url', image_url: { url: `data:image/png;base64,${BIG_PNG_BASE64}` } },
      { type: 'file', file: { file_data: `data:application/pdf;base64,${PDF.toString('base64')}`, filename: 'r.pdf' } },
    ]);
    // The result's conversation holds the bytes by reference, not inline.
    expect(JSON.stringify(result.messages)).not.toContain(BIG_PNG_BASE64.slice(1000, 1100));
  });

  it('keeps a plain string task a plain string', async () => {
    openai().enqueue(reply.completion({ textPieces: ['hi'] }));
    await agentWith({}).run('Say hi');
    expect(userContent(0)).toBe('Say hi');
  });

  it('rejects an image over the limit with ConversationError (invalid_content_part), before any request', async () => {
    const agent = agentWith({ context: { content: { maxImageBytes: 1024 } } });
    const error = await agent.run(['Describe', image(BIG_PNG)]).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'invalid_content_part' });
    expect(error).toMatchObject({ problem: 'too_large' });
    expect(openai().requests).toHaveLength(0);
  });

  it('rejects an image for a model not declared to take images, and an unsupported media type', async () => {
    const noVision = await agentWith({ vision: false }).run(['Describe', image('https://example.com/cat.png')]).catch((e: unknown) => e);
    expect(noVision).toMatchObject({ name: 'ConversationError', problem: 'no_vision' });
    const tiff = await agentWith({}).run(['Describe', image(BIG_PNG, { mediaType: 'image/tiff' })]).catch((e: unknown) => e);
    expect(tiff).toMatchObject({ name: 'ConversationError', problem: 'unsupported' });
    expect(openai().requests).toHaveLength(0);
  });

  it('in a file-store run, stores the image once outside the log, and a resumed run sends it again', async () => {
    const dir = tempDir();
    const store = createFileStore({ dir });
    openai().enqueue(reply.error(503, 'upstream unavailable'));
    const first = createAgent({ id: 'agent_img', model: { provider: model(), vision: true }, persistence: { store } });
    agents.push(first);
    const failed = await first.start(['What is this?', image(BIG_PNG)], { runId: 'run_img' }).settled;
    expect(failed).toMatchObject({ status: 'failed', resumable: true });

    const log = readFileSync(runFiles(store, 'run_img').log, 'utf8');
    expect(log).not.toContain(BIG_PNG_BASE64.slice(1000, 1100));
    expect(readdirSync(join(dir, 'blobs'))).toHaveLength(1);

    // Another agent on the same store: the bytes come from the store's files, not this process's memory.
    openai().enqueue(reply.completion({ textPieces: ['A PNG.'] }));
    const second = createAgent({ id: 'agent_img', model: { provider: model(), vision: true }, persistence: { store: createFileStore({ dir }) } });
    agents.push(second);
    const resumed = await second.resume('run_img').result;
    expect(resumed.text).toBe('A PNG.');
    expect(openai().requests).toHaveLength(2);
    expect(userContent(1)).toEqual(userContent(0));
    expect(userContent(1)).toEqual([
      { type: 'text', text: 'What is this?' },
      { type: 'image_url', image_url: { url: `data:image/png;base64,${BIG_PNG_BASE64}` } },
    ]);
  });
});

describe('images a tool attaches', () => {
  it('tells the model which it could not send, rather than drop them unsaid', async () => {
    const shot = defineTool({
      name: 'screenshot',
      description: 'Screenshot the page',
      input: z.object({}),
      execute: (_input, context) => {
        // One the chat formats take, one they do not (BMP), one over the size limit.
        context.attachImages?.([
          { type: 'image', data: BIG_PNG_BASE64, mediaType: 'image/png' },
          { type: 'image', data: Buffer.from('BM fake bitmap').toString('base64'), mediaType: 'image/bmp' },
          { type: 'image', data: Buffer.concat([BIG_PNG, BIG_PNG]).toString('base64'), mediaType: 'image/png' },
        ]);
        return 'captured';
      },
    });
    openai().enqueue(
      reply.completion({ toolCalls: [{ id: 'c1', name: 'screenshot', argumentPieces: ['{}'] }] }),
      reply.completion({ textPieces: ['Seen.'] }),
    );
    const agent = agentWith({ tools: [shot], context: { content: { maxImageBytes: BIG_PNG.length + 10 } } });
    await agent.run('Look at the page');
    const messages = (openai().requests[1]?.body as { messages: { role: string; content: unknown; tool_call_id?: string }[] }).messages;
    const result = messages.find((m) => m.role === 'tool');
    expect(String(result?.content)).toContain('captured');
    expect(String(result?.content)).toMatch(/image 2 of 3 was not sent.*image\/bmp/);
    expect(String(result?.content)).toMatch(/image 3 of 3 was not sent.*limit/);
    expect(String(result?.content)).not.toMatch(/image 1 of 3/);
    // The image that could be sent is sent.
    const images = messages.filter((m) => m.role === 'user' && Array.isArray(m.content)).flatMap((m) => m.content as { type: string }[]).filter((part) => part.type === 'image_url');
    expect(images).toHaveLength(1);
  });
});
