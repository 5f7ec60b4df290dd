// Routes: POST …/, GET …/runs/:runId/stream, POST …/runs/:runId/approve|reject|cancel, and
// GET …/:threadId/stream (useChat's `resumeStream`).
import { defer, map, mergeAll, throwError, type Observable } from 'rxjs';
import { z } from 'zod';
import type { Agent, AgentRun } from '../agent/types.ts';
import type { JournalEntry } from '../core/loopEvent.ts';
import { ActorloopError, describeError } from '../core/errors.ts';
import type { Message } from '../core/messages.ts';
import type { RunStore } from '../persistence/fileStore.ts';
import { createRedactor } from '../security/redactor.ts';
import type { SecretRuleOptions } from '../security/secrets.ts';
import { EndedRuns } from './endedRuns.ts';
import { WebRequestError } from './errors.ts';
import { listOf } from './listOf.ts';
import { decidable, isLive, type DecidableRun, type DecisionSources, type DurableRuns } from './decisions.ts';
import { detailsFromMessages, NO_DETAILS, questionKey, type RunDetails, type RunView } from '../events/agUiEncoder.ts';
import type { ResumeRequest, RunDecisions, SubRun, WebProtocol } from './protocol.ts';
import { agentRunFeed, notHandOff, runTree, treeNow, type RunAgents, type RunKey } from './runTree.ts';
import { writtenPlace } from '../events/memoryJournal.ts';
import { parseTreeEventId, treeSseBody, type TreeCursor } from './treeSse.ts';
import { atStop, ResponseStops } from './stops.ts';
import { runFeed, storeReader, type JournalReader } from './runFeed.ts';
import { parseEventId, SSE_HEADERS, sseBody, type EventCursor } from './sse.ts';
import { defined } from '../core/defined.ts';

/** Mounts as a Next.js route handler, in Hono, Bun or Deno. */
export type WebHandler = (request: Request) => Promise<Response>;

export interface WebHandlerOptions {
  /** Runs this process does not hold are streamed from it, so a page can reconnect to another server process. */
  readonly store?: RunStore;
  /** Takes precedence over `store`; e.g. a durable agent's `(runId, after) => runtime.journal(runId, { after })`. */
  readonly journal?: JournalReader;
  /** On top of the defaults; give the agent's `policy.redact` here too. */
  readonly redact?: SecretRuleOptions;
  readonly pollIntervalMs?: number;
  readonly onRun?: (run: AgentRun) => void;
  /** Ended runs kept for their tool details and decisions' answers, newest kept. */
  readonly retainRuns?: number;
  /** Decisions on its runs go to it, whichever process started them. */
  readonly runtime?: DurableRuns;
  /** How long a stored run resumed here to take a decision may take to reach its wait again. */
  readonly resumeTimeoutMs?: number;
  /** The system the agent delegates in: runs it delegates to are streamed with it. */
  readonly system?: RunAgents;
  /** The largest request body read, in bytes; a larger one is refused with 413. Default 4 MiB. */
  readonly maxBodyBytes?: number;
}

/** Room for a chat's history with a few images inlined, as the AI SDK sends it. */
export const MAX_BODY_BYTES = 4 * 1024 * 1024;

const Decision = z.strictObject({
  toolCallIds: listOf(z.string().min(1), 1).optional(),
  reason: z.string().max(10_000).optional(),
});

const ROUTE = /\/runs\/([^/]+)\/(stream|approve|reject|cancel)\/?$/;
const THREAD_STREAM = /\/([^/]+)\/stream\/?$/;
/** Run ids a page may choose: safe in file names and URLs. */
const RUN_ID = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$/;

interface HeldRun {
  readonly handle: AgentRun;
  readonly threadId: string;
}

/**
 * Refused requests get a 4xx JSON body `{ error: { code, message } }` whose message says what to send instead.
 * @example
 * ```ts
 * const handler = createRunHandler(agent, agUiProtocol, { store });
 * ```
 */
export function createRunHandler<TEvent>(agent: Agent, protocol: WebProtocol<TEvent>, options: WebHandlerOptions = {}): WebHandler {
  const redact = createRedactor(options.redact ?? {}).text;
  const pollIntervalMs = options.pollIntervalMs ?? 1000;
  const maxBodyBytes = options.maxBodyBytes ?? MAX_BODY_BYTES;
  const retain = options.retainRuns ?? 100;
  const runs = new Map<string, HeldRun>();
  const threads = new Map<string, string>();
  /** Where each served run's tree stood when a wait ended a response: the page's answer goes on from there. */
  const stops = new ResponseStops();
  // Built once: a Response copies a Headers object faster than it converts a record.
  const headers = new Headers({ ...SSE_HEADERS, ...protocol.headers });

  // Forgotten runs' journals still serve reconnects.
  const ended = new EndedRuns(retain);
  const hold = (held: HeldRun): void => {
    const { runId } = held.handle;
    runs.set(runId, held);
    threads.set(held.threadId, runId);
    ended.live(runId);
    void held.handle.settled.then(() => {
      if (runs.get(runId) !== held || !isEnded(held.handle)) return;
      for (const old of ended.ended(runId)) {
        const run = runs.get(old);
        runs.delete(old);
        stops.forget(old);
        if (run !== undefined && threads.get(run.threadId) === old) threads.delete(run.threadId);
      }
    });
  };

  const view = (runId: string, resumedAs?: string): RunView => {
    const held = runs.get(runId);
    return { runId, threadId: held?.threadId ?? runId, details: held === undefined ? NO_DETAILS : detailsOf(held.handle, redact), ...defined({ resumedAs }) };
  };

  const runtime = options.runtime;
  const read = options.journal ?? (runtime !== undefined ? (runId: string, after?: number) => runtime.journal(runId, defined({ after })) : options.store === undefined ? undefined : storeReader(options.store));
  // A durable agent's runs go on in whichever process's worker takes their next step.
  const everywhere = runtime !== undefined || options.journal !== undefined;
  const stream = async (runId: string, request: Request, from?: EventCursor, resumedAs?: string, tree?: TreeCursor): Promise<Response> => {
    if (options.system !== undefined && protocol.attribute !== undefined) return streamTree(options.system, runId, request, from, resumedAs, tree);
    const after = from ?? parseEventId(request.headers.get('last-event-id') ?? afterParam(request));
    const feed = await runFeed({ agent, pollIntervalMs, everywhere, prepare: (entry) => redactDetails(entry, redact), ...defined({ read }) }, runId, runs.has(runId));
    return new Response(sseBody(feed, () => protocol.encoder(view(runId, resumedAs)), protocol, after, request.signal), { headers });
  };

  const streamTree = async (system: RunAgents, runId: string, request: Request, from?: EventCursor, resumedAs?: string, given?: TreeCursor): Promise<Response> => {
    const asked = given ?? (from === undefined ? parseTreeEventId(request.headers.get('last-event-id') ?? afterParam(request)) : new Map([['', from]]));
    // A page that has the end of a response whose wait is still unanswered gets that end again, not a stream that waits.
    const { last } = stops.last(runId);
    const again = given === undefined && asked !== undefined && last !== undefined && last.wait.runId !== runId && !decided(system, last.wait) && atStop(asked, last) ? last : undefined;
    const tree = again?.at ?? given;
    const after = tree ?? asked;
    const root = await runFeed({ agent, pollIntervalMs, everywhere, ...defined({ read }) }, runId, runs.has(runId));
    // A tree run in this process has its sub-runs here too; one another process ran is read where its runs are kept.
    const local = agent.journal.firstSequence(runId) === 0;
    const subFeed = (sub: SubRun): Observable<JournalEntry> => {
      const subAgent = system.has(sub.agentId) ? system.get(sub.agentId).agent : undefined;
      if (subAgent !== undefined && (local || subAgent.journal.last(sub.runId) !== undefined)) return agentRunFeed(subAgent, sub.runId);
      // A sub-run of a run read from the store was handed off long ago: a store without it is an error, not a wait.
      if (read !== undefined) return defer(() => runFeed({ agent, pollIntervalMs, read, everywhere }, sub.runId, local, notHandOff)).pipe(mergeAll());
      return throwError(
        () => new WebRequestError(404, `Run ${sub.runId} of agent ${sub.agentId}, delegated to by run ${sub.parentRunId}, is in neither the system nor a store: give the handler the store or journal it is kept in.`),
      );
    };
    const feed = runTree(root, subFeed, writtenPlace).pipe(map((item) => ({ ...item, entry: redactDetails(item.entry, redact) })));
    const threadId = view(runId).threadId;
    const encoderOf = (sub: SubRun | undefined) => protocol.encoder(sub === undefined ? view(runId, resumedAs) : { runId: sub.runId, threadId, details: NO_DETAILS });
    const treeWaits = protocol.treeWaits?.bind(protocol);
    const stopsHere = {
      ...defined({ waits: treeWaits === undefined ? undefined : () => treeWaits(view(runId, resumedAs), tree !== undefined), again: again?.wait }),
      onEnd: (at: TreeCursor, wait: JournalEntry) => void (runs.has(runId) && stops.record(runId, { wait, at })),
    };
    return new Response(treeSseBody(feed, encoderOf, protocol, after, request.signal, undefined, stopsHere), { headers });
  };

  const start = async (request: Request): Promise<Response> => {
    const wanted = protocol.parseStart(await jsonBody(request, false, maxBodyBytes));
    if ('resume' in wanted) return resume(wanted.resume, request);
    if (wanted.runId !== undefined) {
      if (!RUN_ID.test(wanted.runId)) throw new WebRequestError(400, `runId "${wanted.runId.slice(0, 40)}" is not usable: use letters, digits and _.:- (at most 128), or leave it to the server.`);
      if (runs.has(wanted.runId) || agent.journal.has(wanted.runId)) {
        throw new WebRequestError(409, `Run ${wanted.runId} exists already: stream it with GET runs/${wanted.runId}/stream, or start a run with a new runId.`);
      }
    }
    // The stream follows the agent once it has read the run: followed from before the start, a durable run's first
    // call cannot begin while nobody here follows it (its worker would then publish none of it).
    const early = everywhere ? agent.events$.subscribe({ error: () => undefined }) : undefined;
    try {
      let handle: AgentRun;
      try {
        handle = agent.start(wanted.content ?? wanted.task, { history: wanted.history as Message[], ...defined({ runId: wanted.runId }) });
      } catch (error) {
        // An image or file the model cannot take, or history messages that do not fit, are a request to change; a task or run id the agent refuses is the page's to fix.
        if (error instanceof ActorloopError && (error.code === 'invalid_content_part' || error.code === 'invalid_conversation')) throw new WebRequestError(400, describeError(error), { cause: error });
        if (error instanceof ActorloopError && error.blame === 'user') throw new WebRequestError(409, describeError(error), { cause: error });
        throw error;
      }
      hold({ handle, threadId: wanted.threadId });
      options.onRun?.(handle);
      return await stream(handle.runId, request);
    } finally {
      early?.unsubscribe();
    }
  };

  /** From the start of the response the run is in: after the last wait the page answered. */
  const threadStream = async (threadId: string, request: Request): Promise<Response> => {
    const runId = threads.get(threadId);
    const held = runId === undefined ? undefined : runs.get(runId);
    if (runId === undefined || held === undefined || isEnded(held.handle)) return new Response(null, { status: 204 });
    // In a tree, the last response a wait ended (a sub-run's too) is where the one going on began, once that wait was
    // answered; while it is not, the response the page is in is the one that ended there, begun where the one before ended.
    const { last, before } = options.system === undefined || protocol.attribute === undefined ? {} : stops.last(runId);
    if (last !== undefined && options.system !== undefined) {
      if (decided(options.system, last.wait)) return stream(runId, request, undefined, undefined, last.at);
      return stream(runId, request, undefined, undefined, before?.at);
    }
    const waits = agent.journal.entries(runId).filter((entry) => entry.event.type === 'human.awaiting');
    const answered = waits.at(held.handle.phase() === 'awaitingHuman' ? -2 : -1);
    return stream(runId, request, answered === undefined ? undefined : { sequence: answered.sequence, index: Number.MAX_SAFE_INTEGER });
  };

  /** Whether `wait` was answered: a decision follows it in its run's journal. */
  const decided = (system: RunAgents, wait: JournalEntry): boolean => {
    const journal = system.has(wait.agentId) ? system.get(wait.agentId).agent.journal : agent.journal;
    return journal.entries(wait.runId).some((entry) => entry.sequence > wait.sequence && entry.event.type === 'human.decided');
  };

  const sources: DecisionSources = {
    agent,
    held: (runId) => runs.get(runId)?.handle,
    ...defined({ store: options.store, runtime, system: options.system }),
    resumeTimeoutMs: options.resumeTimeoutMs ?? 30_000,
  };

  /** A stored run resumed to decide it is held from now on. */
  const liveRun = async (runId: string, action: string): Promise<DecidableRun> => {
    const run = await decidable(sources, runId, action);
    if (run.resumed !== undefined) hold({ handle: run.resumed, threadId: runId });
    return run;
  };

  const waiting = async (runId: string, run: DecidableRun, action: string, toolCallIds: readonly string[]): Promise<readonly string[]> => {
    const pending = await run.waiting();
    if (pending === null) {
      throw new WebRequestError(409, `Run ${runId} is not waiting for a human (it is in ${run.state()}): ${action} a call once the stream shows its interrupt.`);
    }
    const stray = toolCallIds.filter((id) => !pending.includes(id));
    if (stray.length > 0) throw new WebRequestError(409, `Tool calls ${stray.join(', ')} of run ${runId} are not waiting; waiting: ${pending.join(', ')}.`);
    return pending;
  };

  const decide = async (runId: string, action: 'approve' | 'reject' | 'cancel', request: Request): Promise<Response> => {
    const body = Decision.safeParse(await jsonBody(request, true, maxBodyBytes));
    if (!body.success) throw new WebRequestError(400, `The ${action} body must be { toolCallIds?: string[], reason?: string }: ${oneLine(body.error)}.`);
    if (isSubRun(runId) && ![...runs.keys()].some((root) => memberOf(root, runId) !== undefined)) {
      throw new WebRequestError(404, `Run ${runId} is not one a run this handler serves delegated to: ${action} only runs whose streams this handler sent.`);
    }
    const run = await liveRun(runId, action);
    const { toolCallIds, reason } = body.data;
    if (action === 'cancel') {
      await run.cancel(reason ?? 'cancelled from the web page');
      return json(202, { runId, action });
    }
    const pending = await waiting(runId, run, action, toolCallIds ?? []);
    if (action === 'approve') await run.approve(toolCallIds);
    else await run.reject(reason, toolCallIds);
    return json(202, { runId, action, toolCallIds: toolCallIds ?? pending });
  };

  /** Each run of a served run's tree this process holds, as its journals are now. */
  const treeOf = (system: RunAgents, rootRunId: string) =>
    treeNow(agent.journal.entries(rootRunId), (sub) => (system.has(sub.agentId) ? system.get(sub.agentId).agent.journal.entries(sub.runId) : []));

  /** A run of another agent of the system, reached only through a served run whose tree holds it. */
  const isSubRun = (runId: string): boolean =>
    options.system !== undefined && !runs.has(runId) && !agent.journal.has(runId) && options.system.list().some((member) => member.agent.journal.has(runId));
  const memberOf = (root: string, runId: string) => (options.system === undefined ? undefined : [...treeOf(options.system, root).values()].find((run) => run.runId === runId));

  /** The served run a resume belongs to: the run it answers, or the one whose tree holds it (never another's). */
  const servedRunOf = ({ runId, servedRunId, threadId }: ResumeRequest['resume']): { readonly root: string; readonly entries?: readonly JournalEntry[] } => {
    if (servedRunId === undefined ? !isSubRun(runId) : servedRunId === runId) return { root: runId };
    const root = servedRunId ?? (threadId === undefined ? undefined : threads.get(threadId));
    const member = root === undefined ? undefined : memberOf(root, runId);
    if (options.system === undefined || root === undefined || member === undefined) {
      throw new WebRequestError(404, `Run ${runId} is not one the run this page streams${root === undefined ? '' : ` (${root})`} delegated to: answer only the approval requests and interrupts its stream sent.`);
    }
    return { root, entries: options.system.get(member.last.agentId).agent.journal.entries(runId) };
  };

  /** Where the page stood at the wait a response ended at (one of `waits`), else each run at its last entry so far. */
  const treeAt = (system: RunAgents, root: string, waits: readonly (JournalEntry | undefined)[]): TreeCursor | undefined => {
    const stop = stops.at(root, waits);
    if (stop !== undefined) return stop.at;
    const wait = waits[0];
    if (wait === undefined) return undefined;
    const at = new Map<RunKey, EventCursor>();
    for (const [key, { runId, last }] of treeOf(system, root)) at.set(key, { sequence: runId === wait.runId ? wait.sequence : last.sequence, index: Number.MAX_SAFE_INTEGER });
    // A served run of another process: its tree is not here, its own wait is.
    if (!at.has('') && wait.runId === root) at.set('', { sequence: wait.sequence, index: Number.MAX_SAFE_INTEGER });
    return at;
  };

  /** A run the page answers, with the wait it answers; calls a decision already reached are left out (and a run with no other, not reached). */
  const answering = async (answer: ResumeRequest['resume'], decisions: RunDecisions) => {
    const { runId } = decisions;
    const served = servedRunOf({ ...answer, runId });
    const named = [...decisions.approved, ...decisions.rejected.map((r) => r.toolCallId)];
    // The page's message keeps an answer it sent before until the call's output reaches it; its run may have ended since.
    const decidedIn = (entries: readonly JournalEntry[]) => new Set(entries.flatMap(({ event }) => (event.type === 'human.decided' ? event.toolCallIds : [])));
    const before = decidedIn(served.entries ?? agent.journal.entries(runId));
    if (answer.more !== undefined && named.every((id) => before.has(id))) return { root: served.root, decisions: { runId, approved: [], rejected: [] } };
    const run = await liveRun(runId, 'answer');
    // The stream goes on after the wait answered here (a run of another process: from where it is kept).
    const known = served.entries ?? agent.journal.entries(runId);
    const entries = known[0]?.sequence === 0 ? known : read === undefined ? [] : await read(runId);
    const lastWait = entries.findLast((entry) => entry.event.type === 'human.awaiting');
    if (asksQuestion(run, lastWait)) return { root: served.root, run, lastWait, decisions };
    const pending = (await run.waiting()) ?? [];
    const decided = decidedIn(entries);
    const fresh = (id: string) => pending.includes(id) || !decided.has(id);
    const left = { runId, approved: decisions.approved.filter(fresh), rejected: decisions.rejected.filter((r) => fresh(r.toolCallId)) };
    // Only calls that still wait; all of them decided already is the page sending its answer again.
    await waiting(runId, run, 'answer', left.approved.length + left.rejected.length > 0 ? [...left.approved, ...left.rejected.map((r) => r.toolCallId)] : named);
    return { root: served.root, run, lastWait, decisions: left };
  };

  const resume = async (answer: ResumeRequest['resume'], request: Request): Promise<Response> => {
    const { runId, answers = {}, resumedAs } = answer;
    const all = await Promise.all([answer, ...(answer.more ?? [])].map((decisions) => answering(answer, decisions)));
    const first = all.find((one) => one.run !== undefined);
    if (first?.run === undefined) throw new WebRequestError(409, `The calls the message answers were decided already and nothing it names waits: answer the approval requests of the last response.`);
    if (all.some((one) => one.root !== first.root)) throw new WebRequestError(400, `The request answers runs of more than one served run: answer those of the stream the page reads.`);
    const { run, lastWait } = first;
    const system = protocol.attribute === undefined ? undefined : options.system;
    // Taken before the decision: what the runs journal from here on is the page's to get.
    const tree = system === undefined ? undefined : treeAt(system, first.root, all.map((one) => ('lastWait' in one ? one.lastWait : undefined)));
    if (lastWait !== undefined && run.handle !== undefined && asksQuestion(run, lastWait)) {
      answerQuestion(run.handle, questionKey(lastWait.sequence), answer);
    } else {
      const stray = Object.keys(answers);
      if (stray.length > 0) throw new WebRequestError(400, `Calls ${stray.join(', ')} of run ${runId} wait for a decision, not an answer: resolve each with the payload { approved: boolean, reason?: string }.`);
      for (const { run: one, decisions } of all) {
        if (one === undefined) continue;
        // Each decision on part of the calls re-announces the wait for the rest; the last one settles it.
        for (const { toolCallId, reason } of decisions.rejected) await one.reject(reason, [toolCallId]);
        if (decisions.approved.length > 0) await one.approve(decisions.approved);
      }
    }
    if (tree !== undefined) return stream(first.root, request, undefined, resumedAs, tree);
    return stream(first.decisions.runId, request, lastWait === undefined ? undefined : { sequence: lastWait.sequence, index: Number.MAX_SAFE_INTEGER }, resumedAs);
  };

  return async (request) => {
    try {
      const { pathname } = new URL(request.url);
      const route = ROUTE.exec(pathname);
      if (route === null) {
        const thread = request.method === 'GET' ? THREAD_STREAM.exec(pathname) : null;
        if (thread !== null) return await threadStream(decodeRunId(thread[1] as string), request);
        if (request.method !== 'POST') throw new WebRequestError(405, `${request.method} is not served here: POST a run's input to start it, or GET runs/<runId>/stream.`);
        return await start(request);
      }
      const runId = decodeRunId(route[1] as string);
      const action = route[2] as 'stream' | 'approve' | 'reject' | 'cancel';
      const method = action === 'stream' ? 'GET' : 'POST';
      if (request.method !== method) throw new WebRequestError(405, `runs/<runId>/${action} takes ${method}, not ${request.method}.`);
      if (action === 'stream') return await stream(runId, request);
      return await decide(runId, action, request);
    } catch (error) {
      if (error instanceof WebRequestError) return json(error.status, { error: { code: error.code, message: error.message } });
      return json(500, { error: { code: error instanceof ActorloopError ? error.code : 'internal', message: describeError(error) } });
    }
  };
}

/** The `after` query parameter (a reconnect's cursor where the page cannot set Last-Event-ID); a URL without a query is not parsed again. */
export const afterParam = (request: Request): string | null => (request.url.includes('?') ? new URL(request.url).searchParams.get('after') : null);

/** A server's question waits outside the loop's own wait for calls. */
function asksQuestion(run: DecidableRun, wait: JournalEntry | undefined): boolean {
  const handle = run.handle;
  return wait?.event.type === 'human.awaiting' && wait.event.kind === 'elicitation' && handle !== undefined && handle.actor.getSnapshot().context.pending === null && handle.phase() === 'awaitingHuman';
}

function answerQuestion(handle: AgentRun, asking: string, { runId, approved, rejected, answers = {} }: ResumeRequest['resume']): void {
  const named = [...approved, ...rejected.map((r) => r.toolCallId)];
  if (named.length !== 1 || named[0] !== asking) throw new WebRequestError(409, `Run ${runId} waits for the answer to its question ${asking}; the request answers ${named.join(', ') || 'nothing'}.`);
  const refusal = rejected[0];
  if (refusal !== undefined) return handle.reject(refusal.reason);
  const call = approved[0] as string;
  try {
    handle.approve(undefined, call in answers ? { answer: answers[call] } : {});
  } catch (error) {
    // An answer that does not fit the form: the run keeps waiting for a better one.
    if (error instanceof ActorloopError && error.blame === 'user') throw new WebRequestError(400, describeError(error), { cause: error });
    throw error;
  }
}

export function decodeRunId(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new WebRequestError(400, `The run id in the path is not valid percent-encoding: encode it with encodeURIComponent.`);
  }
}

/** Tool arguments and results pass the handler's secret rules too. */
export function redactDetails(entry: JournalEntry, redact: (text: string) => string): JournalEntry {
  const { event } = entry;
  if (event.type === 'reasoning.completed' && event.toolCalls.some((call) => call.arguments !== undefined)) {
    const toolCalls = event.toolCalls.map((call) => (call.arguments === undefined ? call : { ...call, arguments: redact(call.arguments) }));
    return { ...entry, event: { ...event, toolCalls } };
  }
  if (event.type === 'observations.collected' && event.results !== undefined) {
    return { ...entry, event: { ...event, results: event.results.map((result) => ({ ...result, content: redact(result.content) })) } };
  }
  return entry;
}

const isEnded = (handle: AgentRun): boolean => !isLive(handle);

/** A durable run's handle stands for a run in the database: its actor has no conversation here. */
const detailsOf = (handle: AgentRun, redact: (text: string) => string): RunDetails =>
  detailsFromMessages(() => (handle.actor.getSnapshot().context as { messages?: readonly Message[] } | undefined)?.messages ?? [], redact);

export async function jsonBody(request: Request, emptyIsObject: boolean, maxBytes: number): Promise<unknown> {
  const text = await bodyText(request, maxBytes);
  if (text.trim() === '') {
    if (emptyIsObject) return {};
    throw new WebRequestError(400, 'The request has no body: send the run input as JSON.');
  }
  let body: unknown;
  try {
    body = JSON.parse(text) as unknown;
  } catch {
    throw new WebRequestError(400, 'The request body is not JSON: send a JSON object.');
  }
  if (nestedPast(body, MAX_BODY_DEPTH)) throw new WebRequestError(400, `The request body nests arrays and objects deeper than ${MAX_BODY_DEPTH} levels: send flatter JSON.`);
  return body;
}

/** Far deeper than a chat or run input nests; past it, copying the body (JSON.stringify, zod) would overflow the stack. */
const MAX_BODY_DEPTH = 256;

/** Walked with a list, not recursion: the walk itself must not overflow. */
function nestedPast(value: unknown, max: number): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const open: object[] = [value];
  const depths = [0];
  while (open.length > 0) {
    const node = open.pop() as object;
    const depth = depths.pop() as number;
    if (depth >= max) return true;
    for (const child of Object.values(node) as unknown[]) {
      if (typeof child !== 'object' || child === null) continue;
      open.push(child);
      depths.push(depth + 1);
    }
  }
  return false;
}

/** The body as text, read no further than `maxBytes` (a client may send more than it declares). */
async function bodyText(request: Request, maxBytes: number): Promise<string> {
  const tooLarge = () => new WebRequestError(413, `The request body is larger than ${maxBytes} bytes: send less, or raise maxBodyBytes.`);
  if (Number(request.headers.get('content-length') ?? 0) > maxBytes) throw tooLarge();
  if (request.body === null) return '';
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel().catch(() => undefined);
      throw tooLarge();
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

export function oneLine(error: z.ZodError): string {
  const issue = error.issues[0];
  if (issue === undefined) return 'invalid';
  const path = issue.path.length === 0 ? '' : `${issue.path.join('.')}: `;
  return `${path}${issue.message}`.replace(/\s+/g, ' ');
}

export function json(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
}
