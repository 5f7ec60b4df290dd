/**
 * `actorloop/telemetry`: OpenTelemetry spans for agent runs, after the GenAI semantic
 * conventions. An agent traces its own runs with `createAgent({ observe: { telemetry: true } })`;
 * `traceEvents` traces any journal stream (a strategy run's, an agent system's).
 *
 * @example
 * ```ts
 * import { traceEvents } from 'actorloop/telemetry';
 * const run = startStrategy({ strategy: strategies.vote(), task, subAgent });
 * traceEvents(run.events$); // invoke_agent for the runner, its branches' runs as child spans
 * ```
 */
export { traceEvents } from './spans.ts';
export type { TelemetryOptions } from './spans.ts';
