import { setImmediate as onNextTurn } from 'node:timers';
import type { ReasonInput, ReasonOutput } from '../core/run.ts';
import type { Message, ReasoningPart, ToolCall } from '../core/messages.ts';
import type { LoopEvent } from '../core/loopEvent.ts';
import type { MessagePreparer, PreparerContext } from '../core/hooks.ts';
import { HookError } from './errors.ts';
import { checkAnswer, rejectedReply, type AnswerSpec } from './structuredAnswer.ts';
import type { HookRunner } from './hooks.ts';
import type { Completion, CompletionRequest, InferenceProvider, ReasoningEffort, ToolSpec } from '../core/provider.ts';
import { addUsage } from '../core/provider.ts';
import type { LengthPolicy } from './config.ts';
import type { ModelRequest } from '../core/hooks.ts';
import type { OverflowCompaction } from '../context/overflow.ts';
import { ContextLengthError, InferenceError, StructuredOutputError } from '../inference/errors.ts';
import { ReplyRedactor, type StreamRedactor } from '../security/streamRedactor.ts';

export interface ReasonPhaseDeps {
  readonly provider: InferenceProvider;
  readonly tools: readonly ToolSpec[];
  readonly model?: string;
  readonly stream: boolean;
  /** Redacts one streamed text across its deltas. */
  readonly redactStream: () => StreamRedactor;
  readonly temperature?: number;
  readonly maxTokens?: number;
  readonly reasoningEffort?: ReasoningEffort;
  /** What a reply cut off at the token cap leads to (see `ModelConfig.onLength`); default `'end'`. */
  readonly onLength?: LengthPolicy;
  readonly preparers?: readonly MessagePreparer[];
  readonly beforeModelCall?: HookRunner['beforeModelCall'];
  readonly answer?: AnswerSpec;
  /** Puts back the bytes of images and files held by reference, for the request only. */
  readonly loadParts?: (messages: readonly Message[]) => readonly Message[];
  /** Compacts a request over the context window and sends it once more; absent: the error ends the run. */
  readonly overflow?: OverflowCompaction;
}

export interface ReasonPhaseScope {
  readonly agentId: string;
  emit(event: LoopEvent): void;
}

export async function reason(
  input: ReasonInput,
  deps: ReasonPhaseDeps,
  scope: ReasonPhaseScope,
  signal: AbortSignal,
): Promise<ReasonOutput> {
  if (busyTooLong()) await nextTurn();
  if (signal.aborted) throw signal.reason;
  let messages = input.messages;
  let context: PreparerContext | undefined;
  if (deps.preparers !== undefined && deps.preparers.length > 0) {
    context = { runId: input.runId, agentId: scope.agentId, iteration: input.iteration, signal, emit: scope.emit };
    for (const prepare of deps.preparers) messages = await prepare(messages, context);
  }
  // A limit the run learned from an overflow holds for its every later request.
  if (deps.overflow !== undefined && input.contextLimit !== undefined) {
    context ??= { runId: input.runId, agentId: scope.agentId, iteration: input.iteration, signal, emit: scope.emit };
    messages = await deps.overflow.fit(messages, input.contextLimit, context);
  }
  let sent: ModelRequest = {
    messages,
    tools: deps.tools,
    ...(deps.model === undefined ? {} : { model: deps.model }),
    ...(deps.temperature === undefined ? {} : { temperature: deps.temperature }),
    ...(deps.maxTokens === undefined ? {} : { maxTokens: deps.maxTokens }),
  };
  if (deps.beforeModelCall !== undefined) {
    context ??= { runId: input.runId, agentId: scope.agentId, iteration: input.iteration, signal, emit: scope.emit };
    const decision = await deps.beforeModelCall(sent, context);
    if (decision?.kind === 'block') throw HookError.modelCallBlocked(decision.reason, { runId: input.runId });
    if (decision?.kind === 'modify') sent = { ...sent, ...decision.request };
  }
  const answer = deps.answer;
  // Without native structured output the answer comes as a call to the final tool, which the model must make.
  const tools = answer?.tool === undefined ? sent.tools : [...sent.tools, answer.tool];
  const request: CompletionRequest = {
    messages: deps.loadParts === undefined ? sent.messages : deps.loadParts(sent.messages),
    ...(tools.length > 0 ? { tools } : {}),
    ...(answer === undefined ? {} : answer.native ? { output: answer.spec } : { toolChoice: 'required' as const }),
    ...(sent.model === undefined ? {} : { model: sent.model }),
    ...(sent.temperature === undefined ? {} : { temperature: sent.temperature }),
    ...(sent.maxTokens === undefined ? {} : { maxTokens: sent.maxTokens }),
    ...(deps.reasoningEffort === undefined ? {} : { reasoningEffort: deps.reasoningEffort }),
    signal,
    onRetry(info) {
      scope.emit({ type: 'provider.retry', attempt: info.attempt, delayMs: info.delayMs, error: info.error.message });
    },
  };
  let reply: ReasonOutput;
  try {
    reply = await compactingReply(request, sent.messages, deps, scope, input, signal);
  } catch (error) {
    // The provider checked the answer against the schema and it failed: the loop repairs it.
    const rejected = answer === undefined ? undefined : rejectedReply(error);
    if (rejected === undefined) throw error;
    reply = rejected;
  }
  if (answer === undefined) return reply;
  const checked = checkAnswer(reply, answer);
  return reply.contextLimit === undefined ? checked : { ...checked, contextLimit: reply.contextLimit };
}

/** Over the context window, the request (before parts are loaded) is compacted and sent once more; a second overflow ends the run. */
async function compactingReply(
  request: CompletionRequest,
  sent: readonly Message[],
  deps: ReasonPhaseDeps,
  scope: ReasonPhaseScope,
  input: ReasonInput,
  signal: AbortSignal,
): Promise<ReasonOutput> {
  try {
    return await modelReply(request, deps, scope, input);
  } catch (error) {
    if (!(error instanceof ContextLengthError) || deps.overflow === undefined || signal.aborted) throw error;
    const context = { runId: input.runId, agentId: scope.agentId, iteration: input.iteration, signal, emit: scope.emit };
    const compacted = await deps.overflow.afterOverflow(error, sent, context);
    if (compacted === undefined) throw error;
    scope.emit(compacted.event);
    const messages = deps.loadParts === undefined ? compacted.messages : deps.loadParts(compacted.messages);
    const reply = await modelReply({ ...request, messages }, deps, scope, input);
    return { ...reply, contextLimit: compacted.limit };
  }
}

/** The model's reply, continued while it is cut off at the token cap and the `onLength` policy allows. */
async function modelReply(request: CompletionRequest, deps: ReasonPhaseDeps, scope: ReasonPhaseScope, input: ReasonInput): Promise<ReasonOutput> {
  // One text across continuations: a secret cut off by the token cap may end in the next call.
  const streamed = deps.stream ? new ReplyRedactor(deps.redactStream, (part, delta) => scope.emit({ type: part === 'text' ? 'token.delta' : 'thinking.delta', delta })) : undefined;
  try {
    return await continuedReply(request, deps, scope, input, streamed);
  } finally {
    // What was held back goes out, redacted, however the reply ended.
    streamed?.end();
  }
}

async function continuedReply(request: CompletionRequest, deps: ReasonPhaseDeps, scope: ReasonPhaseScope, input: ReasonInput, streamed: ReplyRedactor | undefined): Promise<ReasonOutput> {
  let completion = await callModel(request, deps, streamed);
  const call = completion.call;
  let text = completion.text;
  let reasoning: ReasoningPart[] = [...(completion.reasoning ?? [])];
  let usage = completion.usage;
  let costUsd = completion.costUsd ?? 0;
  // Tool calls cut off mid-arguments cannot be continued as text: such a reply ends the run.
  const allowed = typeof deps.onLength === 'object' ? deps.onLength.continue : 0;
  let continuations = 0;
  while (cutOff(completion) && completion.toolCalls.length === 0 && continuations < allowed) {
    continuations++;
    scope.emit({ type: 'reply.truncated', action: 'continue', continuation: continuations, completionTokens: completion.usage.completionTokens });
    const sofar: Message = { role: 'assistant', content: text ?? '' };
    // A continuation is the rest of a cut-off answer, not an answer of its own: the joined text is checked.
    const { output: _whole, ...rest } = request;
    completion = await callModel({ ...rest, messages: [...request.messages, sofar, { role: 'user', content: CONTINUE_PROMPT }] }, deps, streamed);
    text = joinText(text, completion.text);
    reasoning = [...reasoning, ...(completion.reasoning ?? [])];
    usage = addUsage(usage, completion.usage);
    costUsd += completion.costUsd ?? 0;
  }
  return {
    text: completion.refusal === undefined ? text : null,
    // The run's whole conversation, not the request: a preparer may have left earlier calls out of it.
    toolCalls: uniqueIds(completion.toolCalls, input.iteration, input.messages),
    usage,
    costUsd,
    ...(reasoning.length === 0 ? {} : { reasoning }),
    ...(cutOff(completion) ? { truncated: true as const } : {}),
    ...(continuations === 0 ? {} : { continuations }),
    ...(completion.refusal === undefined ? {} : { refusal: completion.refusal }),
    ...(call === undefined ? {} : { call }),
  };
}

const CONTINUE_PROMPT = 'Your reply was cut off by the output limit. Continue exactly where it stopped, without repeating anything.';

function cutOff(completion: Completion): boolean {
  return completion.finishReason === 'length';
}

function joinText(before: string | null, after: string | null): string | null {
  if (before === null) return after;
  return after === null ? before : before + after;
}

async function callModel(request: CompletionRequest, deps: ReasonPhaseDeps, streamed: ReplyRedactor | undefined): Promise<Completion> {
  try {
    return await completionOf(request, deps, streamed);
  } catch (error) {
    // A structured answer cut off at the token cap, or refused, fails the schema for no fault a repair turn could fix:
    // the length policy or the refusal decides.
    const completion = error instanceof StructuredOutputError ? error.completion : undefined;
    if (completion !== undefined && (completion.finishReason === 'length' || completion.refusal !== undefined)) return completion;
    throw error;
  }
}

async function completionOf(request: CompletionRequest, deps: ReasonPhaseDeps, streamed: ReplyRedactor | undefined): Promise<Completion> {
  if (streamed === undefined) return deps.provider.complete(request);
  let completion: Completion | undefined;
  for await (const event of deps.provider.stream(request)) {
    if (event.type === 'text.delta') streamed.text(event.delta);
    else if (event.type === 'reasoning.delta') streamed.thinking(event.delta);
    else if (event.type === 'done') completion = event.completion;
  }
  if (completion === undefined) throw InferenceError.streamInterrupted(`${deps.provider.name}'s stream ended without its 'done' event`, { deltasYielded: true });
  return completion;
}

/** How long the event loop may go without a turn before runs let timers fire, in ms. */
const YIELD_EVERY_MS = 10;
let lastTurn = performance.now();
let watching = false;
let turn: { readonly promise: Promise<void>; readonly resolve: () => void } | undefined;

function watchTurns(): void {
  if (watching) return;
  watching = true;
  onNextTurn(() => {
    watching = false;
    lastTurn = performance.now();
    const waiting = turn;
    turn = undefined;
    waiting?.resolve();
  });
}

function nextTurn(): Promise<void> {
  watchTurns();
  if (turn === undefined) {
    let resolve!: () => void;
    const promise = new Promise<void>((done) => (resolve = done));
    turn = { promise, resolve };
  }
  return turn.promise;
}

/**
 * Runs whose model and tools answer in microtasks never let the timer phase come, so a wall-clock limit
 * could not fire: yield a macrotask when the loop has not turned for YIELD_EVERY_MS. node:timers, so fake timers leave it be.
 */
function busyTooLong(): boolean {
  watchTurns();
  return performance.now() - lastTurn >= YIELD_EVERY_MS;
}

/** Some endpoints send empty or repeated tool-call ids; each call needs its own so its result can answer it. */
/**
 * Some models number their calls anew each turn (`search:0` again): a call id an earlier message of the
 * conversation has is renamed too, or pages and lookups by id would take two calls for one.
 */
function uniqueIds(calls: readonly ToolCall[], iteration: number, earlier: readonly Message[]): readonly ToolCall[] {
  if (calls.length === 0) return calls;
  const used = idsIn(earlier);
  if (idsAreUnique(calls) && !calls.some((call) => used.has(call.id))) return calls;
  const seen = new Set<string>(used);
  let changed = false;
  const out = calls.map((call, i) => {
    if (call.id !== '' && !seen.has(call.id)) {
      seen.add(call.id);
      return call;
    }
    changed = true;
    let id = `call_${iteration}_${i}`;
    for (let n = 1; seen.has(id); n++) id = `call_${iteration}_${i}_${n}`;
    seen.add(id);
    return { ...call, id };
  });
  return changed ? out : calls;
}

/**
 * A conversation's call ids, kept at its last message: a run's next turn reads only the messages it
 * added, not the whole conversation again. A set moves on with its conversation; one that forked
 * or was compacted finds none and reads its messages once.
 */
const idsUpTo = new WeakMap<Message, Set<string>>();

function idsIn(messages: readonly Message[]): Set<string> {
  let from = messages.length;
  let ids: Set<string> | undefined;
  while (ids === undefined && from > 0) ids = idsUpTo.get(messages[--from] as Message);
  if (ids === undefined) ids = new Set<string>();
  else {
    idsUpTo.delete(messages[from] as Message);
    from++;
  }
  for (let i = from; i < messages.length; i++) {
    const message = messages[i] as Message;
    if (message.role === 'assistant') for (const call of message.toolCalls ?? []) ids.add(call.id);
  }
  const last = messages.at(-1);
  if (last !== undefined) idsUpTo.set(last, ids);
  return ids;
}

function idsAreUnique(calls: readonly ToolCall[]): boolean {
  if (calls.length > 16) return false; // long turns take the general path
  for (let i = 0; i < calls.length; i++) {
    const id = (calls[i] as ToolCall).id;
    if (id === '') return false;
    for (let j = 0; j < i; j++) if ((calls[j] as ToolCall).id === id) return false;
  }
  return true;
}
