/**
 * Conversation validation: every message matches its schema, and the tool-call bookkeeping is
 * consistent — each tool result answers an earlier call, once. Providers reject conversations
 * that break these rules (OpenAI with a 400, Anthropic likewise), so we catch them first and say
 * which message is wrong instead of letting a remote API say "invalid request".
 */
import { ConversationError, type ConversationIssue } from './errors.ts';
import { Message, type ToolCall } from '../core/messages.ts';

export { ConversationError } from './errors.ts';
export type { ConversationIssue, ConversationIssueCode } from './errors.ts';

export type ConversationValidation =
  | { readonly ok: true; readonly messages: Message[] }
  | { readonly ok: false; readonly issues: ConversationIssue[] };

/**
 * Check a conversation; returns the parsed messages or every issue found (never throws).
 * Tool bookkeeping is checked only on messages that are themselves schema-valid.
 *
 * @example
 * ```ts
 * const result = validateConversation([{ role: 'tool', toolCallId: 'c1', content: '3' }]);
 * if (!result.ok) result.issues[0]?.code; // 'orphan_tool_result'
 * ```
 */
export function validateConversation(messages: readonly unknown[] | readonly Message[]): ConversationValidation {
  const issues: ConversationIssue[] = [];
  const parsed: Message[] = new Array(messages.length);
  const issued = new Set<string>();
  const answered = new Set<string>();

  for (let index = 0; index < messages.length; index++) {
    const result = Message.safeParse(messages[index]);
    if (!result.success) {
      for (const issue of result.error.issues) {
        issues.push({
          index,
          code: 'invalid_message',
          path: issue.path,
          message: `Message ${index}${issue.path.length > 0 ? ` at ${issue.path.join('.')}` : ''}: ${issue.message}. Fix the message so it matches the Message schema (roles system, user, assistant, tool).`,
        });
      }
      continue;
    }
    const message = result.data;
    parsed[index] = message;
    if (message.role === 'assistant' && message.toolCalls !== undefined) {
      for (const call of message.toolCalls) {
        if (issued.has(call.id)) {
          issues.push({
            index,
            code: 'duplicate_tool_call_id',
            message: `Message ${index} issues tool call id "${call.id}", which is already used by an earlier call. Give every tool call a unique id.`,
          });
        }
        issued.add(call.id);
      }
    } else if (message.role === 'tool') {
      const id = message.toolCallId;
      if (!issued.has(id)) {
        issues.push({
          index,
          code: 'orphan_tool_result',
          message: `Message ${index} is a result for tool call "${id}", but no earlier assistant message issued that call. Keep the assistant message with the call before its result, or drop the result.`,
        });
      } else if (answered.has(id)) {
        issues.push({
          index,
          code: 'duplicate_tool_result',
          message: `Message ${index} answers tool call "${id}" a second time. Keep one result per call.`,
        });
      }
      answered.add(id);
    }
  }
  return issues.length === 0 ? { ok: true, messages: parsed } : { ok: false, issues };
}

/**
 * Tool calls that no tool message answers yet, in the order they were issued. The loop uses
 * it to find calls still to run (e.g. after a resume). Assumes a schema-valid conversation.
 *
 * @example
 * ```ts
 * unansweredToolCalls([
 *   { role: 'assistant', content: null, toolCalls: [{ id: 'c1', name: 'add', arguments: '{}' }] },
 * ]); // [{ id: 'c1', name: 'add', arguments: '{}' }]
 * ```
 */
export function unansweredToolCalls(messages: readonly Message[]): ToolCall[] {
  const answered = new Set<string>();
  for (const message of messages) if (message.role === 'tool') answered.add(message.toolCallId);
  const open: ToolCall[] = [];
  for (const message of messages) {
    if (message.role !== 'assistant' || message.toolCalls === undefined) continue;
    for (const call of message.toolCalls) if (!answered.has(call.id)) open.push(call);
  }
  return open;
}

/**
 * Validate and return the parsed messages, or throw a {@link ConversationError}.
 *
 * @example
 * ```ts
 * const messages = assertValidConversation(JSON.parse(text) as unknown[]);
 * ```
 */
export function assertValidConversation(messages: readonly unknown[] | readonly Message[]): Message[] {
  const result = validateConversation(messages);
  if (!result.ok) throw new ConversationError(result.issues);
  return result.messages;
}
