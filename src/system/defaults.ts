/**
 * Defaults of the agent system. Kept beside it until they move into `src/defaults.ts` (which
 * this folder does not own); everything else is read from there.
 */
import { DEFAULTS } from '../core/defaults.ts';

/**
 * @example
 * ```ts
 * system.spawn('worker', config, { concurrency: SYSTEM_DEFAULTS.concurrency * 2 });
 * ```
 */
export const SYSTEM_DEFAULTS = {
  /** Tasks an agent runs at once; later messages wait in its mailbox, in order. */
  concurrency: 1,
  /**
   * How long an ask or a delegation waits for the answer, queueing included, in ms. The asked
   * run's own wall-clock limit would end it at the same point, so waiting longer buys nothing.
   */
  askTimeoutMs: DEFAULTS.loop.timeoutMs,
  /** The `from` of messages sent by code outside the system. */
  externalSender: 'user',
} as const;
