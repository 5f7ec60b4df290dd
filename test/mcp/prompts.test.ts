/**
 * MCP prompt results as what a run takes, without a server: several messages, images, embedded
 * resources, and a prompt that ends with the assistant's words.
 */
import { describe, expect, it } from 'vitest';
import { toPrompt } from '../../src/mcp/prompts.ts';

const text = (role: string, value: string) => ({ role, content: { type: 'text', text: value } });

describe('an MCP prompt as a run', () => {
  it('makes the last user message the task and the ones before it the history, joining runs of one role', () => {
    const prompt = toPrompt({ messages: [text('user', 'You review code.'), text('assistant', 'Ready.'), text('user', 'Review this:'), text('user', 'x = 1')] });
    expect(prompt.task).toBe('Review this:\nx = 1');
    expect(prompt.history).toEqual([
      { role: 'user', content: 'You review code.' },
      { role: 'assistant', content: 'Ready.' },
    ]);
    expect(prompt.text).toBe('User: You review code.\n\nAssistant: Ready.\n\nUser: Review this:\nx = 1');
  });

  it('keeps an image as an image part of the task, in reading order', () => {
    const prompt = toPrompt({ messages: [text('user', 'What is this?'), { role: 'user', content: { type: 'image', data: 'iVBORw0K', mimeType: 'image/png' } }] });
    expect(prompt.task).toEqual(['What is this?', { type: 'image', data: 'iVBORw0K', mediaType: 'image/png' }]);
    expect(prompt.messages[0]).toEqual({ role: 'user', content: [{ type: 'text', text: 'What is this?' }, { type: 'image', data: 'iVBORw0K', mediaType: 'image/png' }] });
    expect(prompt.text).toBe('What is this?\n[image: image/png]');
  });

  it('describes a binary embedded resource instead of pasting base64', () => {
    const blob = Buffer.from([0, 1, 2, 3, 4]).toString('base64');
    const prompt = toPrompt({ messages: [{ role: 'user', content: { type: 'resource', resource: { uri: 'file:///x.bin', mimeType: 'application/octet-stream', blob } } }] });
    expect(prompt.task).toBe('[resource file:///x.bin]\n[binary resource: file:///x.bin, application/octet-stream, 5 B]');
  });

  it('gives all of it as the task when it ends with the assistant, so nothing is dropped', () => {
    const prompt = toPrompt({ description: 'prefill', messages: [text('user', 'Name a colour.'), text('assistant', 'Blue')] });
    expect(prompt.task).toBe('User: Name a colour.\n\nAssistant: Blue');
    expect(prompt.history).toEqual([]);
    expect(prompt.description).toBe('prefill');
  });
});
