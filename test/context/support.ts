/**
 * Builders for conversations and a checker of the context-budget invariants, shared by the
 * context tests.
 */
import type { AssistantMessage, Message, SystemMessage, ToolCall, ToolMessage, UserMessage } from '../../src/core/messages.ts';
import type { PreparerContext } from '../../src/core/hooks.ts';
import type { LoopEvent, LoopEventOf } from '../../src/core/loopEvent.ts';
import { MASKED_RESULT_PREFIX } from '../../src/context/mask.ts';
import { SUMMARY_TAG } from '../../src/context/summary.ts';

export const sys = (content: string): SystemMessage => ({ role: 'system', content });
export const user = (content: string): UserMessage => ({ role: 'user', content });
export const call = (id: string, name = 'fetch', args = '{}'): ToolCall => ({ id, name, arguments: args });
export const assistant = (calls: readonly ToolCall[] | null, text: string | null = null): AssistantMessage =>
  calls === null ? { role: 'assistant', content: text ?? '' } : { role: 'assistant', content: text, toolCalls: [...calls] };
export const result = (id: string, content: string, name?: string): ToolMessage =>
  name === undefined ? { role: 'tool', toolCallId: id, content } : { role: 'tool', toolCallId: id, name, content };

/** `n` characters of deterministic filler (distinct per seed, so contents are not all equal). */
export const filler = (n: number, seed = 0): string => {
  const unit = `data${seed}-`;
  return unit.repeat(Math.ceil(n / unit.length)).slice(0, n);
};

/** A conversation: system, task, then `turns` tool turns, each one call with a result of `size` chars. */
export function toolRun(turns: number, size: number): Message[] {
  const messages: Message[] = [sys('You are precise.'), user('Collect the data.')];
  for (let t = 0; t < turns; t++) {
    messages.push(assistant([call(`c${t}`)]));
    messages.push(result(`c${t}`, filler(size, t), 'fetch'));
  }
  return messages;
}

export interface RecordingContext {
  readonly context: PreparerContext;
  readonly events: LoopEvent[];
  readonly compacted: () => LoopEventOf<'context.compacted'>[];
}

export function hookContext(runId = 'run_1', signal: AbortSignal = new AbortController().signal): RecordingContext {
  const events: LoopEvent[] = [];
  return {
    events,
    context: { runId, agentId: 'agent_1', iteration: 0, signal, emit: (event) => events.push(event) },
    compacted: () => events.filter((e): e is LoopEventOf<'context.compacted'> => e.type === 'context.compacted'),
  };
}

const isMasked = (m: Message): boolean => m.role === 'tool' && m.content.startsWith(MASKED_RESULT_PREFIX);
const isSummary = (m: Message): boolean => m.role === 'system' && m.content.startsWith(SUMMARY_TAG);

/**
 * Every way `output` (a compacted view of `input`) breaks the budget's invariants; empty when
 * it keeps them all.
 */
export function invariantViolations(input: readonly Message[], output: readonly Message[]): string[] {
  const problems: string[] = [];
  const issuedAt = new Map<string, number>();
  output.forEach((m, i) => {
    if (m.role === 'assistant') for (const c of m.toolCalls ?? []) issuedAt.set(c.id, i);
  });
  const answeredInInput = new Set(input.filter((m): m is ToolMessage => m.role === 'tool').map((m) => m.toolCallId));
  const answeredInOutput = new Set<string>();
  output.forEach((m, i) => {
    if (m.role !== 'tool') return;
    answeredInOutput.add(m.toolCallId);
    const at = issuedAt.get(m.toolCallId);
    if (at === undefined) problems.push(`tool result ${m.toolCallId} kept without its call`);
    else if (at > i) problems.push(`tool result ${m.toolCallId} before its call`);
  });
  for (const m of output) {
    if (m.role !== 'assistant') continue;
    for (const c of m.toolCalls ?? []) {
      if (answeredInInput.has(c.id) && !answeredInOutput.has(c.id)) problems.push(`call ${c.id} kept without its result`);
    }
  }
  const kept = new Set(output);
  input.forEach((m, i) => {
    if (m.role === 'system' && !kept.has(m)) problems.push(`system message ${i} dropped`);
  });
  const users = input.filter((m) => m.role === 'user');
  if (users.length > 0 && !kept.has(users[0] as Message)) problems.push('first user message dropped');
  if (users.length > 0 && !kept.has(users[users.length - 1] as Message)) problems.push('latest user message dropped');
  // Kept originals stay in their order; stand-ins are masked results or the summary.
  const position = new Map<Message, number>(input.map((m, i) => [m, i]));
  let last = -1;
  for (const m of output) {
    const at = position.get(m);
    if (at === undefined) {
      if (!isMasked(m) && !isSummary(m)) problems.push(`unexpected new message ${JSON.stringify(m).slice(0, 80)}`);
      continue;
    }
    if (at < last) problems.push(`message ${at} out of order`);
    last = at;
  }
  return problems;
}
