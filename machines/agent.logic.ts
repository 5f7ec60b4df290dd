/**
 * Pure functions behind the agent machine's guards and assignments. No I/O, no runtime imports:
 * everything here is a function of the context, so it is trivially testable and persistable.
 */
import type { AssistantMessage, Message, ToolCall, ToolMessage } from '../src/core/messages.ts';
import type { ErrorData } from '../src/core/loopEvent.ts';
import type { AgentContext } from './agent.types.ts';
import type { ActCall, ActOutput, PendingHuman, PlannedCall, ReasonOutput, Termination, ToolOutcome } from '../src/core/run.ts';

/**
 * The calls of the current turn and their outcomes so far: what routing after `gate`, `act` and
 * a human decision looks at. A guard runs before its transition's assignment, so routing guards
 * get the calls as that assignment will leave them, not the context as it is.
 */
export type TurnCalls = Pick<AgentContext, 'plan' | 'outcomes'>;

/** Outcomes of a freshly gated turn: none yet (a missing entry reads as `null`). */
const NO_OUTCOMES: readonly (ToolOutcome | null)[] = Object.freeze([]);

/** The turn as the gate leaves it: its plan, no outcomes. */
export function gatedTurn(plan: readonly PlannedCall[]): TurnCalls {
  return { plan, outcomes: NO_OUTCOMES };
}

/** Calls approved to run that have no outcome yet. */
export function runnableCalls(context: TurnCalls): ActCall[] {
  const calls: ActCall[] = [];
  const { plan, outcomes } = context;
  for (let index = 0; index < plan.length; index++) {
    const planned = plan[index] as PlannedCall;
    if (planned.verdict === 'run' && (outcomes[index] ?? null) === null) {
      calls.push({ index, call: planned.call, arguments: planned.arguments });
    }
  }
  return calls;
}

/** Ids and names of the calls an act phase is about to run (the `tools.dispatched` payload). */
export function dispatchedCalls(context: TurnCalls): { id: string; name: string }[] {
  const calls: { id: string; name: string }[] = [];
  const { plan, outcomes } = context;
  for (let index = 0; index < plan.length; index++) {
    const planned = plan[index] as PlannedCall;
    if (planned.verdict === 'run' && (outcomes[index] ?? null) === null) calls.push({ id: planned.call.id, name: planned.call.name });
  }
  return calls;
}

/** How many observations of the turn are errors: blocked calls and failed ones. */
export function observationErrors(context: TurnCalls): number {
  let errors = 0;
  for (let i = 0; i < context.plan.length; i++) {
    if ((context.plan[i] as PlannedCall).verdict === 'blocked' || context.outcomes[i]?.isError === true) errors++;
  }
  return errors;
}

/** True when some call is approved to run and has no outcome yet (`runnableCalls` without the copy). */
export function hasRunnableCalls(context: TurnCalls): boolean {
  const { plan, outcomes } = context;
  for (let index = 0; index < plan.length; index++) {
    if ((plan[index] as PlannedCall).verdict === 'run' && (outcomes[index] ?? null) === null) return true;
  }
  return false;
}

/**
 * The outcomes once an act phase's results are in: one per call the phase ran, at that call's
 * index. Every runnable call gets one, so none is runnable afterwards.
 */
export function outcomesAfterAct(context: TurnCalls, output: ActOutput): (ToolOutcome | null)[] {
  const outcomes: (ToolOutcome | null)[] = [...context.outcomes];
  const calls = runnableCalls(context);
  for (let i = 0; i < calls.length; i++) {
    const { index, call } = calls[i] as ActCall;
    // A missing outcome would leave the call runnable forever: record it as an error instead.
    outcomes[index] = output.outcomes[i] ?? missingOutcome(call);
  }
  return outcomes;
}

/** Calls waiting for a human: unconfirmed calls first, else escalated failures. */
export function pendingHuman(context: TurnCalls): PendingHuman | null {
  const confirm: string[] = [];
  const escalate: string[] = [];
  for (let i = 0; i < context.plan.length; i++) {
    const planned = context.plan[i] as PlannedCall;
    const outcome = context.outcomes[i] ?? null;
    if (planned.verdict === 'confirm' && outcome === null) confirm.push(planned.call.id);
    else if (outcome?.status === 'escalate') escalate.push(planned.call.id);
  }
  if (confirm.length > 0) return { kind: 'confirmation', toolCallIds: confirm };
  if (escalate.length > 0) return { kind: 'escalation', toolCallIds: escalate };
  return null;
}

/** Why each call a confirmation waits on waits (its planned note: the gate's, taint policy's or tool's reason). */
export function confirmationReasons(context: TurnCalls, pending: PendingHuman | null): { toolCallId: string; reason: string }[] {
  const reasons: { toolCallId: string; reason: string }[] = [];
  if (pending?.kind !== 'confirmation') return reasons;
  for (const planned of context.plan) {
    if (planned.note !== undefined && pending.toolCallIds.includes(planned.call.id)) reasons.push({ toolCallId: planned.call.id, reason: planned.note });
  }
  return reasons;
}

/** `pendingHuman(context) !== null`, without building the lists (it guards every turn). */
export function hasPendingHuman(context: TurnCalls): boolean {
  const { plan, outcomes } = context;
  for (let i = 0; i < plan.length; i++) {
    const outcome = outcomes[i] ?? null;
    if (outcome === null ? (plan[i] as PlannedCall).verdict === 'confirm' : outcome.status === 'escalate') return true;
  }
  return false;
}

/**
 * Apply a human decision to the pending calls (all of them, or the ids given). Approving a
 * confirmation lets the call run; approving an escalation runs it again; rejecting either puts
 * the rejection into the conversation as the call's result.
 */
export function resolveHuman(
  context: TurnCalls & Pick<AgentContext, 'pending'>,
  decision: 'approve' | 'reject',
  toolCallIds: readonly string[] | undefined,
  reason?: string,
): TurnCalls {
  const pending = context.pending ?? pendingHuman(context);
  if (pending === null) return { plan: context.plan, outcomes: context.outcomes };
  const chosen = new Set(toolCallIds ?? pending.toolCallIds);
  const plan = [...context.plan];
  const outcomes = [...context.outcomes];
  for (let i = 0; i < plan.length; i++) {
    const planned = plan[i] as PlannedCall;
    if (!chosen.has(planned.call.id) || !pending.toolCallIds.includes(planned.call.id)) continue;
    if (decision === 'approve') {
      if (planned.verdict === 'confirm') plan[i] = { ...planned, verdict: 'run' };
      else outcomes[i] = null;
    } else {
      outcomes[i] = {
        toolCallId: planned.call.id,
        tool: planned.call.name,
        status: 'rejected',
        content: `A human rejected this call${reason === undefined ? '' : `: ${reason}`}. Do not retry it unchanged.`,
        isError: true,
      };
    }
  }
  return { plan, outcomes };
}

/** True when the model proposed calls and none of them was well-formed (a repair turn). */
export function turnWasAllInvalid(plan: readonly PlannedCall[]): boolean {
  if (plan.length === 0) return false;
  for (const planned of plan) {
    if (planned.blockedBy !== 'invalid_arguments' && planned.blockedBy !== 'unknown_tool') return false;
  }
  return true;
}

/** One tool message per planned call, in call order: what the observe phase adds to the conversation. */
export function observationsOf(context: AgentContext): ToolMessage[] {
  const observations: ToolMessage[] = [];
  for (let i = 0; i < context.plan.length; i++) {
    const planned = context.plan[i] as PlannedCall;
    const outcome = context.outcomes[i] ?? null;
    observations.push(observationFor(planned, outcome));
  }
  return observations;
}

/** The conversation with one tool message per planned call, in call order. */
export function appendObservations(context: AgentContext): Message[] {
  // The history is copied (snapshots are immutable), so at least copy it once, at its exact
  // size: concat allocates half of what slice-then-push does and takes half the time.
  return context.messages.concat(observationsOf(context));
}

/** Literal objects rather than spreads: this runs for every call of every turn. */
function observationFor(planned: PlannedCall, outcome: ToolOutcome | null): ToolMessage {
  const parts = outcome?.parts;
  // Rare (a tool's images for a model that takes them): the plain message, with its images.
  if (parts !== undefined && parts.length > 0) return { ...observationFor(planned, { ...(outcome as ToolOutcome), parts: undefined }), parts: [...parts] };
  const { id, name } = planned.call;
  if (outcome === null) return { role: 'tool', toolCallId: id, name, content: planned.note ?? 'This call was not executed.', isError: true };
  if (outcome.untrusted !== undefined) {
    return { role: 'tool', toolCallId: id, name, content: outcome.content, ...(outcome.isError ? { isError: true } : {}), untrusted: outcome.untrusted };
  }
  if (outcome.isError) return { role: 'tool', toolCallId: id, name, content: outcome.content, isError: true };
  return { role: 'tool', toolCallId: id, name, content: outcome.content };
}

export function missingOutcome(call: ToolCall): ToolOutcome {
  return {
    toolCallId: call.id,
    tool: call.name,
    status: 'error',
    content: 'The executor returned no result for this call.',
    isError: true,
  };
}

/**
 * True when an act phase reported the run stuck. A snapshot persisted before `stuck` existed is not stuck.
 *
 * @example
 * ```ts
 * isStuck({ ...context, stuck: 'echo repeated 3 times' }); // true
 * ```
 */
export function isStuck(context: AgentContext): boolean {
  return (context.stuck ?? null) !== null;
}

/**
 * How a stuck run ends: reason `stuck`, with the detector's explanation as plain error data (no
 * Error object, so the termination persists and journals as it is).
 *
 * @example
 * ```ts
 * stuckTermination('echo repeated 3 times').errorData?.code; // 'stuck'
 * ```
 */
export function stuckTermination(reason: string | null): Termination {
  return {
    reason: 'stuck',
    errorData: { name: 'RunError', code: 'stuck', message: reason ?? 'the run was found stuck in a loop', blame: 'model' },
  };
}

/**
 * The assistant message a reply leaves in the conversation. A truncated reply keeps its text but
 * not its tool calls: their arguments were cut off, and no result will ever answer them. A
 * refusal is what the model said, so it stays in the conversation as its content.
 *
 * @example
 * ```ts
 * assistantMessage({ text: 'Hi', toolCalls: [], usage, costUsd: 0, reasoning: [{ type: 'thinking', text: 'greet' }] }); // { role: 'assistant', content: 'Hi', reasoning: [{ type: 'thinking', text: 'greet' }] }
 * ```
 */
export function assistantMessage(output: ReasonOutput): AssistantMessage {
  const { text, toolCalls, reasoning } = output;
  // Reasoning stays on the message: providers that sign it (Anthropic) or require it (DeepSeek) get it back.
  const thought = reasoning === undefined || reasoning.length === 0 ? {} : { reasoning: [...reasoning] };
  if (output.refusal !== undefined) return { role: 'assistant', content: output.refusal, ...thought };
  if (toolCalls.length > 0 && output.truncated !== true) return { role: 'assistant', content: text, toolCalls: [...toolCalls], ...thought };
  return { role: 'assistant', content: text ?? '', ...thought };
}

/**
 * How a refused reply ends the run: reason `refusal`, with the model's words as the error message.
 *
 * @example
 * ```ts
 * refusalTermination("I'm sorry, I can't help with that.").errorData?.code; // 'model_refused'
 * ```
 */
export function refusalTermination(refusal: string): Termination {
  return {
    reason: 'refusal',
    errorData: { name: 'RunError', code: 'model_refused', message: `The model refused to answer: ${refusal}`, blame: 'model' },
  };
}

/**
 * How a reply cut off at the output-token cap ends the run (the agent's `onLength` policy is `end`).
 *
 * @example
 * ```ts
 * lengthTermination(256).reason; // 'length'
 * ```
 */
export function lengthTermination(completionTokens: number): Termination {
  return {
    reason: 'length',
    errorData: {
      name: 'RunError',
      code: 'reply_truncated',
      message: `the model's reply was cut off at the output-token cap after ${completionTokens} tokens`,
      blame: 'user',
    },
  };
}

/** A JSON-safe description of any thrown value, for events and persisted snapshots. */
export function errorData(error: unknown): ErrorData {
  if (error instanceof Error) {
    const withCode = error as Error & { code?: unknown; blame?: unknown };
    return {
      name: error.name,
      code: typeof withCode.code === 'string' ? withCode.code : 'error',
      message: error.message,
      ...(typeof withCode.blame === 'string' ? { blame: withCode.blame } : {}),
    };
  }
  return { name: 'Error', code: 'error', message: typeof error === 'string' ? error : String(error) };
}
