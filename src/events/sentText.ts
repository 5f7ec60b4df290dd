/**
 * A streamed message's text as sent so far, kept as the pieces it came in: a message of many deltas
 * costs one array, not a string built up once per delta.
 */
export class SentText {
  readonly #pieces: string[] = [];
  #length = 0;
  /** Characters the page has: beyond `#length` when the message resumes one it had part of (`resumed`). */
  #had: number;

  /** `live`: opened by a worker's streamed delta, in no journal; `had`: characters of it a reconnecting page has already. */
  constructor(
    readonly id: string,
    readonly live = false,
    had = 0,
  ) {
    this.#had = had;
  }

  /** Characters of the message the page has. */
  get had(): number {
    return this.#had;
  }

  /** Adds a piece of the message; gives what of it the page lacks (all of it unless resumed). */
  add(piece: string): string {
    const from = this.#had - this.#length;
    this.#pieces.push(piece);
    this.#length += piece.length;
    if (from <= 0) {
      this.#had = this.#length;
      return piece;
    }
    if (this.#length > this.#had) this.#had = this.#length;
    return from >= piece.length ? '' : piece.slice(from);
  }

  /** What `whole` has beyond the text seen, when it begins with it; '' when it does not, or has nothing more. */
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

/** How much of a live message a page has: characters of its reasoning (ended once text began) and of its text. */
export interface LiveMark {
  readonly reasoning?: number;
  readonly text?: number;
  /** The page had the reasoning's end and no text yet: its text starts anew. */
  readonly ended?: boolean;
}

/**
 * A streamed call's reply gives its parts' events the places a reply read from the journal alone gives them
 * (`places`, from `from` in `out`): what the page had live leaves `undefined` in front, so the events after keep their ids.
 */
export function keepPlaces(out: unknown[], from: number, places: number): void {
  const missing = places - (out.length - from);
  if (missing > 0) out.splice(from, 0, ...Array<undefined>(missing).fill(undefined));
}
