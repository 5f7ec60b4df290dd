/**
 * Spans use the entries' own timestamps, so they show when the work happened, not when it was observed. Attributes
 * carry ids, names, counts and error codes, never conversation text.
 */
import { context as otelContext, SpanKind, SpanStatusCode, trace, type Span, type Tracer } from '@opentelemetry/api';
import type { Observable, Subscription } from 'rxjs';
import type { JournalEntry, LoopEventOf } from '../core/loopEvent.ts';

export interface TelemetryOptions {
  /** The tracer to use. Default: `trace.getTracer('actorloop')` from the registered provider. */
  readonly tracer?: Tracer;
  /** `gen_ai.agent.name` of a run, by agent id. Default: the agent id. */
  readonly agentName?: (agentId: string) => string;
}

const OK_STATUSES = new Set(['ok', 'cached', 'fallback']);
const MAX_PENDING_ASKS = 1_024;

interface RunSpans {
  readonly span: Span;
  readonly model: string;
  chat?: Span;
  readonly tools: Map<string, Span>;
}

/** Asks whose task never starts must not pile up: the oldest is forgotten. */
function remember(map: Map<string, string>, key: string, value: string): void {
  map.set(key, value);
  if (map.size > MAX_PENDING_ASKS) map.delete(map.keys().next().value as string);
}

/** The run that delegated it (an ask names the task's run as its correlation id), or a strategy's (it names its branches' runs after its own). */
function parentOf(runId: string, runs: ReadonlyMap<string, RunSpans>, delegatedFrom: ReadonlyMap<string, string>): RunSpans | undefined {
  const delegator = delegatedFrom.get(runId);
  if (delegator !== undefined && runs.has(delegator)) return runs.get(delegator);
  let best: [string, RunSpans] | undefined;
  for (const entry of runs) {
    if (runId.startsWith(`${entry[0]}-`) && (best === undefined || entry[0].length > best[0].length)) best = entry;
  }
  return best?.[1];
}

/**
 * Any journal stream: `agent.events$`, a strategy run's or an agent system's. Unsubscribe to stop.
 * @example
 * ```ts
 * traceEvents(agent.events$, { tracer: provider.getTracer('my-app') });
 * ```
 */
export function traceEvents(events$: Observable<JournalEntry>, options: TelemetryOptions = {}): Subscription {
  const tracer = options.tracer ?? trace.getTracer('actorloop');
  const nameOf = options.agentName ?? ((agentId: string) => agentId);
  const runs = new Map<string, RunSpans>();
  // An ask is journalled twice under one correlation id: in the asking run, then in the task's
  // run just before it starts. Task id → asking run, then task run → asking run.
  const askedBy = new Map<string, string>();
  const delegatedFrom = new Map<string, string>();

  const child = (run: RunSpans, name: string, kind: SpanKind, startTime: number, attributes: Record<string, string | number>): Span =>
    tracer.startSpan(name, { kind, startTime, attributes }, trace.setSpan(otelContext.active(), run.span));

  const started = (entry: JournalEntry, event: LoopEventOf<'run.started'>): void => {
    const parent = parentOf(entry.runId, runs, delegatedFrom);
    delegatedFrom.delete(entry.runId);
    const agentName = nameOf(entry.agentId);
    const span = tracer.startSpan(
      `invoke_agent ${agentName}`,
      {
        kind: SpanKind.INTERNAL,
        startTime: entry.timestamp,
        attributes: {
          'gen_ai.operation.name': 'invoke_agent',
          'gen_ai.agent.id': entry.agentId,
          'gen_ai.agent.name': agentName,
          'gen_ai.conversation.id': entry.runId,
          'gen_ai.request.model': event.model,
        },
      },
      parent === undefined ? otelContext.active() : trace.setSpan(otelContext.active(), parent.span),
    );
    runs.set(entry.runId, { span, model: event.model, tools: new Map() });
  };

  const terminated = (entry: JournalEntry, run: RunSpans, event: LoopEventOf<'run.terminated'>): void => {
    const errorType = event.error?.code ?? (event.reason === 'final_answer' || event.reason === 'cancelled' ? undefined : event.reason);
    for (const open of [run.chat, ...run.tools.values()]) {
      if (open === undefined) continue;
      if (errorType !== undefined) open.setAttribute('error.type', errorType);
      open.end(entry.timestamp);
    }
    run.span.setAttributes({ 'gen_ai.usage.input_tokens': event.usage.promptTokens, 'gen_ai.usage.output_tokens': event.usage.completionTokens });
    if (errorType !== undefined) {
      run.span.setAttribute('error.type', errorType);
      run.span.setStatus({ code: SpanStatusCode.ERROR, message: errorType });
    }
    run.span.end(entry.timestamp);
    runs.delete(entry.runId);
  };

  const next = (entry: JournalEntry): void => {
    const { event } = entry;
    if (event.type === 'run.started') return started(entry, event);
    if (event.type === 'agent.message') {
      if ((event.kind !== 'delegate' && event.kind !== 'ask') || event.correlationId === undefined) return;
      const asker = askedBy.get(event.correlationId);
      if (event.from === entry.agentId && runs.has(entry.runId)) remember(askedBy, event.correlationId, entry.runId);
      else if (event.to === entry.agentId && asker !== undefined) {
        askedBy.delete(event.correlationId);
        remember(delegatedFrom, entry.runId, asker);
      }
      return;
    }
    const run = runs.get(entry.runId);
    if (run === undefined) return;
    switch (event.type) {
      case 'phase.entered':
        if (event.phase === 'reason' && run.chat === undefined) {
          run.chat = child(run, `chat ${run.model}`, SpanKind.CLIENT, entry.timestamp, {
            'gen_ai.operation.name': 'chat',
            'gen_ai.request.model': run.model,
            'gen_ai.conversation.id': entry.runId,
          });
        }
        return;
      case 'reasoning.completed':
        if (run.chat !== undefined) {
          run.chat.setAttributes({ 'gen_ai.usage.input_tokens': event.usage.promptTokens, 'gen_ai.usage.output_tokens': event.usage.completionTokens });
          run.chat.end(entry.timestamp);
          run.chat = undefined;
        }
        return;
      case 'tool.started':
        if (!run.tools.has(event.toolCallId)) {
          run.tools.set(
            event.toolCallId,
            child(run, `execute_tool ${event.tool}`, SpanKind.INTERNAL, entry.timestamp, {
              'gen_ai.operation.name': 'execute_tool',
              'gen_ai.tool.name': event.tool,
              'gen_ai.tool.call.id': event.toolCallId,
              'gen_ai.conversation.id': entry.runId,
            }),
          );
        }
        return;
      case 'tool.finished': {
        const span = run.tools.get(event.toolCallId);
        if (span === undefined) return;
        if (!OK_STATUSES.has(event.status)) {
          span.setAttribute('error.type', event.status);
          span.setStatus({ code: SpanStatusCode.ERROR, message: event.status });
        }
        span.end(entry.timestamp);
        run.tools.delete(event.toolCallId);
        return;
      }
      case 'run.terminated':
        return terminated(entry, run, event);
      default:
        return;
    }
  };
  return events$.subscribe({ next });
}
