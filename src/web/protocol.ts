/**
 * The seam between a run and a front end's wire protocol. The handler owns routing, the run
 * registry, decisions, reconnects and SSE ids; a protocol only reads its start request and turns
 * journal entries into its own events. AG-UI is one protocol; another plugs in the same way.
 */
import type { JournalEntry } from '../core/loopEvent.ts';
import type { Message } from '../core/messages.ts';
import type { RunView } from '../events/agUiEncoder.ts';

/** What a request to start a run asks for, read from a protocol's body. */
export interface StartRequest {
  /** The new user message: the run's task. */
  readonly task: string;
  /** The conversation before it. */
  readonly history: readonly Message[];
  /** The run id the page chose; the agent picks one when absent. */
  readonly runId?: string;
  /** The page's conversation id, echoed in the protocol's events. */
  readonly threadId: string;
}

export type { RunDetails, RunView } from '../events/agUiEncoder.ts';

/**
 * A request that answers a run's wait for a human instead of starting a run: protocols whose
 * page sends its approvals in its next request (the AI SDK's) read them into this. The handler
 * decides the waiting calls and streams the run on from the wait.
 */
export interface ResumeRequest {
  readonly resume: {
    readonly runId: string;
    readonly approved: readonly string[];
    readonly rejected: readonly { readonly toolCallId: string; readonly reason?: string }[];
    /**
     * Answers that are no decision: what a wait that asks a question (an MCP server's
     * elicitation) is answered with, under `questionKey(<its entry's sequence>)`. Refused for a
     * wait on held calls.
     */
    readonly answers?: Readonly<Record<string, unknown>>;
    /** The id the page gave the run that continues from the wait (an AG-UI resume's `runId`). */
    readonly resumedAs?: string;
  };
}

/**
 * Turns one run's entries, fed in order from its first, into a protocol's events. It may keep
 * state (an open message), but its output must depend only on the entries and details it is
 * given: a reconnect encodes the run again from its first entry and sends what the page missed.
 */
export interface StreamEncoder<TEvent> {
  /**
   * The events of one entry, in order; none for an entry the protocol does not show. An
   * `undefined` holds the place of an event this server cannot give (a detail it does not know),
   * so the events after it keep the ids another server gives them.
   */
  encode(entry: JournalEntry): (TEvent | undefined)[];
  /** The event that ends a stream whose source failed (a store that could not be read again). */
  failure(message: string, code: string): TEvent;
  /**
   * True for an entry that ends a response: the page answers it in a new request (a wait for a
   * human, in the AI SDK) and a stream resumed after it goes on. Absent: streams end with the run.
   */
  endsResponse?(entry: JournalEntry): boolean;
}

/** A run another run of the stream handed work to (a delegation), served in the same stream. */
export interface SubRun {
  readonly runId: string;
  /** The agent that ran it. */
  readonly agentId: string;
  /** The run that handed it the work. */
  readonly parentRunId: string;
  /** Set when that run is itself a sub-run (not the run the stream serves). */
  readonly parentSubRunId?: string;
}

/** One wire protocol: how a start request is read and how a run is encoded and framed. */
export interface WebProtocol<TEvent> {
  /** Reads a start (or resume) request's JSON body; throws WebRequestError (400) for one it cannot use. */
  parseStart(body: unknown): StartRequest | ResumeRequest;
  encoder(view: RunView): StreamEncoder<TEvent>;
  /** One event as the `data:` lines of a server-sent event, ending with its blank line. */
  frame(event: TEvent): string;
  /**
   * One of a sub-run's events (encoded by its own encoder) as the stream shows it, attributed to
   * the sub-run's agent; `undefined` leaves it out. Absent: the protocol streams no sub-runs.
   */
  attribute?(event: TEvent, run: SubRun): TEvent | undefined;
  /**
   * `next` joined into `previous` when the page reads the two as one (two text deltas of one
   * message); `undefined` when they stay two. Events that waited for a slow reader are joined.
   */
  merge?(previous: TEvent, next: TEvent): TEvent | undefined;
  /** Response headers the protocol's clients look for, beside the SSE ones. */
  readonly headers?: Readonly<Record<string, string>>;
}
