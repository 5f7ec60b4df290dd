/** Journals parse records back through this schema, so payloads carry ids, counts and short texts, never copies of the conversation. */
import { z } from 'zod';

export const Phase = z.enum(['hydrate', 'reason', 'gate', 'awaitingHuman', 'act', 'observe']);
export type Phase = z.infer<typeof Phase>;

export const TerminationReason = z.enum([
  'final_answer',
  'max_iterations',
  'max_tokens',
  'timeout',
  'cancelled',
  'error',
  'model_behavior',
  'stuck',
  /** The model's reply hit its output-token cap (`finish_reason: length`) and the policy was to end. */
  'length',
  'refusal',
]);
export type TerminationReason = z.infer<typeof TerminationReason>;

export const UsageData = z.object({
  promptTokens: z.number(),
  completionTokens: z.number(),
  totalTokens: z.number(),
  estimated: z.literal(true).optional(),
});

export const ErrorData = z.object({
  name: z.string(),
  code: z.string(),
  message: z.string(),
  blame: z.string().optional(),
});
export type ErrorData = z.infer<typeof ErrorData>;

export const ToolOutcomeStatus = z.enum([
  'ok',
  'error',
  'timeout',
  'circuit_open',
  'cached',
  'fallback',
  'dead_letter',
  'escalate',
  'rejected',
]);
export type ToolOutcomeStatus = z.infer<typeof ToolOutcomeStatus>;

export const HookName = z.enum(['beforeModelCall', 'afterModelCall', 'beforeToolCall', 'afterToolCall', 'onTurnStart', 'onTurnEnd', 'onError']);
export type HookName = z.infer<typeof HookName>;

export const RecoveryKindSchema = z.enum(['retry', 'fallback', 'cached', 'askModel', 'escalate', 'deadLetter']);

/**
 * On a delta another process's worker streamed: it is in no journal, and its entry's `sequence` is the run's
 * last committed entry before the call. `part` counts the call's notices: a follower shows a call only from part 0 on,
 * or from a `catchUp`: the call's text before that part, sent again for followers that joined it late.
 */
export const LiveDelta = z.object({ call: z.string(), part: z.number().int().nonnegative(), catchUp: z.literal(true).optional() });
export type LiveDelta = z.infer<typeof LiveDelta>;

export const LoopEvent = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('run.started'),
    task: z.string(),
    model: z.string(),
    tools: z.array(z.string()),
    /** `call`: a single model call without tools (`agent.call`). */
    mode: z.literal('call').optional(),
  }),
  z.object({ type: z.literal('phase.entered'), phase: Phase }),
  /** A resumed run went live after re-taking `replayed` recorded steps; `tookOver` names the writer whose lease a forced takeover broke. */
  z.object({
    type: z.literal('run.resumed'),
    replayed: z.number().int().nonnegative(),
    tookOver: z.object({ pid: z.number(), host: z.string().optional() }).optional(),
  }),
  z.object({
    type: z.literal('reasoning.completed'),
    text: z.string().nullable(),
    /**
     * `arguments` capped by `capJournalDetail`; optional because older journals lack it. `extraContent` is the
     * provider's signature on the call (`ToolCall.extraContent`), kept whole: a page sends it back with the call.
     */
    toolCalls: z.array(z.object({ id: z.string(), name: z.string(), arguments: z.string().optional(), extraContent: z.string().optional() })),
    usage: UsageData,
    costUsd: z.number().optional(),
    reasoning: z.string().optional(),
    /** The model call the reply came from, when its deltas streamed live (`LiveDelta.call`): readers name both the same. */
    call: z.string().optional(),
  }),
  z.object({ type: z.literal('token.delta'), delta: z.string(), live: LiveDelta.optional() }),
  z.object({ type: z.literal('thinking.delta'), delta: z.string(), live: LiveDelta.optional() }),
  /** A reply hit the output-token cap; `action` is what `onLength` did (`continuation` counts from 1). */
  z.object({
    type: z.literal('reply.truncated'),
    action: z.enum(['continue', 'end']),
    continuation: z.number().int().nonnegative(),
    completionTokens: z.number(),
  }),
  z.object({
    type: z.literal('policy.evaluated'),
    toolCallId: z.string(),
    tool: z.string(),
    decision: z.enum(['allow', 'deny', 'modify', 'confirm', 'invalid', 'unknown_tool']),
    reason: z.string().optional(),
    /** Set on a deny because the gate failed (a `PolicyGateError`, code `policy_gate_failed`), not because it decided so. */
    gateFailure: z.object({ gate: z.string(), failure: z.enum(['threw', 'rejected', 'invalid_decision', 'timed_out']) }).optional(),
  }),
  z.object({
    type: z.literal('tools.dispatched'),
    calls: z.array(z.object({ id: z.string(), name: z.string() })),
  }),
  z.object({ type: z.literal('tool.started'), toolCallId: z.string(), tool: z.string(), attempt: z.number() }),
  z.object({
    type: z.literal('tool.finished'),
    toolCallId: z.string(),
    tool: z.string(),
    status: ToolOutcomeStatus,
    durationMs: z.number(),
  }),
  z.object({
    type: z.literal('recovery.triggered'),
    toolCallId: z.string(),
    tool: z.string(),
    strategy: RecoveryKindSchema,
    attempt: z.number().optional(),
    error: z.string(),
  }),
  z.object({
    type: z.literal('observations.collected'),
    count: z.number(),
    errors: z.number(),
    /** Each call's observation, capped, so the journal alone shows outcomes; optional because older journals lack it. */
    results: z.array(z.object({ toolCallId: z.string(), content: z.string() })).optional(),
  }),
  z.object({
    type: z.literal('human.awaiting'),
    /** `elicitation`: an MCP server asks the user a question during a tool call (see `question`). */
    kind: z.enum(['confirmation', 'escalation', 'elicitation']),
    toolCallIds: z.array(z.string()),
    /** What the human is asked about each call awaiting confirmation: the gate's, taint policy's or tool's reason. */
    reasons: z.array(z.object({ toolCallId: z.string(), reason: z.string() })).optional(),
    /** An elicitation's question: the server, its message and the JSON Schema the answer must match. */
    question: z.object({ server: z.string(), message: z.string(), schema: z.record(z.string(), z.unknown()) }).optional(),
  }),
  z.object({
    type: z.literal('human.decided'),
    decision: z.enum(['approve', 'reject']),
    toolCallIds: z.array(z.string()),
    reason: z.string().optional(),
    /** Set on the answer to an elicitation (not a decision on calls: a resume does not replay it). */
    kind: z.literal('elicitation').optional(),
    answer: z.record(z.string(), z.unknown()).optional(),
  }),
  z.object({
    type: z.literal('provider.retry'),
    attempt: z.number(),
    delayMs: z.number(),
    error: z.string(),
  }),
  z.object({
    type: z.literal('step.limit_reached'),
    step: z.string(),
    reason: z.string(),
    action: z.string(),
  }),
  z.object({
    type: z.literal('prehydration.completed'),
    found: z.number(),
    resolved: z.number(),
    failed: z.number(),
    tokens: z.number(),
  }),
  z.object({
    type: z.literal('context.compacted'),
    strategy: z.string(),
    tokensBefore: z.number(),
    tokensAfter: z.number(),
    messagesRemoved: z.number(),
  }),
  /** The model said the request overflowed its window: it was compacted to `targetTokens`, resent, and later requests stay under it. */
  z.object({
    type: z.literal('context.overflowed'),
    strategy: z.string(),
    tokensBefore: z.number(),
    tokensAfter: z.number(),
    targetTokens: z.number(),
    limitTokens: z.number().optional(),
    messagesRemoved: z.number(),
    reason: z.string(),
  }),
  z.object({ type: z.literal('knowledge.injected'), items: z.number(), tokens: z.number() }),
  /** An MCP server's sampling request, answered by the agent's model: its usage counts in the run's totals. */
  z.object({ type: z.literal('mcp.sampled'), server: z.string(), model: z.string(), usage: UsageData, costUsd: z.number() }),
  /** A lifecycle hook ran: how long it took and what it decided (`continue` when it only observed). */
  z.object({
    type: z.literal('hook.completed'),
    hook: HookName,
    decision: z.enum(['continue', 'modify', 'block', 'approve', 'deny', 'rewrite', 'failed']),
    durationMs: z.number(),
    toolCallId: z.string().optional(),
    reason: z.string().optional(),
  }),
  z.object({ type: z.literal('stuck.detected'), reason: z.string(), action: z.string() }),
  /** An MCP server's session was lost and a new one is up, re-initialized (`attempts` reconnects it took). */
  z.object({ type: z.literal('mcp.restarted'), server: z.string(), attempts: z.number().int().positive() }),
  z.object({
    type: z.literal('strategy.decided'),
    strategy: z.string(),
    decision: z.enum(['continue', 'branch', 'revise', 'done', 'error']),
    round: z.number(),
    detail: z.string().optional(),
  }),
  z.object({ type: z.literal('branch.started'), branchId: z.string(), parentId: z.string().optional() }),
  z.object({
    type: z.literal('branch.finished'),
    branchId: z.string(),
    ok: z.boolean(),
    score: z.number().optional(),
    durationMs: z.number(),
    /** The branch's sub-agent run, whose own entries are its part of the trace. */
    runId: z.string().optional(),
  }),
  z.object({
    type: z.literal('agent.message'),
    from: z.string(),
    to: z.string(),
    kind: z.enum(['tell', 'ask', 'reply', 'delegate', 'delegate.result']),
    correlationId: z.string().optional(),
    /** The receiver's run the message started (or, for a reply, the run that answered): a reader of the sender's journal follows it there. */
    runId: z.string().optional(),
  }),
  z.object({
    type: z.literal('run.terminated'),
    reason: TerminationReason,
    iterations: z.number(),
    usage: UsageData,
    error: ErrorData.optional(),
  }),
]);
export type LoopEvent = z.infer<typeof LoopEvent>;

/** Characters of a tool call's arguments or observation an event keeps: enough to show, small enough to journal every turn. */
export const JOURNAL_DETAIL_CHARS = 8_000;

/** Cuts argument or observation text to {@link JOURNAL_DETAIL_CHARS} characters, with a marker saying how much is left out. */
export function capJournalDetail(text: string): string {
  if (text.length <= JOURNAL_DETAIL_CHARS) return text;
  // A cut between a surrogate pair's halves would leave a lone half: the cut moves before the pair.
  const high = text.charCodeAt(JOURNAL_DETAIL_CHARS - 1);
  const shown = high >= 0xd800 && high <= 0xdbff ? JOURNAL_DETAIL_CHARS - 1 : JOURNAL_DETAIL_CHARS;
  return `${text.slice(0, shown)}… [${text.length - shown} more characters]`;
}
export type LoopEventType = LoopEvent['type'];
export type LoopEventOf<TType extends LoopEventType> = Extract<LoopEvent, { type: TType }>;

export const JournalEntry = z.object({
  sequence: z.number().int().nonnegative(),
  timestamp: z.number(),
  agentId: z.string(),
  runId: z.string(),
  iteration: z.number().int().nonnegative(),
  event: LoopEvent,
});
export type JournalEntry = z.infer<typeof JournalEntry>;
