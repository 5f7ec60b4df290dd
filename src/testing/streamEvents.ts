/** Tool-call arguments come in at least two fragments, so consumers are tested against real fragmenting. */
import type { Completion, StreamEvent } from '../core/provider.ts';

const FRAGMENT_CHARS = 16;

/** Whitespace stays attached to the word before it, so the pieces concatenate back exactly. */
export function splitWords(text: string): string[] {
  if (text === '') return [];
  return text.match(/\s*\S+\s*/g) ?? [text];
}

/** At least two fragments when there are two characters, never cutting a surrogate pair. */
export function splitArguments(args: string): string[] {
  if (args.length < 2) return args === '' ? [] : [args];
  const size = args.length <= 2 * FRAGMENT_CHARS ? Math.ceil(args.length / 2) : FRAGMENT_CHARS;
  const pieces: string[] = [];
  let start = 0;
  while (start < args.length) {
    let end = Math.min(args.length, start + size);
    // Keep a UTF-16 surrogate pair together: never end a piece on a high surrogate. Cut
    // before the pair when that leaves a piece, so 'a😀' still gives two fragments.
    if (end < args.length && isHighSurrogate(args.charCodeAt(end - 1))) end += end - 1 > start ? -1 : 1;
    pieces.push(args.slice(start, end));
    start = end;
  }
  return pieces;
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

export function* completionEvents<TOutput>(
  completion: Completion<TOutput>,
  chunks?: readonly string[],
): Generator<StreamEvent<TOutput>> {
  const text = completion.text ?? '';
  for (const delta of chunks ?? splitWords(text)) {
    if (delta !== '') yield { type: 'text.delta', delta };
  }
  const calls = completion.toolCalls;
  for (let index = 0; index < calls.length; index++) {
    const call = calls[index];
    if (call === undefined) continue;
    yield { type: 'toolcall.delta', index, id: call.id, name: call.name, argumentsDelta: '' };
    for (const argumentsDelta of splitArguments(call.arguments)) {
      yield { type: 'toolcall.delta', index, argumentsDelta };
    }
  }
  yield { type: 'done', completion };
}
