/** `actorloop/telemetry`: OpenTelemetry spans for agent runs, after the GenAI semantic conventions. */
export { traceEvents } from './spans.ts';
export type { TelemetryOptions } from './spans.ts';
