// The handler owns routing, the run registry, decisions, reconnects and SSE ids; a protocol only reads
// its start request and turns journal entries into its own events.
import type { JournalEntry } from '../core/loopEvent.ts';
import type { ContentPart, Message } from '../core/messages.ts';
import type { RunView } from '../events/agUiEncoder.ts';
import type { LiveMark } from '../events/sentText.ts';

export interface StartRequest {
  /** The task's text; with `content`, the text of its text parts. */
  readonly task: string;
  /** The task's parts in their order when it has images or files. */
  readonly content?: readonly ContentPart[];
  readonly history: readonly Message[];
  /** The run id the page chose; the agent picks one when absent. */
  readonly runId?: string;
  /** The page's conversation id, echoed in the protocol's events. */
  readonly threadId: string;
}

export type { RunDetails, RunView } from '../events/agUiEncoder.ts';

/** A page's decisions on one run's waiting calls. */
export interface RunDecisions {
  readonly runId: string;
  readonly approved: readonly string[];
  readonly rejected: readonly { readonly toolCallId: string; readonly reason?: string }[];
}

/** For protocols whose page sends its approvals in its next request (the AI SDK's). */
export interface ResumeRequest {
  readonly resume: RunDecisions & {
    /** Decisions on other runs of the same tree in the same request: two sub-agents may wait at once. */
    readonly more?: readonly RunDecisions[];
    /** Answers to a wait that asks a question (an MCP elicitation), under `questionKey(<its entry's sequence>)`. */
    readonly answers?: Readonly<Record<string, unknown>>;
    /** The id the page gave the run that continues from the wait (an AG-UI resume's `runId`). */
    readonly resumedAs?: string;
    /** The run the page streams, when `runId` may be one of its sub-runs (an AI SDK message's id). */
    readonly servedRunId?: string;
    /** The page's conversation, which names the run it streams when the request does not (AG-UI). */
    readonly threadId?: string;
  };
}

/** Output must depend only on the entries and details given: a reconnect encodes the run again from its first entry. */
export interface StreamEncoder<TEvent> {
  /** An `undefined` holds the place of an event this server cannot give, so later events keep the ids another server gives them. */
  encode(entry: JournalEntry): (TEvent | undefined)[];
  /** Ends a stream whose source failed (a store that could not be read again). */
  failure(message: string, code: string): TEvent;
  /**
   * For an entry whose one event would be a text delta continuing the delta that ended this encoder's last
   * events (a streamed token), that text, the encoder moved on as by `encode`; otherwise `undefined`, nothing
   * changed. Never for an entry that ends the response. A stream adds the text to the delta waiting for its
   * reader without building an event for it.
   */
  continueText?(entry: JournalEntry): string | undefined;
  /** How much of a message a worker streams live (a `LiveDelta`'s, in no journal) the events so far gave; `undefined` when none is open. */
  mark?(): LiveMark | undefined;
  /**
   * `mark()` as it stood after the `index`-th event of the last `encode` of a live delta, when that gave several (a start,
   * then the text): a page that dropped between them resumes after the one it has. `undefined` when none was open.
   */
  markAt?(index: number): LiveMark | undefined;
  /**
   * The page reconnecting had `mark` of the live message it had open: the next message opened (by a live delta or by
   * the journal's reply) goes on from there, without a start and without the text the page has.
   */
  resume?(mark: LiveMark): void;
  /**
   * The starts `resume` left out of the last `encode` (the page had them) of the parts it goes on with, once: a tree
   * stream's waits know those parts open. Empty when it left none out.
   */
  resumedStarts?(): TEvent[];
  /** True for an entry the page answers in a new request (an AI SDK wait). Absent: streams end with the run. */
  endsResponse?(entry: JournalEntry): boolean;
}

/** A run another run of the stream handed work to (a delegation), served in the same stream. */
export interface SubRun {
  readonly runId: string;
  readonly agentId: string;
  readonly parentRunId: string;
  /** Set when the parent is itself a sub-run. */
  readonly parentSubRunId?: string;
}

export interface DeltaJoin<TEvent> {
  /** Whether `next` continues `first`'s delta. */
  joins(first: TEvent, next: TEvent): boolean;
  /** The text a delta adds (of an event `joins` took as `first` or `next`). */
  text(event: TEvent): string;
  /** `first` as the one event of the deltas joined, `text` being all their texts in order. */
  join(first: TEvent, text: string): TEvent;
}

export interface WebProtocol<TEvent> {
  /** Throws WebRequestError (400) for a body it cannot use. */
  parseStart(body: unknown): StartRequest | ResumeRequest;
  encoder(view: RunView): StreamEncoder<TEvent>;
  /** The `data:` lines of a server-sent event, ending with its blank line. */
  frame(event: TEvent): string;
  /** `undefined` leaves the event out. Absent: the protocol streams no sub-runs. */
  attribute?(event: TEvent, run: SubRun): TEvent | undefined;
  /** `fromStop`: the stream goes on from where a wait ended a response. Absent: a sub-run's wait leaves the response open. */
  treeWaits?(view: RunView, fromStop: boolean): TreeWaits<TEvent>;
  /** Events the page reads as one (a message's text deltas); only events that waited for a slow reader are joined. */
  readonly deltas?: DeltaJoin<TEvent>;
  readonly headers?: Readonly<Record<string, string>>;
}

/** A sub-run's wait ends the response as the served run's own does, so the page answers it in its next request. */
export interface TreeWaits<TEvent> {
  /**
   * Sees every event in order, sent or not (`sent` false: the page has it already), and gives what stands in its
   * place: what the page needs opened again first (after a wait ended the served run's part), then it. What the page
   * had before the stop a reading goes on from opens nothing; any other reading gives the same events, sent or not.
   */
  pass(event: TEvent, sent: boolean): TEvent[];
  /** A part the page had open and saw ended at a wait, its opener (a resumed live message's start) in no event seen: opened again before its run's next event. */
  closed?(opener: TEvent): void;
  /** The run an event `pass` opens again belongs to: a sub-run's id, '' for the served run's (and its AG-UI run). Absent: the run whose event it goes before. */
  owner?(event: TEvent): string;
  /** What ends the served run's part after `sub`'s own events for its wait (`own`, not yet attributed); `undefined` leaves the response open. */
  suspend(own: readonly (TEvent | undefined)[], sub: SubRun): TEvent[] | undefined;
}
