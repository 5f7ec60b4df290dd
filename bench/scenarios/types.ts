/**
 * What every contender of the benchmark provides: a prepared definition (agent, machine, graph,
 * loop) that runs react-N once per call. Calling one definition concurrently is "many runs of one
 * definition"; calling `create` many times is "many separate agents".
 */
import type { CallCounts, ReactConfig } from './react.ts';

/** A definition ready to run, and the calls its runs have made so far. */
export interface Prepared {
  /** One complete react-N run; resolves when the run has produced the scripted answer. */
  run(): Promise<void>;
  /** Model calls are counted by the model (or, over HTTP, by the server); tool calls by the tool. */
  readonly counts: CallCounts;
}

export interface Contender {
  /** Short key used in the JSON results. */
  readonly id: string;
  /** Row label in the tables: says exactly what runs. */
  readonly label: string;
  /** Build what lives across runs (the model, the machine or the agent). */
  create(config: ReactConfig): Prepared;
}

/** Where an HTTP contender sends its requests: an OpenAI-compatible endpoint and the model name that tells the server N. */
export interface HttpTarget {
  readonly baseURL: string;
  readonly model: string;
}

/** A contender whose model is an OpenAI-compatible server over loopback HTTP. */
export interface HttpContender {
  readonly id: string;
  readonly label: string;
  /** Model calls are counted by the server; `counts.model` stays 0. */
  create(target: HttpTarget): Prepared;
}

/**
 * What bench/peers/index.ts exports. Loaded by a path held in a variable, so actorloop's own
 * typecheck and install never reach the peers' dependencies.
 */
export interface PeersModule {
  readonly peers: readonly Contender[];
  readonly httpPeers: readonly HttpContender[];
}

/** Import bench/peers/index.ts (its dependencies must be installed: `npm run bench:peers` does it). */
export async function loadPeers(): Promise<PeersModule> {
  const path = '../peers/index.ts';
  return (await import(path)) as PeersModule;
}
