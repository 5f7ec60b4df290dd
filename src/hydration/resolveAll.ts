/** At the deadline every pending reference settles as failed, so a resolver that ignores its signal cannot hold the run back. */
import { PreHydrationTimeoutError } from './errors.ts';
import type { Reference } from './references.ts';
import type { ResolverFunction } from './resolvers.ts';

export type ResolutionOutcome =
  | { readonly ok: true; readonly reference: Reference; readonly value: unknown }
  | { readonly ok: false; readonly reference: Reference; readonly error: unknown; readonly timedOut: boolean };

export interface ResolveAllOptions {
  readonly resolvers: ReadonlyMap<string, ResolverFunction>;
  readonly timeoutMs: number;
  /** The run's signal: cancelling the run aborts every resolver. */
  readonly signal: AbortSignal;
  readonly runId: string;
  readonly agentId: string;
}

/** Never rejects; one outcome per reference, in order. */
export async function resolveAll(references: readonly Reference[], options: ResolveAllOptions): Promise<ResolutionOutcome[]> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new PreHydrationTimeoutError(options.timeoutMs)), options.timeoutMs);
  const onParentAbort = () => controller.abort(options.signal.reason);
  if (options.signal.aborted) onParentAbort();
  else options.signal.addEventListener('abort', onParentAbort, { once: true });
  const { signal } = controller;

  const settle = (reference: Reference, position: number): Promise<ResolutionOutcome> =>
    new Promise((resolve) => {
      const onAbort = () => resolve({ ok: false, reference, error: signal.reason, timedOut: signal.reason instanceof PreHydrationTimeoutError });
      if (signal.aborted) return onAbort();
      signal.addEventListener('abort', onAbort, { once: true });
      const resolver = options.resolvers.get(reference.kind);
      const context = { signal, runId: options.runId, agentId: options.agentId, callId: `prehydrate_${position}` };
      // Promise.resolve().then: a resolver that throws synchronously is a failure like any other.
      Promise.resolve()
        .then(() => {
          if (resolver === undefined) throw new Error(`no resolver for "${reference.kind}" references`);
          return resolver(reference, context);
        })
        .then(
          (value) => resolve({ ok: true, reference, value }),
          (error: unknown) => resolve({ ok: false, reference, error, timedOut: false }),
        )
        .finally(() => signal.removeEventListener('abort', onAbort));
    });

  try {
    return await Promise.all(references.map(settle));
  } finally {
    clearTimeout(timer);
    options.signal.removeEventListener('abort', onParentAbort);
  }
}
