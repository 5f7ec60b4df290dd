/**
 * Content parts: how `image()` and `file()` build them, what `checkParts` refuses, and how both
 * chat formats carry them (OpenAI `image_url` / `file`, Anthropic `image` / `document`, and a
 * tool's images after its result or inside it).
 */
import { describe, expect, it } from 'vitest';
import { toAnthropicMessages } from '../../src/conversation/anthropic.ts';
import { toOpenAIMessages } from '../../src/conversation/openai.ts';
import { checkParts, file, image, taskContent } from '../../src/conversation/parts.ts';
import { validateConversation } from '../../src/conversation/validate.ts';
import type { Message } from '../../src/core/messages.ts';

const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';
const PDF = Buffer.from('%PDF-1.4\n%âãÏÓ\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF').toString('base64');

function thrown(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  throw new Error('expected a throw');
}

describe('building parts', () => {
  it('image() keeps an http URL, splits a data URL, and names bytes from their magic number', () => {
    expect(image('https://example.com/cat.png')).toEqual({ type: 'image', url: 'https://example.com/cat.png' });
    expect(image(`data:image/png;base64,${PNG}`)).toEqual({ type: 'image', data: PNG, mediaType: 'image/png' });
    expect(image(Buffer.from(PNG, 'base64'))).toEqual({ type: 'image', data: PNG, mediaType: 'image/png' });
    expect(image(Buffer.from([0xff, 0xd8, 0xff, 0xe0, 1, 2]))).toMatchObject({ mediaType: 'image/jpeg' });
  });

  it('image() of bytes it cannot name asks for the media type', () => {
    const error = thrown(() => image(Buffer.from('plain text')));
    expect(error).toMatchObject({ code: 'invalid_content_part' });
    expect(error).toMatchObject({ code: 'invalid_content_part', problem: 'unsupported' });
  });

  it('file() takes bytes as a PDF with an optional file name; strings in a task become text parts', () => {
    expect(file(Buffer.from(PDF, 'base64'), { filename: 'r.pdf' })).toEqual({ type: 'file', data: PDF, mediaType: 'application/pdf', filename: 'r.pdf' });
    expect(taskContent(['Look', image('https://x.test/a.png'), { type: 'image', url: `data:image/png;base64,${PNG}` }])).toEqual([
      { type: 'text', text: 'Look' },
      { type: 'image', url: 'https://x.test/a.png' },
      { type: 'image', data: PNG, mediaType: 'image/png' },
    ]);
    expect(thrown(() => checkParts([{ type: 'image', url: 'file:///etc/passwd' }], { vision: true }))).toMatchObject({ problem: 'unsupported' });
  });

  it('a user message of parts is a valid conversation message; an image with two sources is not', () => {
    expect(validateConversation([{ role: 'user', content: [{ type: 'text', text: 'hi' }, image(`data:image/png;base64,${PNG}`)] }]).ok).toBe(true);
    const both = validateConversation([{ role: 'user', content: [{ type: 'image', url: 'https://x.test/a.png', data: PNG, mediaType: 'image/png' }] }]);
    expect(both.ok).toBe(false);
  });
});

describe('checking parts before a run', () => {
  it('refuses an image over the limit, naming the option to raise', () => {
    const error = thrown(() => checkParts([image(`data:image/png;base64,${PNG}`)], { vision: true, maxImageBytes: 10 }));
    expect(error).toMatchObject({ problem: 'too_large' });
    expect((error as Error).message).toContain('context.content.maxImageBytes');
    expect(() => checkParts([image(`data:image/png;base64,${PNG}`)], { vision: true })).not.toThrow();
  });

  it('refuses a media type the formats do not take, and any image or file for a model without vision', () => {
    expect(thrown(() => checkParts([{ type: 'image', data: PNG, mediaType: 'image/tiff' }], { vision: true }))).toMatchObject({ problem: 'unsupported' });
    expect(thrown(() => checkParts([file(PDF, { mediaType: 'application/zip' })], { vision: true }))).toMatchObject({ problem: 'unsupported' });
    expect(thrown(() => checkParts([{ type: 'text', text: 'a' }, image('https://x.test/a.png')], { vision: false }))).toMatchObject({ problem: 'no_vision' });
    expect(() => checkParts([{ type: 'text', text: 'only text' }], { vision: false })).not.toThrow();
  });

  it('refuses a PDF over the file limit', () => {
    expect(thrown(() => checkParts([file(PDF)], { vision: true, maxFileBytes: 8 }))).toMatchObject({ problem: 'too_large' });
  });
});

const conversation: Message[] = [
  {
    role: 'user',
    content: [
      { type: 'text', text: 'Describe both' },
      { type: 'image', url: 'https://example.com/cat.png' },
      { type: 'image', data: PNG, mediaType: 'image/png' },
      { type: 'file', data: PDF, mediaType: 'application/pdf', filename: 'report.pdf' },
    ],
  },
  { role: 'assistant', content: null, toolCalls: [{ id: 'c1', name: 'shot', arguments: '{}' }, { id: 'c2', name: 'add', arguments: '{}' }] },
  { role: 'tool', toolCallId: 'c1', name: 'shot', content: '[image: image/png, 70 B]', parts: [{ type: 'image', data: PNG, mediaType: 'image/png' }] },
  { role: 'tool', toolCallId: 'c2', name: 'add', content: '3' },
  { role: 'assistant', content: 'done' },
];

describe('the OpenAI chat format', () => {
  it('sends text, image_url (URL or data URL) and file parts; a tool image follows the turn’s tool results as a user message', () => {
    expect(toOpenAIMessages(conversation)).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Describe both' },
          { type: 'image_url', image_url: { url: 'https://example.com/cat.png' } },
          { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } },
          { type: 'file', file: { file_data: `data:application/pdf;base64,${PDF}`, filename: 'report.pdf' } },
        ],
      },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'c1', type: 'function', function: { name: 'shot', arguments: '{}' } },
          { id: 'c2', type: 'function', function: { name: 'add', arguments: '{}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'c1', content: '[image: image/png, 70 B]' },
      { role: 'tool', tool_call_id: 'c2', content: '3' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Images returned by the tool shot (call c1):' },
          { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } },
        ],
      },
      { role: 'assistant', content: 'done' },
    ]);
  });

  it('refuses a part whose bytes are still stored by reference', () => {
    const stored: Message[] = [{ role: 'user', content: [{ type: 'image', ref: 'sha256-00', mediaType: 'image/png', bytes: 70 }] }];
    expect(thrown(() => toOpenAIMessages(stored))).toMatchObject({ problem: 'missing_data' });
  });
});

describe('the Anthropic Messages format', () => {
  it('sends image blocks with a url or base64 source, a PDF as a document, and a tool image inside its tool_result', () => {
    const { messages } = toAnthropicMessages(conversation);
    expect(messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Describe both' },
          { type: 'image', source: { type: 'url', url: 'https://example.com/cat.png' } },
          { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } },
          { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: PDF }, title: 'report.pdf' },
        ],
      },
      {
        role: 'assistant',
        content: [
          { type: 'tool_use', id: 'c1', name: 'shot', input: {} },
          { type: 'tool_use', id: 'c2', name: 'add', input: {} },
        ],
      },
      {
        role: 'user',
        content: [
          {
            type: 'tool_result',
            tool_use_id: 'c1',
            content: [
              { type: 'text', text: '[image: image/png, 70 B]' },
              { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } },
            ],
          },
          { type: 'tool_result', tool_use_id: 'c2', content: '3' },
        ],
      },
      { role: 'assistant', content: [{ type: 'text', text: 'done' }] },
    ]);
  });

  it('turns an image given as a data URL into a base64 source, and keeps tool results before parts of a merged user turn', () => {
    const { messages } = toAnthropicMessages([
      { role: 'assistant', content: null, toolCalls: [{ id: 'c1', name: 'add', arguments: '{}' }] },
      { role: 'user', content: [{ type: 'image', url: `data:image/png;base64,${PNG}` }] },
      { role: 'tool', toolCallId: 'c1', content: '3' },
    ]);
    expect(messages[1]).toEqual({
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 'c1', content: '3' },
        { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } },
      ],
    });
  });
});
