/**
 * Entry point run.ts starts in a fresh Node process for one agent count, so the JIT and heap
 * state left by the other scenarios do not leak into it — a server running thousands of agents
 * is a steady process of its own. Reads its options as JSON from argv, prints the results as JSON.
 */
import { mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { measureConcurrency, type ConcurrencyEntry, type ConcurrencyMode } from './concurrency.ts';
import { actorloop, actorloopDurable } from './scenarios/actorloop.ts';
import { bareLoop } from './scenarios/bareLoop.ts';
import { loadPeers, type Contender } from './scenarios/types.ts';
import { xstateFloor } from './scenarios/xstateFloor.ts';

export interface ConcurrencyChildOptions {
  readonly agents: number;
  readonly rounds: number;
  /** `id:mode` keys, e.g. `actorloop:perAgent`. */
  readonly entries: readonly string[];
  /** Where durable mode keeps its store; run.ts removes it when the bench ends. */
  readonly storeRoot: string;
  readonly peers: boolean;
}

const options = JSON.parse(process.argv[2] ?? '{}') as ConcurrencyChildOptions;
const contenders: Contender[] = [bareLoop, xstateFloor, actorloop, actorloopDurable(mkdtempSync(join(options.storeRoot, 'durable-')))];
if (options.peers) contenders.push(...(await loadPeers()).peers);
const entries = options.entries.map((key): ConcurrencyEntry => {
  const [id, mode] = key.split(':');
  const contender = contenders.find((c) => c.id === id);
  if (contender === undefined || (mode !== 'shared' && mode !== 'perAgent')) throw new Error(`No concurrency entry ${key}; contenders: ${contenders.map((c) => c.id).join(', ')}.`);
  return { contender, mode: mode as ConcurrencyMode };
});
const results = await measureConcurrency(entries, { agents: options.agents, n: 10, delayMs: 5, rounds: options.rounds });
process.stdout.write(JSON.stringify(results));
