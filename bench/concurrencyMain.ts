/**
 * Entry point run.ts starts in a fresh Node process for the concurrency scenario, so the JIT
 * and heap state left by the per-iteration scenario (and by other contenders' code paths) do not
 * leak into it — a server running 1 000 agents is a steady process of its own. Reads its options
 * as JSON from argv, writes the results as JSON to stdout.
 */
import { concurrencyKey, measureConcurrency, type ConcurrencyEntry } from './concurrency.ts';
import { actorloop } from './scenarios/actorloop.ts';
import { actorloopWithFileStore } from './scenarios/actorloopFileStore.ts';
import { bareLoop } from './scenarios/bareLoop.ts';
import { xstateMachine } from './scenarios/xstateMachine.ts';

const options = JSON.parse(process.argv[2] ?? '{}') as { agents?: number; repeats?: number; only?: string[]; storeRoot?: string };
// Durable mode: every agent's runs in one resumable store (see actorloopFileStore.ts for why its
// files are removed only when the bench ends).
const fileStore = actorloopWithFileStore('actorloop_file', options.storeRoot);
const all: ConcurrencyEntry[] = [
  { contender: bareLoop, mode: 'shared' },
  { contender: xstateMachine, mode: 'shared' },
  { contender: actorloop, mode: 'shared' },
  { contender: actorloop, mode: 'perAgent' },
  { contender: fileStore.contender, mode: 'shared' },
];
// `only` (keys like "xstate:shared") measures some entries alone: contenders sharing a process
// share XState's compiled code and inline caches, which flatters whichever runs second.
const entries = options.only === undefined ? all : all.filter((e) => options.only?.includes(concurrencyKey(e)));
if (entries.length === 0) throw new Error(`No concurrency entry matches ${JSON.stringify(options.only)}; keys: ${all.map(concurrencyKey).join(', ')}.`);
try {
  const results = await measureConcurrency(entries, { agents: options.agents ?? 1000, n: 10, delayMs: 5, repeats: options.repeats ?? 5 });
  process.stdout.write(JSON.stringify(results));
} finally {
  if (options.storeRoot === undefined) fileStore.cleanup();
}
