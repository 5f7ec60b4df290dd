/**
 * Traces: runs read back from their journals as step DAGs, looked up by run id or listed, and
 * drawn as Mermaid flowcharts.
 *
 * @example
 * ```ts
 * const trace = await agent.traces.get(result.runId);
 * if (trace !== undefined) console.log(traceToMermaid(trace));
 * ```
 */
export { buildTrace } from './trace.ts';
export type { Trace, TraceStatus, TraceStep, TraceStepType } from './trace.ts';
export { traceToMermaid } from './mermaid.ts';
export { createTraces } from './query.ts';
export type { TraceListOptions, TraceSummary, Traces } from './query.ts';
