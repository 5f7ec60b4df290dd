/**
 * Recorded Anthropic traffic (test/fixtures/wire/anthropic, each file with an `.origin.json`
 * naming where it was recorded) served by the scripted server on 127.0.0.1, plus a replay of
 * Anthropic's documented rule for thinking with tools.
 */
import { readFileSync } from 'node:fs';
import type { RecordedRequest, ScriptedReply } from './openaiServer.ts';

const DIR = new URL('../fixtures/wire/anthropic/', import.meta.url);

/** A recorded JSON body (a Messages API reply). */
export function wireJson(name: string): Record<string, unknown> {
  return JSON.parse(readFileSync(new URL(`${name}.json`, DIR), 'utf8')) as Record<string, unknown>;
}

/** A recorded reply as the server sends it: `name.json` (200, or the status an error fixture names) or `name.sse`. */
export function wireReply(name: string): ScriptedReply {
  if (name.endsWith('.stream')) {
    return { kind: 'sse', pieces: [new TextEncoder().encode(readFileSync(new URL(`${name}.sse`, DIR), 'utf8'))] };
  }
  const recorded = wireJson(name);
  if (name.startsWith('error.')) {
    const { status, headers, body } = recorded as { status: number; headers?: Record<string, string>; body: unknown };
    return { kind: 'json', status, body, ...(headers === undefined ? {} : { headers }) };
  }
  return { kind: 'json', body: recorded };
}

interface Block {
  readonly type: string;
  readonly [key: string]: unknown;
}

/**
 * Anthropic's rule, as its API enforces it: with thinking enabled, the final assistant turn
 * before the tool results must start with the thinking block the model produced, signature and
 * text unchanged. A request that breaks it gets the recorded 400; one that keeps it gets `next`.
 * `issued` is the reply whose thinking block must come back.
 */
export function enforceThinkingRule(issued: Record<string, unknown>, next: ScriptedReply): ScriptedReply {
  const thinking = (issued['content'] as Block[]).find((block) => block.type === 'thinking');
  return {
    kind: 'custom',
    respond(request: RecordedRequest): ScriptedReply {
      const body = request.body as { thinking?: unknown; messages?: { role: string; content: string | Block[] }[] };
      if (body.thinking === undefined) return next;
      const assistant = [...(body.messages ?? [])].reverse().find((message) => message.role === 'assistant');
      const first = Array.isArray(assistant?.content) ? assistant.content[0] : undefined;
      const keeps =
        first !== undefined &&
        first.type === 'thinking' &&
        thinking !== undefined &&
        first['thinking'] === thinking['thinking'] &&
        first['signature'] === thinking['signature'];
      return keeps ? next : wireReply('error.thinking-missing');
    },
  };
}
