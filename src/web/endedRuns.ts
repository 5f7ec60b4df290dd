/** Ended runs in the order they ended: past `retain`, the oldest are forgotten, each in constant time. */
export class EndedRuns {
  readonly #ended = new Set<string>();

  constructor(private readonly retain: number) {}

  /** Resumed under its id: it counts again when it next ends. */
  live(runId: string): void {
    this.#ended.delete(runId);
  }

  /** What to forget now that `runId` ended, oldest first. */
  ended(runId: string): string[] {
    this.#ended.delete(runId);
    this.#ended.add(runId);
    const forget: string[] = [];
    for (const id of this.#ended) {
      if (this.#ended.size - forget.length <= this.retain) break;
      forget.push(id);
    }
    for (const id of forget) this.#ended.delete(id);
    return forget;
  }
}
