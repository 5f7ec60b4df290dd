import { setTimeout as sleep } from 'node:timers/promises';
import type { JournalEntry } from '../../core/loopEvent.ts';
import { onePositional, parseCommand } from '../args.ts';
import { DATABASE_FLAG, durableUrl, openRuntime, requireDurableRun } from '../durable.ts';
import { summarizeEvent } from '../format.ts';
import { openStore, requireRun } from '../store.ts';

const POLL_MS = 250;

export function timelineLine(entry: JournalEntry, startedAt: number): string | undefined {
  const summary = summarizeEvent(entry.event);
  if (summary === undefined) return undefined;
  const seconds = ((entry.timestamp - startedAt) / 1000).toFixed(3);
  return `+${seconds}s`.padEnd(10) + ` [${entry.iteration}] ${summary}`;
}

export async function replayCommand(args: readonly string[]): Promise<number> {
  const parsed = parseCommand(args, { follow: { type: 'boolean' }, ...DATABASE_FLAG });
  const runId = onePositional(parsed, 'runId', 'replay');
  const url = durableUrl(parsed);
  const print = (entry: JournalEntry, startedAt: number): void => {
    if (parsed.common.json) {
      process.stdout.write(`${JSON.stringify(entry)}\n`);
      return;
    }
    const line = timelineLine(entry, startedAt);
    if (line !== undefined) process.stdout.write(`${line}\n`);
  };
  if (url === undefined) {
    const store = openStore(parsed.common.store, true);
    await requireRun(store, runId);
    await replay(() => store.readJournal(runId).entries, parsed.flag('follow'), print);
    return 0;
  }
  const runtime = openRuntime(url);
  try {
    await requireDurableRun(runtime, runId);
    await replay(() => runtime.journal(runId), parsed.flag('follow'), print);
  } finally {
    await runtime.close();
  }
  return 0;
}

async function replay(read: () => JournalEntry[] | Promise<JournalEntry[]>, follow: boolean, print: (entry: JournalEntry, startedAt: number) => void): Promise<void> {
  let printed = -1;
  let startedAt: number | undefined;
  for (;;) {
    const entries = await read();
    startedAt ??= entries[0]?.timestamp;
    for (const entry of entries) {
      if (entry.sequence <= printed) continue;
      printed = entry.sequence;
      print(entry, startedAt ?? entry.timestamp);
    }
    // A resumed run appends after an earlier run.terminated only when it was resumable; the last entry decides.
    if (!follow || entries.at(-1)?.event.type === 'run.terminated') return;
    await sleep(POLL_MS);
  }
}
