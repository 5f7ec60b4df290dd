/**
 * What every contender of the benchmark provides: a prepared definition (agent, machine, loop)
 * that runs react-N once per call. Calling one runner concurrently is "many runs of one
 * definition"; calling `create` many times is "many separate agents".
 */
import type { ReactConfig } from './react.ts';

/** One complete react-N run; resolves when the run has produced the scripted answer. */
export type RunOnce = () => Promise<void>;

export interface Contender {
  /** Short key used in the JSON results (`bare`, `xstate`, `actorloop`, `actorloop_file`). */
  readonly id: string;
  /** Row label in the table. */
  readonly label: string;
  /** Build what lives across runs (the model, the machine or the agent). */
  create(config: ReactConfig): RunOnce;
}
