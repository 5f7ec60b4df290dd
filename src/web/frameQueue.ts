import type { WebProtocol } from './protocol.ts';

/**
 * What waits for a stream's reader, framed, except its last event: the deltas that follow it may
 * still join it (`protocol.deltas`). They are kept as they come and joined once, when framed.
 */
export class FrameQueue<TEvent> {
  #framed: string[] = [];
  #last: TEvent[] = [];
  #lastId: string | undefined;

  constructor(private readonly protocol: Pick<WebProtocol<TEvent>, 'frame' | 'deltas'>) {}

  /** An event without an id (`undefined`) joins nothing and nothing joins it. */
  push(id: string | undefined, event: TEvent): void {
    const first = this.#last[0];
    const joins = first !== undefined && id !== undefined && this.#lastId !== undefined && this.protocol.deltas?.joins(first, event) === true;
    if (!joins) this.#frameLast();
    this.#last.push(event);
    // A joined event goes under the id of the last delta in it: a page reconnecting after it has them all.
    this.#lastId = id;
  }

  get waiting(): boolean {
    return this.#last.length > 0;
  }

  take(): string {
    this.#frameLast();
    const chunk = this.#framed.join('');
    this.#framed = [];
    return chunk;
  }

  #frameLast(): void {
    const { deltas } = this.protocol;
    const [first] = this.#last;
    if (first === undefined) return;
    const event = this.#last.length === 1 || deltas === undefined ? first : deltas.join(this.#last);
    this.#framed.push(`${this.#lastId === undefined ? '' : `id: ${this.#lastId}\n`}${this.protocol.frame(event)}`);
    this.#last = [];
  }
}
