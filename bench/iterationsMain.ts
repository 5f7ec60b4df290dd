/**
 * Entry point run.ts starts in a fresh Node process to measure react-N for one contender alone:
 * contenders sharing a process share XState's compiled code and inline caches, which flatters
 * whichever of them the caches happen to fit. Reads its options as JSON from argv, writes the
 * results (one per N) as JSON to stdout.
 */
import { measureIterations, type IterationResult } from './iterations.ts';
import { actorloop } from './scenarios/actorloop.ts';
import { actorloopWithFileStore } from './scenarios/actorloopFileStore.ts';
import { aiSdk } from './scenarios/aiSdk.ts';
import { bareLoop } from './scenarios/bareLoop.ts';
import type { Contender } from './scenarios/types.ts';
import { xstateMachine } from './scenarios/xstateMachine.ts';

interface Options {
  readonly contender: string;
  readonly ns: readonly number[];
  readonly rounds: number;
  readonly samplesPerRound: number;
  readonly warmupIterations: number;
  /** Where (d) and (e) keep their stores; the caller removes it when the bench ends. Default: a temporary folder removed on exit. */
  readonly storeRoot?: string;
}

const options = JSON.parse(process.argv[2] ?? '{}') as Options;
const fileStore =
  options.contender === 'actorloop_journal' || options.contender === 'actorloop_file' ? actorloopWithFileStore(options.contender, options.storeRoot) : undefined;
const contender = [bareLoop, xstateMachine, actorloop, fileStore?.contender, aiSdk].find((c): c is Contender => c?.id === options.contender);
if (contender === undefined) {
  throw new Error(`Unknown contender "${options.contender}": use bare, xstate, actorloop, actorloop_journal, actorloop_file or ai_sdk.`);
}
const results: IterationResult[] = [];
try {
  for (const n of options.ns) {
    results.push(...(await measureIterations([contender], { ...options, n, iterationsPerSample: 100 })));
  }
} finally {
  if (options.storeRoot === undefined) fileStore?.cleanup();
}
process.stdout.write(JSON.stringify(results));
