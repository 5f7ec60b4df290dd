/**
 * One line per message or tool call, tool results cut hardest, system messages left out; when still
 * too long the middle goes: the start says what was attempted, the end how it turned out.
 */
import { contentText, type Message } from '../core/messages.ts';
import { oneLine } from '../knowledge/format.ts';
import { EXPERIENCE_DEFAULTS } from './defaults.ts';

/** In characters; each defaults to `EXPERIENCE_DEFAULTS`. */
export interface TranscriptOptions {
  readonly maxChars?: number;
  readonly maxMessageChars?: number;
  /** One tool result, or the arguments of one tool call. */
  readonly maxToolChars?: number;
  /** Left out: it is the task, shown on its own. */
  readonly task?: string;
}

const HEAD_SHARE = 0.25;

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

/** A huge content is sliced before it is flattened. */
function cut(text: string, max: number): string {
  if (text.length <= max * 4) return oneLine(text, max);
  const flat = oneLine(text.slice(0, max * 4), max);
  return flat.endsWith('…') ? flat : `${flat}…`;
}
