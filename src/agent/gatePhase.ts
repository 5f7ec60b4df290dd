/** Unknown tools and malformed arguments are blocked before any policy runs, their observation telling the model how to fix the call. */
import type { GateInput, GateOutput, PlannedCall } from '../core/run.ts';
import type { Message, ToolCall } from '../core/messages.ts';
import type { LoopEvent } from '../core/loopEvent.ts';
import { evaluateGate, type PolicyGateError } from '../policy/evaluateGate.ts';
import type { GateContext, PolicyGate } from '../policy/types.ts';
import { taintOf, type Taint, type TaintPolicy } from '../policy/taint.ts';
import { parseToolArguments, unknownToolObservation } from '../tools/arguments.ts';
import type { ToolRegistry } from '../tools/registry.ts';
import type { Tool } from '../tools/types.ts';
import type { HookRunner, HookScope } from './hooks.ts';

export interface GatePhaseDeps {
  readonly tools: ToolRegistry;
  readonly gate: PolicyGate;
  /** A gate's decision that takes longer denies the call. */
  readonly gateTimeoutMs?: number;
  /** `undefined`: taint is not tracked. */
  readonly taint?: TaintPolicy;
  readonly beforeToolCall?: HookRunner['beforeToolCall'];
  /** `undefined`: all tools. */
  readonly toolView?: ToolView;
}

/** The tools a conversation allows, and why, when something narrows them. */
export type ToolView = (messages: readonly Message[]) => { allows(tool: string): boolean; readonly why: string } | undefined;

export interface GatePhaseScope {
  readonly runId: string;
  readonly agentId: string;
  emit(event: LoopEvent): void;
  readonly hooks?: HookScope;
}

type PolicyEvaluated = Extract<LoopEvent, { type: 'policy.evaluated' }>;

interface PlanScope {
  readonly deps: GatePhaseDeps;
  readonly context: GateContext;
  readonly taint: Taint | undefined;
  readonly hooks: HookScope | undefined;
  readonly view: ReturnType<ToolView>;
}

/** Calls are evaluated concurrently; events go out afterwards in call order, so the journal reads deterministically. */
export async function planCalls(input: GateInput, deps: GatePhaseDeps, scope: GatePhaseScope): Promise<GateOutput> {
  const taint = deps.taint === undefined ? undefined : taintOf(input.messages);
  const planScope: PlanScope = {
    deps,
    context: { runId: scope.runId, agentId: scope.agentId, iteration: input.iteration, messages: input.messages, ...(taint === undefined ? {} : { taint }) },
    taint,
    hooks: scope.hooks,
    view: deps.toolView?.(input.messages),
  };
  const planned = await Promise.all(input.calls.map((call) => planOne(call, planScope)));
  const plan: PlannedCall[] = [];
  for (const [entry, event] of planned) {
    plan.push(entry);
    scope.emit(event);
  }
  return { plan };
}

function evaluated(call: ToolCall, decision: PolicyEvaluated['decision'], reason?: string, gateFailure?: PolicyEvaluated['gateFailure']): PolicyEvaluated {
  return {
    type: 'policy.evaluated',
    toolCallId: call.id,
    tool: call.name,
    decision,
    ...(reason === undefined ? {} : { reason }),
    ...(gateFailure === undefined ? {} : { gateFailure }),
  };
}

async function planOne(call: ToolCall, scope: PlanScope): Promise<[PlannedCall, LoopEvent]> {
  const planned = await gateOne(call, scope);
  const [entry] = planned;
  const hook = scope.deps.beforeToolCall;
  if (hook === undefined || scope.hooks === undefined || entry.verdict === 'blocked') return planned;
  const tool = scope.deps.tools.get(call.name) as Tool;
  return askHook(hook, tool, planned, entry.verdict, scope.hooks);
}

/** The user's `beforeToolCall` on a call the gate let through: it may approve, deny or rewrite it. */
async function askHook(
  hook: NonNullable<GatePhaseDeps['beforeToolCall']>,
  tool: Tool,
  planned: [PlannedCall, LoopEvent],
  verdict: 'run' | 'confirm',
  hooks: HookScope,
): Promise<[PlannedCall, LoopEvent]> {
  const [entry, gated] = planned;
  const { call } = entry;
  const decision = await hook({ toolCallId: call.id, tool: tool.name, arguments: entry.arguments, permissions: tool.permissions, verdict }, hooks);
  if (decision === undefined) return planned;
  if (decision.kind === 'deny') {
    const note = `Denied by the beforeToolCall hook: ${decision.reason}`;
    return [{ call, arguments: undefined, verdict: 'blocked', blockedBy: 'policy', note }, evaluated(call, 'deny', note)];
  }
  if (decision.kind === 'approve') {
    const reason = `Approved by the beforeToolCall hook${decision.reason === undefined ? '' : `: ${decision.reason}`}`;
    return [{ call, arguments: entry.arguments, verdict: 'run', note: reason }, evaluated(call, 'allow', reason)];
  }
  const revalidated = tool.input.safeParse(decision.arguments);
  if (!revalidated.success) {
    const note = 'Denied by the beforeToolCall hook: its modification produced arguments the tool does not accept.';
    return [{ call, arguments: undefined, verdict: 'blocked', blockedBy: 'policy', note }, evaluated(call, 'deny', note)];
  }
  const reason = decision.reason ?? 'modified by the beforeToolCall hook';
  // A call that waits for a human still does, with the new arguments.
  if (verdict === 'confirm') return [{ ...entry, arguments: revalidated.data }, gated];
  return [{ call, arguments: revalidated.data, verdict: 'run', note: reason }, evaluated(call, 'modify', reason)];
}

async function gateOne(call: ToolCall, { deps, context, taint, view }: PlanScope): Promise<[PlannedCall, LoopEvent]> {
  const tool = deps.tools.get(call.name);
  if (tool === undefined) {
    const note = unknownToolObservation(call.name, deps.tools);
    return [{ call, arguments: undefined, verdict: 'blocked', blockedBy: 'unknown_tool', note }, evaluated(call, 'unknown_tool')];
  }
  if (view !== undefined && !view.allows(tool.name)) {
    const note = `Tool "${tool.name}" is not available while ${view.why}; use the tools you were given.`;
    return [{ call, arguments: undefined, verdict: 'blocked', blockedBy: 'policy', note }, evaluated(call, 'deny', note)];
  }
  const parsed = parseToolArguments(tool, call.arguments);
  if (!parsed.ok) {
    return [
      { call, arguments: undefined, verdict: 'blocked', blockedBy: 'invalid_arguments', note: parsed.observation },
      evaluated(call, 'invalid', parsed.code),
    ];
  }
  let failed: PolicyGateError | undefined;
  const decision = await evaluateGate(
    deps.gate,
    { toolCallId: call.id, tool: tool.name, arguments: parsed.value, permissions: tool.permissions },
    context,
    {
      onGateError: (error) => {
        failed = error;
      },
      ...(deps.gateTimeoutMs === undefined ? {} : { timeoutMs: deps.gateTimeoutMs }),
    },
  );
  if (decision.kind === 'deny') {
    const note = `Denied by policy: ${decision.reason}`;
    const failure = failed === undefined ? undefined : { gate: failed.gate, failure: failed.failure };
    return [{ call, arguments: undefined, verdict: 'blocked', blockedBy: 'policy', note }, evaluated(call, 'deny', decision.reason, failure)];
  }
  let args = parsed.value;
  let modifiedReason: string | undefined;
  if (decision.kind === 'modify' || (decision.kind === 'confirm' && decision.arguments !== undefined)) {
    // A gate's rewrite must still satisfy the tool's schema; otherwise the call does not run.
    const revalidated = tool.input.safeParse(decision.arguments);
    if (!revalidated.success) {
      const note = `Denied by policy: the gate's modification (${decision.reason}) produced arguments the tool does not accept.`;
      return [{ call, arguments: undefined, verdict: 'blocked', blockedBy: 'policy', note }, evaluated(call, 'deny', note)];
    }
    args = revalidated.data;
    if (decision.kind === 'modify') modifiedReason = decision.reason;
  }
  const asked = decision.kind === 'confirm' ? decision.reason : undefined;
  // A gate's allow does not clear the taint: side effects after untrusted content need the taint policy's leave.
  const held = deps.taint?.hold(tool, taint);
  if (held?.verdict === 'blocked') {
    return [{ call, arguments: undefined, verdict: 'blocked', blockedBy: 'policy', note: held.reason }, evaluated(call, 'deny', held.reason)];
  }
  if (held !== undefined) {
    const reason = asked === undefined ? held.reason : `${asked} ${held.reason}`;
    return [{ call, arguments: args, verdict: 'confirm', note: reason }, evaluated(call, 'confirm', reason)];
  }
  // A gate that asks is answered like a tool that requires confirmation, its reason being the question.
  if (asked !== undefined) return [{ call, arguments: args, verdict: 'confirm', note: asked }, evaluated(call, 'confirm', asked)];
  if (tool.requiresConfirmation) {
    return [{ call, arguments: args, verdict: 'confirm', note: 'Waiting for human confirmation.' }, evaluated(call, 'confirm', modifiedReason)];
  }
  return [
    { call, arguments: args, verdict: 'run', ...(modifiedReason === undefined ? {} : { note: modifiedReason }) },
    evaluated(call, modifiedReason === undefined ? 'allow' : 'modify', modifiedReason),
  ];
}
