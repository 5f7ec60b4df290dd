/**
 * The records of a run's append-only log, and the run's metadata document. Every record carries
 * a schema version `v`; readers refuse any version but {@link LOG_VERSION}.
 */
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { ContentPart, ImagePart, Message, ReasoningPart, ToolCall } from '../core/messages.ts';
import { ErrorData, JournalEntry, LoopEvent, TerminationReason, ToolOutcomeStatus, UsageData } from '../core/loopEvent.ts';
import { DoomLoopState } from '../progress/doomLoop.ts';
import { SavedBreaker } from '../resilience/circuitBreaker.ts';

/**
 * A run's log is one JSON record a line: its header and input, its journal, the phase replies,
 * human decisions and tool calls a resume rebuilds it from, and its end. Every record carries
 * this version, the only one this actorloop reads.
 */
export const LOG_VERSION = 6;
export const META_VERSION = 1;

export const ToolOutcomeRecord = z.object({
  toolCallId: z.string(),
  tool: z.string(),
  status: ToolOutcomeStatus,
  content: z.string(),
  isError: z.boolean(),
  parts: z.array(ImagePart).optional(),
});

const v = z.literal(LOG_VERSION);
/** The run a record belongs to, on records that do not name it otherwise: set where a segment file holds many runs' records. */
const runId = z.string().optional();

/** The process that writes a run: while its lease lives, nobody else may. */
export const RunOwner = z.object({ pid: z.number().int().positive(), host: z.string().optional(), startedAt: z.number().optional() });
export type RunOwner = z.infer<typeof RunOwner>;

/** The first record of a run's log: the run's metadata, until an `end` record or meta.json says more. */
export const RunHeaderRecord = z.object({
  v,
  kind: z.literal('run'),
  runId: z.string(),
  agentId: z.string(),
  /** The task, cut to 1000 characters. */
  task: z.string(),
  createdAt: z.number(),
  owner: RunOwner,
  /** Written by a journal-only store: the log holds the journal, not what a resume rebuilds the run from. */
  journalOnly: z.literal(true).optional(),
});
export type RunHeaderRecord = z.infer<typeof RunHeaderRecord>;

export const FinalStatus = z.enum(['done', 'failed', 'cancelled']);
export type FinalStatus = z.infer<typeof FinalStatus>;

/** True for the statuses of a run that has ended. */
export const isFinalStatus = (status: string): status is FinalStatus => FinalStatus.safeParse(status).success;

/** The status a run that ended for `reason` has. */
export const finalStatusOf = (reason: TerminationReason): FinalStatus =>
  reason === 'final_answer' ? 'done' : reason === 'cancelled' ? 'cancelled' : 'failed';

/**
 * A run ended, and why: its log's last record, unless it was `resumable` (it failed for a reason
 * outside its own logic, such as a provider outage or its wall-clock limit) and was resumed, in
 * which case the resumed run's records follow.
 */
export const RunEndRecord = z.object({
  v,
  kind: z.literal('end'),
  /** The run that ended (a segment holds the ends of many runs). */
  runId: z.string().optional(),
  status: FinalStatus,
  reason: TerminationReason,
  at: z.number(),
  /** The run can be resumed: `resume(runId)` continues it once the cause is gone. */
  resumable: z.literal(true).optional(),
  error: ErrorData.optional(),
});
export type RunEndRecord = z.infer<typeof RunEndRecord>;

/**
 * Consecutive journal entries of one run, column by column: entry `i` is `{ sequence:
 * sequence[i], timestamp: at + elapsed[i], iteration: iteration[i], event: events[i] }` (whole
 * milliseconds, so the sum is exact).
 */
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

/** The input a run's machine starts from (its ids are the header's). */
export const RunInput = z.object({
  /** The whole task (the header keeps at most 1000 characters of it, for the run index). */
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
  /** `call`: one model call without tools. */
  mode: z.literal('call').optional(),
  /** The task as parts (text, images, files by reference), when it has images or files; `task` is its text. */
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

/** The phase replies a resumed run replays instead of doing their work again, in the order the machine took them. */
export const HydrateReplyRecord = z.object({
  v,
  kind: z.literal('hydrate'),
  runId,
  /** `experiences`: the ids of the experiences the run was shown (absent when none). */
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
/** A human's decision the machine applied (ids explicit: the calls pending then). */
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
 * Where a resume starts instead of at the log's beginning: the agent machine's persisted
 * snapshot as the run entered an iteration's `reason` phase, with what the run keeps beside the
 * machine. Everything a resume needs from the records before it is in it and its bases, so a
 * resume reads only from the log's last checkpoint on, and its bases.
 *
 * The conversation is split among checkpoints, none writing all of it each time: checkpoint
 * `index` holds the messages since its base, the checkpoint numbered `index` with its lowest set
 * bit cleared (none for a power of two, which holds them all). A resume reads at most
 * log2(index) + 1 checkpoints, and a message is written about log2(checkpoints) / 2 times.
 */
export const CheckpointRecord = z.object({
  v,
  kind: z.literal('checkpoint'),
  runId,
  /** 1 for a run's first checkpoint, then 2, 3, … */
  index: z.number().int().positive(),
  /** Completed reason phases: the iteration the run goes on from. */
  iteration: z.number().int().nonnegative(),
  /** The run's next journal sequence: every entry before it is in the log before this record. */
  sequence: z.number().int().nonnegative(),
  /** The snapshot, its conversation left out. */
  snapshot: z.record(z.string(), z.unknown()),
  /** The conversation from message `from` on; the messages before are in the base and its bases. */
  from: z.number().int().nonnegative(),
  messages: z.array(Message),
  /** Where the base's line is (a file's byte offset and length); none when `from` is 0. */
  base: z.object({ at: z.number().int().nonnegative(), bytes: z.number().int().positive() }).optional(),
  /** The run's doom-loop detector, when it has one. */
  stuck: DoomLoopState.optional(),
  /** The latest state of each breaker the run changed (the `breaker` records before it say no more). */
  breakers: z.array(SavedBreaker).optional(),
});
export type CheckpointRecord = z.infer<typeof CheckpointRecord>;

/**
 * A tool's circuit breaker changed state because of one of the run's calls: a resume restores the
 * breaker from the run's latest record of it before any tool runs.
 */
export const BreakerRecord = SavedBreaker.extend({ v, kind: z.literal('breaker'), runId });
export type BreakerRecord = z.infer<typeof BreakerRecord>;

export const LogRecord = z.discriminatedUnion('kind', [
  RunHeaderRecord,
  /** A journal entry that cannot join a `journal` record: another run's or agent's, or one whose timestamp is not whole milliseconds. */
  z.object({ v, kind: z.literal('event'), entry: JournalEntry }),
  JournalRecord,
  z.object({ v, kind: z.literal('start'), runId, input: RunInput }),
  HydrateReplyRecord,
  ReasonReplyRecord,
  GateReplyRecord,
  HumanRecord,
  /** Written (and flushed) before a tool call executes: `key` says which call, `args` hashes its canonical arguments. */
  z.object({ v, kind: z.literal('call.started'), runId, key: z.string(), tool: z.string(), args: z.string() }),
  /** Written (and flushed) as soon as a tool call ends: a resumed run reuses the outcome instead of calling again. */
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
  /** The task, cut to 1000 characters. */
  task: z.string(),
  status: RunStatus,
  reason: TerminationReason.optional(),
  createdAt: z.number(),
  updatedAt: z.number(),
  /** A failed run that `resume(runId)` can continue (see `RunEndRecord`). */
  resumable: z.boolean().optional(),
  error: ErrorData.optional(),
});
export type RunMeta = z.infer<typeof RunMeta>;

/** What the run index lists: a run's metadata, or a run whose files are corrupt (listed, not hidden). */
export type IndexedRun = RunMeta | CorruptRun;
export interface CorruptRun {
  readonly runId: string;
  readonly status: 'corrupt';
  /** The file that could not be read, and why. */
  readonly file: string;
  readonly error: ErrorData;
  readonly agentId?: undefined;
  readonly task?: undefined;
  readonly reason?: undefined;
  readonly createdAt: number;
  readonly updatedAt: number;
}

/** Safe as a folder name and unambiguous: letters, digits, `_` and `-`. */
export const RUN_ID_PATTERN = /^[A-Za-z0-9_-]{1,128}$/;

/** A new run id, random and so new to every store. */
export const newRunId = (): string => `run_${randomUUID()}`;
