import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { ContentPart, ImagePart, Message, ReasoningPart, ToolCall } from '../core/messages.ts';
import { ErrorData, JournalEntry, LoopEvent, TerminationReason, ToolOutcomeStatus, UsageData } from '../core/loopEvent.ts';
import { DoomLoopState } from '../progress/doomLoop.ts';
import { SavedBreaker } from '../resilience/circuitBreaker.ts';

/** Readers refuse any version but this one. */
export const LOG_VERSION = 6;
export const META_VERSION = 1;

/**
 * A record's kind from the head every writer gives its line. Not a search of the line: tool
 * arguments, a gate's plan and a checkpoint's snapshot may hold `"kind":"journal"` themselves.
 */
export function lineKind(line: string): string | undefined {
  return LINE_HEAD.exec(line)?.[1];
}

/** The head every record's line starts with; a record that names its run does so right after it. */
export const LINE_HEAD = /^\{"v":\d+,"kind":"([a-z.]+)",/;

export const ToolOutcomeRecord = z.object({
  toolCallId: z.string(),
  tool: z.string(),
  status: ToolOutcomeStatus,
  content: z.string(),
  isError: z.boolean(),
  parts: z.array(ImagePart).optional(),
});

const v = z.literal(LOG_VERSION);
/** Set where a segment file holds many runs' records. */
const runId = z.string().optional();

export const RunOwner = z.object({ pid: z.number().int().positive(), host: z.string().optional(), startedAt: z.number().optional() });
export type RunOwner = z.infer<typeof RunOwner>;

export const RunHeaderRecord = z.object({
  v,
  kind: z.literal('run'),
  runId: z.string(),
  agentId: z.string(),
  /** Cut to 1000 characters. */
  task: z.string(),
  createdAt: z.number(),
  owner: RunOwner,
  /** The log holds the journal, not what a resume rebuilds the run from. */
  journalOnly: z.literal(true).optional(),
});
export type RunHeaderRecord = z.infer<typeof RunHeaderRecord>;

export const FinalStatus = z.enum(['done', 'failed', 'cancelled']);
export type FinalStatus = z.infer<typeof FinalStatus>;

export const isFinalStatus = (status: string): status is FinalStatus => FinalStatus.safeParse(status).success;

export const finalStatusOf = (reason: TerminationReason): FinalStatus =>
  reason === 'final_answer' ? 'done' : reason === 'cancelled' ? 'cancelled' : 'failed';

/** The log's last record, unless it was `resumable` and was resumed: then the resumed run's records follow. */
export const RunEndRecord = z.object({
  v,
  kind: z.literal('end'),
  runId: z.string().optional(),
  status: FinalStatus,
  reason: TerminationReason,
  at: z.number(),
  resumable: z.literal(true).optional(),
  error: ErrorData.optional(),
  /** What the run did, when its writer saw all of it (a resumed one's did not): a listing needs no journal then. */
  iterations: z.number().int().nonnegative().optional(),
  costUsd: z.number().nonnegative().optional(),
});
export type RunEndRecord = z.infer<typeof RunEndRecord>;

/** Entry `i` has timestamp `at + elapsed[i]`: whole milliseconds, so the sum is exact. */
export const JournalRecord = z
  .object({
    v,
    kind: z.literal('journal'),
    runId: z.string(),
    agentId: z.string(),
    at: z.number().int(),
    sequence: z.array(JournalEntry.shape.sequence),
    elapsed: z.array(z.number().int()),
    iteration: z.array(JournalEntry.shape.iteration),
    events: z.array(LoopEvent),
  })
  .refine((r) => r.sequence.length === r.events.length && r.elapsed.length === r.events.length && r.iteration.length === r.events.length, {
    message: 'sequence, elapsed, iteration and events must have one item per entry',
  });
export type JournalRecord = z.infer<typeof JournalRecord>;

export const RunInput = z.object({
  /** The header keeps at most 1000 characters of it, for the run index. */
  task: z.string(),
  system: z.string().optional(),
  history: z.array(Message).optional(),
  limits: z.object({
    maxIterations: z.number(),
    maxTotalTokens: z.number(),
    timeoutMs: z.number(),
    maxRepairTurns: z.number(),
  }),
  model: z.string(),
  toolNames: z.array(z.string()),
  mode: z.literal('call').optional(),
  /** When the task has images or files; `task` is its text. */
  content: z.array(ContentPart).optional(),
});
export type RunInput = z.infer<typeof RunInput>;

const PlannedCallRecord = z.object({
  call: ToolCall,
  arguments: z.unknown().optional(),
  verdict: z.enum(['run', 'confirm', 'blocked']),
  note: z.string().optional(),
  blockedBy: z.enum(['invalid_arguments', 'unknown_tool', 'policy']).optional(),
});

export const HydrateReplyRecord = z.object({
  v,
  kind: z.literal('hydrate'),
  runId,
  output: z.object({ inject: z.array(Message), experiences: z.array(z.string()).optional() }),
});
export const ReasonReplyRecord = z.object({
  v,
  kind: z.literal('reason'),
  runId,
  iteration: z.number().int().nonnegative(),
  output: z.object({
    text: z.string().nullable(),
    toolCalls: z.array(ToolCall),
    usage: UsageData,
    costUsd: z.number(),
    reasoning: z.array(ReasoningPart).optional(),
    truncated: z.literal(true).optional(),
    contextLimit: z.number().int().positive().optional(),
    continuations: z.number().int().nonnegative().optional(),
    refusal: z.string().optional(),
    output: z.unknown().optional(),
    repair: z.array(Message).optional(),
  }),
});
export const GateReplyRecord = z.object({
  v,
  kind: z.literal('gate'),
  runId,
  iteration: z.number().int().nonnegative(),
  output: z.object({ plan: z.array(PlannedCallRecord) }),
});
export const HumanRecord = z.object({
  v,
  kind: z.literal('human'),
  runId,
  decision: z.enum(['approve', 'reject']),
  toolCallIds: z.array(z.string()),
  reason: z.string().optional(),
});
export type ReplayRecord = z.infer<typeof HydrateReplyRecord> | z.infer<typeof ReasonReplyRecord> | z.infer<typeof GateReplyRecord> | z.infer<typeof HumanRecord>;

/**
 * A resume reads only from the log's last checkpoint on, and its bases. Checkpoint `index` holds the
 * messages since its base, `index` with its lowest set bit cleared, so none rewrites the whole conversation.
 */
export const CheckpointRecord = z.object({
  v,
  kind: z.literal('checkpoint'),
  runId,
  index: z.number().int().positive(),
  iteration: z.number().int().nonnegative(),
  /** Every journal entry before it is in the log before this record. */
  sequence: z.number().int().nonnegative(),
  snapshot: z.record(z.string(), z.unknown()),
  /** The messages before `from` are in the base and its bases. */
  from: z.number().int().nonnegative(),
  messages: z.array(Message),
  base: z.object({ at: z.number().int().nonnegative(), bytes: z.number().int().positive() }).optional(),
  stuck: DoomLoopState.optional(),
  breakers: z.array(SavedBreaker).optional(),
});
export type CheckpointRecord = z.infer<typeof CheckpointRecord>;

/** A resume restores each breaker from its latest record before any tool runs. */
export const BreakerRecord = SavedBreaker.extend({ v, kind: z.literal('breaker'), runId });
export type BreakerRecord = z.infer<typeof BreakerRecord>;

export const LogRecord = z.discriminatedUnion('kind', [
  RunHeaderRecord,
  /** Another run's or agent's entry, or one whose timestamp is not whole milliseconds. */
  z.object({ v, kind: z.literal('event'), entry: JournalEntry }),
  JournalRecord,
  z.object({ v, kind: z.literal('start'), runId, input: RunInput }),
  HydrateReplyRecord,
  ReasonReplyRecord,
  GateReplyRecord,
  HumanRecord,
  /** Flushed before the call executes; `args` hashes its canonical arguments. */
  z.object({ v, kind: z.literal('call.started'), runId, key: z.string(), tool: z.string(), args: z.string() }),
  /** A resumed run reuses the outcome instead of calling again. */
  z.object({ v, kind: z.literal('call.finished'), runId, key: z.string(), outcome: ToolOutcomeRecord }),
  CheckpointRecord,
  BreakerRecord,
  RunEndRecord,
]);
export type LogRecord = z.infer<typeof LogRecord>;

export const RunStatus = z.enum(['running', 'awaiting_human', 'done', 'failed', 'cancelled']);
export type RunStatus = z.infer<typeof RunStatus>;

export const RunMeta = z.object({
  v: z.literal(META_VERSION),
  runId: z.string(),
  agentId: z.string(),
  task: z.string(),
  status: RunStatus,
  reason: TerminationReason.optional(),
  createdAt: z.number(),
  updatedAt: z.number(),
  resumable: z.boolean().optional(),
  error: ErrorData.optional(),
  /** Written by a journal-only store (mode 'journal'): never resumed, and no lease says whether its writer lives. */
  journalOnly: z.literal(true).optional(),
  /** An ended run's iterations and cost, when its end record has them. */
  iterations: z.number().int().nonnegative().optional(),
  costUsd: z.number().nonnegative().optional(),
});
export type RunMeta = z.infer<typeof RunMeta>;

export type IndexedRun = RunMeta | CorruptRun;
export interface CorruptRun {
  readonly runId: string;
  readonly status: 'corrupt';
  readonly file: string;
  readonly error: ErrorData;
  readonly agentId?: undefined;
  readonly task?: undefined;
  readonly reason?: undefined;
  readonly createdAt: number;
  readonly updatedAt: number;
}

/** Safe as a file name. */
export const RUN_ID_PATTERN = /^[A-Za-z0-9_-]{1,128}$/;

export const newRunId = (): string => `run_${randomUUID()}`;
