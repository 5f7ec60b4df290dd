/** Catches what providers reject with a bare 400, saying which message is wrong. */
import { ConversationError, type ConversationIssue } from './errors.ts';
import { Message, type ToolCall } from '../core/messages.ts';

export { ConversationError } from './errors.ts';
export type { ConversationIssue, ConversationIssueCode } from './errors.ts';

export type ConversationValidation =
  | { readonly ok: true; readonly messages: Message[] }
  | { readonly ok: false; readonly issues: ConversationIssue[] };

/** Never throws; tool bookkeeping is checked only on schema-valid messages. */
export function validateConversation(messages: readonly unknown[] | readonly Message[]): ConversationValidation {
  const issues: ConversationIssue[] = [];
  const parsed: Message[] = new Array(messages.length);
  const issued = new Set<string>();
  const answered = new Set<string>();

  for (let index = 0; index < messages.length; index++) {
    const message = parseMessage(messages[index], index, issues);
    if (message === undefined) continue;
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

function parseMessage(value: unknown, index: number, issues: ConversationIssue[]): Message | undefined {
  const result = Message.safeParse(value);
  if (result.success) return result.data;
  for (const issue of result.error.issues) {
    issues.push({
      index,
      code: 'invalid_message',
      path: issue.path,
      message: `Message ${index}${issue.path.length > 0 ? ` at ${issue.path.join('.')}` : ''}: ${issue.message}. Fix the message so it matches the Message schema (roles system, user, assistant, tool).`,
    });
  }
  return undefined;
}

/** Throws a `ConversationError` (`invalid_conversation`) naming each message that fails the Message schema; tool-call bookkeeping is not checked. */
export function assertMessages(messages: readonly unknown[]): Message[] {
  const issues: ConversationIssue[] = [];
  const parsed = messages.map((value, index) => parseMessage(value, index, issues));
  if (issues.length > 0) throw new ConversationError(issues);
  return parsed as Message[];
}

/** Calls still to run (e.g. after a resume), in issue order; assumes a schema-valid conversation. */
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

/** Throws a `ConversationError` (`invalid_conversation`) listing every issue. */
export function assertValidConversation(messages: readonly unknown[] | readonly Message[]): Message[] {
  const result = validateConversation(messages);
  if (!result.ok) throw new ConversationError(result.issues);
  return result.messages;
}
