/**
 * A streamed message's text as sent so far, kept as the pieces it came in: a message of many deltas
 * costs one array, not a string built up once per delta.
 */
export class SentText {
  readonly #pieces: string[] = [];
  #length = 0;

  constructor(readonly id: string) {}

  add(piece: string): void {
    this.#pieces.push(piece);
    this.#length += piece.length;
  }

  /** What `whole` has beyond the text sent, when it begins with it; '' when it does not, or has nothing more. */
  rest(whole: string): string {
    if (whole.length <= this.#length) return '';
    let at = 0;
    for (const piece of this.#pieces) {
      if (!whole.startsWith(piece, at)) return '';
      at += piece.length;
    }
    return whole.slice(at);
  }
}
