/**
 * Built from the journal, the one record of a run, so there is no second log to keep in step. Parallel calls of one
 * turn share the model call as parent; the next model call has the turn's results as parents.
 */
import type { JournalEntry, LoopEvent, LoopEventOf, TerminationReason } from '../core/loopEvent.ts';
import type { Usage } from '../core/provider.ts';
import { defined } from '../core/defined.ts';

export type TraceStepType = 'llm_call' | 'tool_call' | 'tool_result' | 'reasoning';

export interface TraceStep {
  /** Unique in its trace: `llm_<n>`, `call_<toolCallId>`, `result_<toolCallId>`, `reasoning_<n>`, `round_<n>`, `branch_<id>`. */
  readonly id: string;
  readonly type: TraceStepType;
  readonly parentIds: readonly string[];
  readonly data: Readonly<Record<string, unknown>>;
  readonly startedAt: number;
  readonly durationMs: number;
}

export type TraceStatus = 'running' | 'done' | 'failed' | 'cancelled';

export interface Trace {
  readonly id: string;
  /** `call`: one model call (`agent.call`); `agent`: a run of the loop or a strategy. */
  readonly mode: 'call' | 'agent';
  readonly task: string;
  readonly status: TraceStatus;
  readonly context: {
    readonly agentId: string;
    readonly model: string;
    readonly tools: readonly string[];
    readonly iterations: number;
    readonly usage: Usage;
    readonly reason?: TerminationReason;
    readonly error?: string;
  };
  readonly created: number;
  readonly completed?: number;
  readonly steps: readonly TraceStep[];
  /** Traces of runs this one started (strategy branches), each linked from a step's `data.subTraceId`. */
  readonly children: readonly Trace[];
}

/** What a model reply's text is cut to in a step: a trace is for finding your way, the journal has the rest. */
const TEXT_PREVIEW = 500;

interface MutableStep {
  id: string;
  type: TraceStepType;
  parentIds: string[];
  data: Record<string, unknown>;
  startedAt: number;
  durationMs: number;
}

class TraceBuilder {
  readonly steps = new Map<string, MutableStep>();
  task = '';
  model = '';
  tools: readonly string[] = [];
  mode: 'call' | 'agent' = 'agent';
  created: number | undefined;
  completed: number | undefined;
  terminated: LoopEventOf<'run.terminated'> | undefined;
  agentId = '';
  /** Where the next model call hangs from: the last turn's results (or its blocked calls). */
  leaves: string[] = [];
  turnParent: string | undefined;
  turnCalls: string[] = [];
  reasonStartedAt: number | undefined;
  /** The strategy's last decision: branches hang from it. */
  lastRound: string | undefined;
  rounds = 0;

  add(step: MutableStep): MutableStep {
    this.steps.set(step.id, step);
    return step;
  }

  read(entry: JournalEntry): void {
    const { event, timestamp: at } = entry;
    this.created ??= at;
    if (this.agentId === '') this.agentId = entry.agentId;
    this.apply(event, at, entry.iteration);
  }

  private apply(event: LoopEvent, at: number, iteration: number): void {
    switch (event.type) {
      case 'run.started':
        this.task = event.task;
        this.model = event.model;
        this.tools = event.tools;
        if (event.mode === 'call') this.mode = 'call';
        return;
      case 'phase.entered':
        if (event.phase === 'reason') this.reasonStartedAt = at;
        return;
      case 'reasoning.completed':
        return this.modelCall(event, at, iteration);
      case 'policy.evaluated': {
        const id = `call_${event.toolCallId}`;
        const step = this.steps.get(id) ?? this.add({ id, type: 'tool_call', parentIds: this.turnParent === undefined ? [] : [this.turnParent], data: { tool: event.tool, toolCallId: event.toolCallId }, startedAt: at, durationMs: 0 });
        step.data['decision'] = event.decision;
        if (event.reason !== undefined) step.data['reason'] = event.reason;
        if (!this.turnCalls.includes(id)) this.turnCalls.push(id);
        return;
      }
      case 'human.decided':
        for (const toolCallId of event.toolCallIds) {
          const step = this.steps.get(`call_${toolCallId}`);
          if (step !== undefined) step.data['human'] = event.decision;
        }
        return;
      case 'tool.started': {
        const step = this.steps.get(`call_${event.toolCallId}`);
        if (step !== undefined) step.data['attempts'] = event.attempt;
        return;
      }
      case 'tool.finished':
        return this.toolResult(event, at);
      case 'observations.collected': {
        // Calls without a result (blocked, rejected) end their branch of the DAG themselves.
        const ends = this.turnCalls.map((call) => (this.steps.has(call.replace(/^call_/, 'result_')) ? call.replace(/^call_/, 'result_') : call));
        this.leaves = ends.length > 0 ? ends : this.turnParent === undefined ? [] : [this.turnParent];
        this.turnCalls = [];
        return;
      }
      case 'strategy.decided': {
        const id = `round_${++this.rounds}`;
        this.add({ id, type: 'reasoning', parentIds: this.lastRound === undefined ? [] : [this.lastRound], data: { strategy: event.strategy, decision: event.decision, round: event.round, ...(event.detail === undefined ? {} : { detail: event.detail }) }, startedAt: at, durationMs: 0 });
        this.lastRound = id;
        return;
      }
      case 'branch.started': {
        const parent = event.parentId === undefined ? this.lastRound : `branch_${event.parentId}`;
        this.add({ id: `branch_${event.branchId}`, type: 'reasoning', parentIds: parent === undefined ? [] : [parent], data: { branchId: event.branchId }, startedAt: at, durationMs: 0 });
        return;
      }
      case 'branch.finished': {
        const step = this.steps.get(`branch_${event.branchId}`);
        if (step === undefined) return;
        step.durationMs = event.durationMs;
        step.data['ok'] = event.ok;
        if (event.score !== undefined) step.data['score'] = event.score;
        if (event.runId !== undefined) step.data['subTraceId'] = event.runId;
        return;
      }
      case 'run.terminated':
        this.terminated = event;
        this.completed = at;
        return;
      default:
        return;
    }
  }

  private modelCall(event: LoopEventOf<'reasoning.completed'>, at: number, iteration: number): void {
    const id = `llm_${iteration}`;
    const startedAt = this.reasonStartedAt ?? at;
    this.add({
      id,
      type: 'llm_call',
      parentIds: [...this.leaves],
      data: {
        usage: event.usage,
        ...(event.costUsd === undefined ? {} : { costUsd: event.costUsd }),
        toolCalls: event.toolCalls.map((call) => call.name),
        ...(event.toolCalls.length === 0 && event.text !== null ? { text: preview(event.text) } : {}),
      },
      startedAt,
      durationMs: at - startedAt,
    });
    this.reasonStartedAt = undefined;
    this.turnParent = id;
    this.turnCalls = [];
    this.leaves = [id];
    // Text that came with calls is the model thinking aloud before it acts.
    if (event.text !== null && event.text.trim() !== '' && event.toolCalls.length > 0) {
      this.add({ id: `reasoning_${iteration}`, type: 'reasoning', parentIds: [id], data: { text: preview(event.text) }, startedAt: at, durationMs: 0 });
    }
  }

  private toolResult(event: LoopEventOf<'tool.finished'>, at: number): void {
    const callId = `call_${event.toolCallId}`;
    const call = this.steps.get(callId) ?? this.add({ id: callId, type: 'tool_call', parentIds: this.turnParent === undefined ? [] : [this.turnParent], data: { tool: event.tool, toolCallId: event.toolCallId }, startedAt: at - event.durationMs, durationMs: 0 });
    call.durationMs = Math.max(call.durationMs, at - call.startedAt);
    if (!this.turnCalls.includes(callId)) this.turnCalls.push(callId);
    this.add({ id: `result_${event.toolCallId}`, type: 'tool_result', parentIds: [callId], data: { tool: event.tool, status: event.status, durationMs: event.durationMs }, startedAt: at, durationMs: 0 });
  }
}

function preview(text: string): string {
  return text.length <= TEXT_PREVIEW ? text : `${text.slice(0, TEXT_PREVIEW)}…`;
}

function statusOf(terminated: LoopEventOf<'run.terminated'> | undefined): TraceStatus {
  if (terminated === undefined) return 'running';
  if (terminated.reason === 'final_answer') return 'done';
  return terminated.reason === 'cancelled' ? 'cancelled' : 'failed';
}

/**
 * Entries of other runs among them (a strategy's journal interleaves its branches' runs) become child traces.
 * @example
 * ```ts
 * const trace = buildTrace(store.readJournal(runId).entries, runId);
 * ```
 */
export function buildTrace(entries: readonly JournalEntry[], runId?: string): Trace | undefined {
  const byRun = new Map<string, JournalEntry[]>();
  for (const entry of entries) {
    const list = byRun.get(entry.runId);
    if (list === undefined) byRun.set(entry.runId, [entry]);
    else list.push(entry);
  }
  const root = runId ?? entries[0]?.runId;
  return root === undefined ? undefined : build(root, byRun, new Set());
}

function build(runId: string, byRun: ReadonlyMap<string, readonly JournalEntry[]>, seen: Set<string>): Trace | undefined {
  const entries = byRun.get(runId);
  if (entries === undefined || seen.has(runId)) return undefined;
  seen.add(runId);
  const builder = new TraceBuilder();
  for (const entry of entries) builder.read(entry);
  const children: Trace[] = [];
  for (const step of builder.steps.values()) {
    const sub = step.data['subTraceId'];
    const child = typeof sub === 'string' ? build(sub, byRun, seen) : undefined;
    if (child !== undefined) children.push(child);
  }
  const end = builder.terminated;
  return {
    id: runId,
    mode: builder.mode,
    task: builder.task,
    status: statusOf(end),
    context: {
      agentId: builder.agentId,
      model: builder.model,
      tools: builder.tools,
      iterations: end?.iterations ?? [...builder.steps.values()].filter((s) => s.type === 'llm_call').length,
      usage: end?.usage ?? { promptTokens: 0, completionTokens: 0, totalTokens: 0 },
      ...(end === undefined ? {} : { reason: end.reason }),
      ...(end?.error === undefined ? {} : { error: end.error.message }),
    },
    created: builder.created ?? 0,
    ...defined({ completed: builder.completed }),
    steps: [...builder.steps.values()],
    children,
  };
}
