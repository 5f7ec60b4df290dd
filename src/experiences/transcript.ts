/**
 * A finished run's conversation as a compact transcript for the learner's model: one line per
 * message or tool call, every content flattened and cut (tool results hardest: they are the
 * longest and mostly noise once read), system messages left out (the system prompt is the same
 * every run), and, when it is still too long, the middle of the run replaced by a marker — the
 * start says what was attempted, the end how it turned out.
 */
import { contentText, type Message } from '../core/messages.ts';
import { oneLine } from '../knowledge/format.ts';
import { EXPERIENCE_DEFAULTS } from './defaults.ts';

/** Limits of `compactTranscript`, in characters; each defaults to `EXPERIENCE_DEFAULTS`. */
export interface TranscriptOptions {
  /** The whole transcript. */
  readonly maxChars?: number;
  /** One user or assistant message. */
  readonly maxMessageChars?: number;
  /** One tool result, or the arguments of one tool call. */
  readonly maxToolChars?: number;
  /** A user message equal to this is left out (it is the task, shown on its own). */
  readonly task?: string;
}

/** Share of the budget kept from the start of the run when the middle is cut. */
const HEAD_SHARE = 0.25;

/**
 * The transcript of `messages`.
 *
 * @example
 * ```ts
 * compactTranscript([
 *   { role: 'assistant', content: null, toolCalls: [{ id: 'c1', name: 'read_file', arguments: '{"path":"a.ts"}' }] },
 *   { role: 'tool', toolCallId: 'c1', name: 'read_file', content: 'ENOENT', isError: true },
 * ]);
 * // 'assistant calls read_file {"path":"a.ts"}\ntool read_file (error): ENOENT'
 * ```
 */
export function compactTranscript(messages: readonly Message[], options: TranscriptOptions = {}): string {
  const maxChars = options.maxChars ?? EXPERIENCE_DEFAULTS.maxTranscriptChars;
  const lines = transcriptLines(messages, options);
  let total = lines.reduce((sum, line) => sum + line.length + 1, 0);
  if (total <= maxChars) return lines.join('\n');
  // Head: whole lines from the start within its share; tail: whole lines from the end in the rest.
  const head: string[] = [];
  total = 0;
  for (const line of lines) {
    if (total + line.length + 1 > maxChars * HEAD_SHARE) break;
    head.push(line);
    total += line.length + 1;
  }
  const tail: string[] = [];
  for (let i = lines.length - 1; i >= head.length; i--) {
    const line = lines[i] as string;
    if (total + line.length + 1 > maxChars) break;
    tail.unshift(line);
    total += line.length + 1;
  }
  const omitted = lines.length - head.length - tail.length;
  return [...head, `[… ${omitted} line${omitted === 1 ? '' : 's'} of the run omitted …]`, ...tail].join('\n');
}

function transcriptLines(messages: readonly Message[], options: TranscriptOptions): string[] {
  const maxMessage = options.maxMessageChars ?? EXPERIENCE_DEFAULTS.maxMessageChars;
  const maxTool = options.maxToolChars ?? EXPERIENCE_DEFAULTS.maxToolChars;
  const lines: string[] = [];
  for (const message of messages) {
    switch (message.role) {
      case 'system':
        break;
      case 'user':
        if (options.task !== undefined && contentText(message.content).trim() === options.task.trim()) break;
        lines.push(`user${message.untrusted === undefined ? '' : ' (untrusted content)'}: ${cut(contentText(message.content), maxMessage)}`);
        break;
      case 'assistant':
        if (message.content !== null && message.content.trim() !== '') lines.push(`assistant: ${cut(message.content, maxMessage)}`);
        for (const call of message.toolCalls ?? []) lines.push(`assistant calls ${cut(call.name, 100)} ${cut(call.arguments, maxTool)}`);
        break;
      case 'tool': {
        const notes = [message.isError === true ? 'error' : '', message.untrusted === undefined ? '' : 'untrusted content'].filter((n) => n !== '');
        const label = `tool ${cut(message.name ?? message.toolCallId, 100)}${notes.length === 0 ? '' : ` (${notes.join(', ')})`}`;
        lines.push(`${label}: ${cut(message.content, maxTool)}`);
        break;
      }
    }
  }
  return lines;
}

/** Flattened to one line and cut; a huge content is sliced first so flattening it costs little. */
function cut(text: string, max: number): string {
  if (text.length <= max * 4) return oneLine(text, max);
  const flat = oneLine(text.slice(0, max * 4), max);
  return flat.endsWith('…') ? flat : `${flat}…`;
}
