import type { WebProtocol } from './protocol.ts';

/**
 * What waits for a stream's reader, framed, except its last event: the deltas that follow it may
 * still join it (`protocol.deltas`). Their texts are kept as they come and joined once, when framed.
 */
export class FrameQueue<TEvent> {
  #framed: string[] = [];
  #last: TEvent | undefined;
  /** The texts of the deltas joined into `#last` (its own first), once one joined it. */
  #texts: string[] = [];
  /** The last event's id: given whole, or as an entry's sequence (-1: none) and the event's index, written out only when framed. */
  #lastId: string | undefined;
  #lastSequence = -1;
  #lastIndex = 0;

  constructor(private readonly protocol: Pick<WebProtocol<TEvent>, 'frame' | 'deltas'>) {}

  /** An event without an id (`undefined`) joins nothing and nothing joins it. */
  push(id: string | undefined, event: TEvent): void {
    this.#add(id !== undefined, event);
    this.#lastId = id;
    this.#lastSequence = -1;
  }

  /** `push` with the id `<sequence>.<index>`; a sequence of -1 is no id. */
  pushAt(sequence: number, index: number, event: TEvent): void {
    this.#add(sequence >= 0, event);
    this.#at(sequence, index);
  }

  /** Whether a delta with an id waits last, which `continueAt` can add text to. */
  get continuable(): boolean {
    return this.#last !== undefined && this.protocol.deltas !== undefined && this.#hasId();
  }

  /**
   * When `continuable`: the text of a delta known to continue the last one (`StreamEncoder.continueText`),
   * under the id `<sequence>.<index>`, without an event of its own.
   */
  continueAt(sequence: number, index: number, text: string): void {
    const last = this.#last;
    const { deltas } = this.protocol;
    if (last === undefined || deltas === undefined) return;
    if (this.#texts.length === 0) this.#texts.push(deltas.text(last));
    this.#texts.push(text);
    this.#at(sequence, index);
  }

  get waiting(): boolean {
    return this.#last !== undefined;
  }

  take(): string {
    this.#frameLast();
    const chunk = this.#framed.join('');
    this.#framed = [];
    return chunk;
  }

  #at(sequence: number, index: number): void {
    this.#lastId = undefined;
    this.#lastSequence = sequence;
    this.#lastIndex = index;
  }

  #add(hasId: boolean, event: TEvent): void {
    const last = this.#last;
    const { deltas } = this.protocol;
    // A joined event goes under the id of the last delta in it: a page reconnecting after it has them all.
    if (last !== undefined && hasId && this.#hasId() && deltas?.joins(last, event) === true) {
      if (this.#texts.length === 0) this.#texts.push(deltas.text(last));
      this.#texts.push(deltas.text(event));
      return;
    }
    this.#frameLast();
    this.#last = event;
  }

  #hasId(): boolean {
    return this.#lastId !== undefined || this.#lastSequence >= 0;
  }

  #frameLast(): void {
    const last = this.#last;
    if (last === undefined) return;
    const { deltas } = this.protocol;
    const event = this.#texts.length === 0 || deltas === undefined ? last : deltas.join(last, this.#texts.join(''));
    const id = this.#lastId ?? (this.#lastSequence >= 0 ? `${this.#lastSequence}.${this.#lastIndex}` : undefined);
    this.#framed.push(`${id === undefined ? '' : `id: ${id}\n`}${this.protocol.frame(event)}`);
    this.#last = undefined;
    if (this.#texts.length > 0) this.#texts = [];
  }
}
