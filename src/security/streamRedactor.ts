/** Streamed text arrives in pieces a secret can straddle (`sk-te` then `st-…`): each piece redacted alone would let it out. */

export interface StreamRedactor {
  /** What can be let out now, redacted; a word still being written, or the start of a known secret, is held back. */
  push(delta: string): string;
  /** What was held, redacted: the stream has ended. */
  end(): string;
}

/** A reply's text and thinking, each redacted across its own deltas; `emit` gets what may go out, never an empty piece. */
export class ReplyRedactor {
  readonly #text: StreamRedactor;
  readonly #thinking: StreamRedactor;

  constructor(
    redactStream: () => StreamRedactor,
    private readonly emit: (part: 'text' | 'thinking', delta: string) => void,
  ) {
    this.#text = redactStream();
    this.#thinking = redactStream();
  }

  text(delta: string): void {
    this.#out('text', this.#text.push(delta));
  }

  thinking(delta: string): void {
    this.#out('thinking', this.#thinking.push(delta));
  }

  /** What the redactors held: the reply has ended. */
  end(): void {
    this.#out('thinking', this.#thinking.end());
    this.#out('text', this.#text.end());
  }

  #out(part: 'text' | 'thinking', delta: string): void {
    if (delta !== '') this.emit(part, delta);
  }
}

/** Raw text before a piece that a rule may reach back to: a JSON key, `Bearer `, a `key=`. */
const CONTEXT = 128;
/** While a rule's match runs to the text's end, its start is kept this far back instead. */
const OPEN_MATCH_CONTEXT = 16 * 1024;

/**
 * `redact` is the redactor's whole-text rule; `secrets` its literal secrets now (they may grow during a run).
 * Text is let out up to its last whitespace, redacted together with the text before it, so a rule that
 * spans a word boundary (`Bearer <token>`, `"password": "two words"`) still applies.
 */
export function createStreamRedactor(redact: (text: string) => string, secrets: () => readonly string[]): StreamRedactor {
  let held = '';
  let context = '';
  const release = (piece: string): string => {
    if (piece === '') return '';
    const raw = context + piece;
    const after = redact(raw);
    if (after === raw) {
      context = raw.length > CONTEXT ? raw.slice(-CONTEXT) : raw;
      return piece;
    }
    // A match that reaches the end (a secret key's JSON value not closed yet) must keep its start in view,
    // or the rest of its value would go out once its key left the context.
    const reach = after.endsWith(raw.slice(-CONTEXT)) ? CONTEXT : OPEN_MATCH_CONTEXT;
    context = raw.length > reach ? raw.slice(-reach) : raw;
    const before = redact(raw.slice(0, raw.length - piece.length));
    // A rule that matched across the boundary rewrote text already let out: only what differs from it goes.
    return after.slice(after.startsWith(before) ? before.length : commonPrefix(before, after));
  };
  return {
    push(delta) {
      held += delta;
      const cut = safeCut(held, secrets());
      if (cut === 0) return '';
      const piece = held.slice(0, cut);
      held = held.slice(cut);
      return release(piece);
    },
    end() {
      const piece = held;
      held = '';
      return release(piece);
    },
  };
}

/** After the last whitespace, and before any literal secret (which may contain spaces) that would cross the cut. */
function safeCut(text: string, secrets: readonly string[]): number {
  let cut = text.length;
  while (cut > 0 && !isSpace(text.charCodeAt(cut - 1))) cut--;
  for (let moved = true; moved; ) {
    moved = false;
    for (const secret of secrets) {
      const start = crossing(text, secret, cut);
      if (start < cut) {
        cut = start;
        moved = true;
      }
    }
  }
  return cut;
}

/** Where `secret`, or a tail of `text` that begins it, starts before `cut` and goes past it; else `cut`. */
function crossing(text: string, secret: string, cut: number): number {
  for (let start = Math.max(0, cut - secret.length + 1); start < cut; start++) {
    if (text.charCodeAt(start) !== secret.charCodeAt(0)) continue;
    const found = text.slice(start, start + secret.length);
    // A part of it at the text's end may go on in the next delta.
    if ((found.length < secret.length || start + found.length > cut) && secret.startsWith(found)) return start;
  }
  return cut;
}

function isSpace(code: number): boolean {
  return code === 32 || code === 10 || code === 9 || code === 13 || code === 12 || code === 11 || code === 0xa0 || code === 0x2028 || code === 0x2029;
}

function commonPrefix(a: string, b: string): number {
  let i = 0;
  while (i < a.length && i < b.length && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i;
}
