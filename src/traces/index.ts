export { buildTrace } from './trace.ts';
export type { Trace, TraceStatus, TraceStep, TraceStepType } from './trace.ts';
export { traceToMermaid } from './mermaid.ts';
export { createTraces } from './query.ts';
export type { TraceListOptions, TraceSummary, Traces } from './query.ts';
