import { DEFAULTS } from '../core/defaults.ts';

export const SYSTEM_DEFAULTS = {
  concurrency: 1,
  /** Queueing included; the asked run's own wall-clock limit would end it at the same point. */
  askTimeoutMs: DEFAULTS.loop.timeoutMs,
  externalSender: 'user',
} as const;
