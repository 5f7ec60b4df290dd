// Routes: POST …/ starts, GET …/runs/:runId/stream reconnects, POST …/runs/:runId/cancel stops.
// Strategy runs live in this process only: a reconnect must reach the process that started it.
import { defer, filter, map, type Observable } from 'rxjs';
import { z } from 'zod';
import { ActorloopError, ConfigurationError, describeError } from '../core/errors.ts';
import { ZERO_USAGE } from '../core/provider.ts';
import type { JournalEntry } from '../core/loopEvent.ts';
import type { Message } from '../core/messages.ts';
import { NO_DETAILS } from '../events/agUiEncoder.ts';
import { createRedactor } from '../security/redactor.ts';
import type { SecretRuleOptions } from '../security/secrets.ts';
import type { StrategyRun } from '../strategies/runStrategy.ts';
import { EndedRuns } from './endedRuns.ts';
import { WebRequestError } from './errors.ts';
import { afterParam, decodeRunId, json, jsonBody, MAX_BODY_BYTES, oneLine, redactDetails, type WebHandler } from './handler.ts';
import type { StreamEncoder, SubRun, WebProtocol } from './protocol.ts';
import { notHandOff, type RunKey, type TreeEntry } from './runTree.ts';
import { SSE_HEADERS } from './sse.ts';
import { parseTreeEventId, treeSseBody } from './treeSse.ts';
import { defined } from '../core/defined.ts';

export interface StrategyStart {
  readonly task: string;
  readonly history: readonly Message[];
  /** Pass it as `startStrategy({ runId })`: the page names the run by it (AG-UI always sends one). */
  readonly runId?: string;
}

export interface StrategyHandlerOptions {
  readonly onRun?: (run: StrategyRun) => void;
  /** Ended runs kept for reconnects, newest kept. */
  readonly retainRuns?: number;
  /** Secret rules for tool arguments and results sent to the page, on top of the defaults. */
  readonly redact?: SecretRuleOptions;
  /** The largest request body read, in bytes; a larger one is refused with 413. Default 4 MiB. */
  readonly maxBodyBytes?: number;
}

const Cancel = z.strictObject({ reason: z.string().max(10_000).optional() });
const ROUTE = /\/runs\/([^/]+)\/(stream|cancel|approve|reject)\/?$/;

interface HeldStrategy {
  readonly run: StrategyRun;
  readonly threadId: string;
  ended: boolean;
}

/** Branches are keyed by the order their first entry appears; the run replays in order, so every reading agrees. */
export function strategyTree(run: StrategyRun): Observable<TreeEntry> {
  return defer(() => {
    const keys = new Map<string, RunKey>();
    return run.events$.pipe(
      filter(notHandOff),
      map((entry): TreeEntry => {
        if (entry.runId === run.runId) return { key: '', entry };
        let key = keys.get(entry.runId);
        if (key === undefined) {
          key = String(keys.size + 1);
          keys.set(entry.runId, key);
        }
        return { key, entry, sub: { runId: entry.runId, agentId: entry.agentId, parentRunId: run.runId } };
      }),
    );
  });
}

/** The runner journals no reply of its own, so its answer is encoded as one just before the end. */
function answering<TEvent>(encoder: StreamEncoder<TEvent>, answer: () => string | null): StreamEncoder<TEvent> {
  return {
    encode(entry) {
      const { event } = entry;
      const text = event.type === 'run.terminated' && event.reason === 'final_answer' ? answer() : null;
      if (text === null) return encoder.encode(entry);
      const reply: JournalEntry = { ...entry, event: { type: 'reasoning.completed', text, toolCalls: [], usage: ZERO_USAGE } };
      return [...encoder.encode(reply), ...encoder.encode(entry)];
    },
    failure: (message, code) => encoder.failure(message, code),
    ...(encoder.endsResponse === undefined ? {} : { endsResponse: (entry: JournalEntry) => encoder.endsResponse?.(entry) === true }),
  };
}

/**
 * @example
 * ```ts
 * createStrategyHandler(({ task, runId }) => startStrategy({ strategy: strategies.vote(), task, subAgent: { model }, runId }), agUiProtocol);
 * ```
 */
export function createStrategyHandler<TEvent>(start: (input: StrategyStart) => StrategyRun, protocol: WebProtocol<TEvent>, options: StrategyHandlerOptions = {}): WebHandler {
  if (protocol.attribute === undefined) {
    throw new ConfigurationError('createStrategyHandler needs a protocol that attributes sub-runs (agUiProtocol or aiSdkProtocol): each branch is streamed as one.');
  }
  const redact = createRedactor(options.redact ?? {}).text;
  const retain = options.retainRuns ?? 100;
  const maxBodyBytes = options.maxBodyBytes ?? MAX_BODY_BYTES;
  const runs = new Map<string, HeldStrategy>();

  const ended = new EndedRuns(retain);
  const hold = (held: HeldStrategy): void => {
    runs.set(held.run.runId, held);
    void held.run.settled.then(() => {
      held.ended = true;
      for (const old of ended.ended(held.run.runId)) runs.delete(old);
    });
  };

  const heldRun = (runId: string, what: string): HeldStrategy => {
    const held = runs.get(runId);
    if (held === undefined) throw new WebRequestError(404, `No strategy run ${runId} is held here (it never started here or ended long ago): ${what} a run this server started.`);
    return held;
  };

  const stream = (held: HeldStrategy, request: Request): Response => {
    const { run, threadId } = held;
    const after = parseTreeEventId(request.headers.get('last-event-id') ?? afterParam(request));
    const tree = strategyTree(run).pipe(map((item) => ({ ...item, entry: redactDetails(item.entry, redact) })));
    const answer = (): string | null => run.actor.getSnapshot().context.answer;
    const encoderOf = (sub: SubRun | undefined): StreamEncoder<TEvent> =>
      sub === undefined ? answering(protocol.encoder({ runId: run.runId, threadId, details: NO_DETAILS }), answer) : protocol.encoder({ runId: sub.runId, threadId, details: NO_DETAILS });
    return new Response(treeSseBody(tree, encoderOf, protocol, after, request.signal), { headers: { ...SSE_HEADERS, ...protocol.headers } });
  };

  const begin = async (request: Request): Promise<Response> => {
    const wanted = protocol.parseStart(await jsonBody(request, false, maxBodyBytes));
    if ('resume' in wanted) throw new WebRequestError(400, 'A strategy run never waits for a human: start a new run with a user message instead of resuming one.');
    if (wanted.content !== undefined) throw new WebRequestError(400, "A strategy's task is text: send the last message without images or files (earlier messages may have them).");
    if (wanted.runId !== undefined && runs.has(wanted.runId)) {
      throw new WebRequestError(409, `Run ${wanted.runId} exists already: stream it with GET runs/${wanted.runId}/stream, or start a run with a new runId.`);
    }
    let run: StrategyRun;
    try {
      run = start({ task: wanted.task, history: wanted.history, ...defined({ runId: wanted.runId }) });
    } catch (error) {
      // A task the strategy refuses (empty, say) is the page's to fix.
      if (error instanceof ActorloopError && error.blame === 'user') throw new WebRequestError(409, describeError(error), { cause: error });
      throw error;
    }
    const held: HeldStrategy = { run, threadId: wanted.threadId, ended: false };
    hold(held);
    options.onRun?.(run);
    return stream(held, request);
  };

  const cancel = async (held: HeldStrategy, request: Request): Promise<Response> => {
    const body = Cancel.safeParse(await jsonBody(request, true, maxBodyBytes));
    if (!body.success) throw new WebRequestError(400, `The cancel body must be { reason?: string }: ${oneLine(body.error)}.`);
    if (held.ended) throw new WebRequestError(409, `Strategy run ${held.run.runId} has ended: there is nothing to cancel.`);
    held.run.cancel(body.data.reason ?? 'cancelled from the web page');
    return json(202, { runId: held.run.runId, action: 'cancel' });
  };

  return async (request) => {
    try {
      const route = ROUTE.exec(new URL(request.url).pathname);
      if (route === null) {
        if (request.method !== 'POST') throw new WebRequestError(405, `${request.method} is not served here: POST a strategy's task to start it, or GET runs/<runId>/stream.`);
        return await begin(request);
      }
      const runId = decodeRunId(route[1] as string);
      const action = route[2] as 'stream' | 'cancel' | 'approve' | 'reject';
      if (action === 'approve' || action === 'reject') throw new WebRequestError(404, `A strategy run takes no ${action}: its branches never wait for a human. Cancel it with POST runs/${runId}/cancel.`);
      const method = action === 'stream' ? 'GET' : 'POST';
      if (request.method !== method) throw new WebRequestError(405, `runs/<runId>/${action} takes ${method}, not ${request.method}.`);
      const held = heldRun(runId, action === 'stream' ? 'stream' : 'cancel');
      if (action === 'stream') return stream(held, request);
      return await cancel(held, request);
    } catch (error) {
      if (error instanceof WebRequestError) return json(error.status, { error: { code: error.code, message: error.message } });
      return json(500, { error: { code: error instanceof ActorloopError ? error.code : 'internal', message: describeError(error) } });
    }
  };
}
