/**
 * How a scripted completion is replayed as stream events: text in word-sized deltas, each tool
 * call as an opening delta (id + name) followed by its arguments in at least two fragments —
 * so consumers are tested against real fragmenting, not one convenient piece — then `done`.
 */
import type { Completion, StreamEvent } from '../core/provider.ts';

/** Argument fragments longer than this are split further. */
const FRAGMENT_CHARS = 16;

/**
 * Split text into word-sized pieces that concatenate back to it exactly (whitespace stays
 * attached to the word before it; leading whitespace to the first word).
 *
 * @example
 * ```ts
 * splitWords(' Hello big  world'); // [' Hello ', 'big  ', 'world']
 * ```
 */
export function splitWords(text: string): string[] {
  if (text === '') return [];
  return text.match(/\s*\S+\s*/g) ?? [text];
}

/**
 * Split tool-call arguments into fragments: at least two when the text has two or more
 * characters, never cutting a surrogate pair.
 *
 * @example
 * ```ts
 * splitArguments('{"a":1}'); // ['{"a"', ':1}']
 * ```
 */
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

/**
 * The events stream() yields for `completion`: text deltas (`chunks`, or word pieces),
 * tool-call deltas, then one `done` carrying the completion itself.
 *
 * @example
 * ```ts
 * [...completionEvents(completion)].at(-1); // { type: 'done', completion }
 * ```
 */
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
