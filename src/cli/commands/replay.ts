import { setTimeout as sleep } from 'node:timers/promises';
import type { JournalEntry } from '../../core/loopEvent.ts';
import { onePositional, parseCommand } from '../args.ts';
import { DATABASE_FLAG, durableUrl, openRuntime, requireDurableRun } from '../durable.ts';
import { summarizeEvent } from '../format.ts';
import type { RunStore } from '../../persistence/fileStore.ts';
import { openStore, requireRun, runInterrupted } from '../store.ts';

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
    const meta = await requireRun(store, runId);
    const ended = await replayStore(store, runId, parsed.flag('follow'), print);
    if (ended === 'interrupted') {
      const next = meta.journalOnly === true
        ? "Its store kept only the journal (mode 'journal'), so it cannot be resumed; start it again with a new run."
        : `Continue it with: actorloop resume ${runId}`;
      process.stderr.write(`run ${runId} was interrupted: the process running it is gone. ${next}\n`);
      return 1;
    }
    return 0;
  }
  const runtime = openRuntime(url);
  try {
    await requireDurableRun(runtime, runId);
    await replay((after) => runtime.journal(runId, after === undefined ? {} : { after }), parsed.flag('follow'), print);
  } finally {
    await runtime.close();
  }
  return 0;
}

type Print = (entry: JournalEntry, startedAt: number) => void;

/** A file store's run; following it, each poll reads what was appended since the last. */
export function replayStore(store: RunStore, runId: string, follow: boolean, print: Print): Promise<'ended' | 'interrupted'> {
  const interrupted = async (): Promise<boolean> => {
    const meta = await store.getRun(runId);
    return meta !== null && runInterrupted(store, runId, meta.status);
  };
  return replay((after) => store.readJournal(runId, after === undefined ? {} : { after }).entries, follow, print, interrupted);
}

/** `read(after)` gives the entries after that sequence (all without it); `interrupted` says whether nothing will write the run any more although it has not ended. */
async function replay(
  read: (after: number | undefined) => JournalEntry[] | Promise<JournalEntry[]>,
  follow: boolean,
  print: Print,
  interrupted: () => Promise<boolean> = async () => false,
): Promise<'ended' | 'interrupted'> {
  let printed: number | undefined;
  let startedAt: number | undefined;
  let last: JournalEntry | undefined;
  for (;;) {
    // Asked before the journal is read, so this read holds all that a process found gone had written.
    const gone = follow && (await interrupted());
    const entries = await read(printed);
    startedAt ??= entries[0]?.timestamp;
    for (const entry of entries) {
      if (printed !== undefined && entry.sequence <= printed) continue;
      printed = entry.sequence;
      last = entry;
      print(entry, startedAt ?? entry.timestamp);
    }
    // A resumed run appends after an earlier run.terminated only when it was resumable; the last entry decides.
    if (!follow || last?.event.type === 'run.terminated') return 'ended';
    // Everything its process wrote before it died has been printed.
    if (gone) return 'interrupted';
    await sleep(POLL_MS);
  }
}
