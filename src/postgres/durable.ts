/**
 * Inside a step, each model or tool call is an effect keyed by what a replay reproduces exactly (run,
 * conversation length, idempotency key, count within the phase): a recorded outcome answers it, else
 * the run waits while the worker makes the call. Outside a step calls go straight through.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { z } from 'zod';
import type { PhaseArgs, PhaseImplementations } from '../../machines/phaseRunner.ts';
import type { Completion, CompletionRequest, InferenceProvider, StreamEvent } from '../core/provider.ts';
import type { Tool, ToolContext } from '../tools/types.ts';
import { ImagePart } from '../core/messages.ts';
import { ContextLengthError, StructuredOutputError } from '../inference/errors.ts';

const CONTEXT_LENGTH: string = 'context_length_exceeded' satisfies ContextLengthError['code'];
import type { StepRun } from './stepStore.ts';
import type { Caller } from './engine.ts';
import type { EffectLedger } from '../core/run.ts';
import type { RunContext } from '../run/context.ts';
import { DurableRunError } from './errors.ts';
import { defined } from '../core/defined.ts';
import { asStored } from './jsonb.ts';

export const EffectOutcome = z.union([
  // `images`: those a tool attached, by reference (the bytes are in the blobs table).
  z.object({ ok: z.literal(true), value: z.unknown(), images: z.array(ImagePart).optional() }),
  z.object({
    ok: z.literal(false),
    error: z.object({
      name: z.string(),
      message: z.string(),
      code: z.string().optional(),
      sizes: z.object({ limitTokens: z.number(), promptTokens: z.number(), completionTokens: z.number() }).partial().optional(),
      /** A reply that does not match the output schema: what the run repairs from. */
      structured: z.object({ schema: z.string(), issues: z.array(z.looseObject({ message: z.string(), path: z.array(z.union([z.string(), z.number()])) })), text: z.string().nullable(), completion: z.unknown().optional() }).optional(),
    }),
  }),
]);
export type EffectOutcome = z.infer<typeof EffectOutcome>;

/** The request without its signal and callbacks. */
export const ModelEffectRequest = z.object({
  kind: z.literal('model'),
  agentId: z.string(),
  /** Asked for by a streaming reply: the worker streams it and publishes its deltas to followers. */
  stream: z.literal(true).optional(),
  request: z.object({
    messages: z.array(z.unknown()),
    tools: z.array(z.unknown()).optional(),
    toolChoice: z.unknown().optional(),
    model: z.string().optional(),
    temperature: z.number().optional(),
    maxTokens: z.number().optional(),
    reasoningEffort: z.enum(['minimal', 'low', 'medium', 'high']).optional(),
  }),
  /** The reply must match the agent's output schema, which the worker's agent holds. */
  output: z.literal(true).optional(),
});

export const ToolEffectRequest = z.object({
  kind: z.literal('tool'),
  agentId: z.string(),
  tool: z.string(),
  input: z.unknown(),
  toolCallId: z.string(),
  idempotencyKey: z.string(),
  runId: z.string(),
});
/** A sub-agent run a durable parent (a strategy's branch) waits for: a durable run of its own. */
export const ChildEffectRequest = z.object({
  kind: z.literal('child'),
  agentId: z.string(),
  runId: z.string(),
  task: z.string(),
  parentId: z.string(),
});
export const EffectRequest = z.discriminatedUnion('kind', [ModelEffectRequest, ToolEffectRequest, ChildEffectRequest]);
export type EffectRequest = z.infer<typeof EffectRequest>;

export class StepContext implements EffectLedger {
  readonly requested = new Map<string, EffectRequest>();
  /** Answered by `settle` when the run lives on in this process. */
  readonly #waiting = new Map<string, { resolve: (value: unknown) => void; reject: (error: unknown) => void }>();
  constructor(
    readonly run: StepRun,
    readonly outcomes: ReadonlyMap<string, EffectOutcome>,
    /** A call's request is stored, so it is scrubbed like the journal. */
    private readonly scrub: Pick<Caller, 'redact' | 'redactCopy'>,
  ) {
    run.effects = this;
  }

  /** At rest, it stays put. */
  get progress(): number {
    return this.run.progress + this.requested.size;
  }

  /** A model call's messages and tools as they come, uncopied: each is copied and scrubbed here once. */
  effect(key: string, request: () => EffectRequest, signal: AbortSignal | undefined): Promise<unknown> {
    const outcome = this.outcomes.get(key);
    if (outcome !== undefined) return answer(this.run.runId, outcome);
    if (!this.requested.has(key)) {
      this.requested.set(key, this.#stored(request()));
      this.run.changed();
    }
    // Settled by the outcome of the call, made after this step: replayed in a later step, or given by `settle`.
    return new Promise((resolve, reject) => {
      this.#waiting.set(key, { resolve, reject });
      if (signal === undefined) return;
      if (signal.aborted) reject(signal.reason);
      else signal.addEventListener('abort', () => reject(signal.reason), { once: true });
    });
  }

  /** Scrubbed like the journal; a model call's messages and tools as JSON copies, made once each: they come again in every later call. */
  #stored(request: EffectRequest): EffectRequest {
    const { redact, redactCopy } = this.scrub;
    if (request.kind !== 'model') return redact(request);
    const { messages, tools, ...rest } = request.request;
    const stored = redact({ ...request, request: rest });
    const copied = { messages: messages.map(redactCopy), ...(tools === undefined ? {} : { tools: tools.map(redactCopy) }) };
    return { ...stored, request: { ...copied, ...stored.request } };
  }

  settle(made: ReadonlyMap<string, EffectOutcome>): void {
    this.requested.clear();
    for (const [key, outcome] of made) {
      const waiting = this.#waiting.get(key);
      if (waiting === undefined) continue;
      this.#waiting.delete(key);
      answer(this.run.runId, asStored(outcome)).then(waiting.resolve, waiting.reject);
    }
  }
}

/** A tool's recorded value with the images it attached: the durable tool hands them on. */
class WithImages {
  constructor(
    readonly value: unknown,
    readonly images: readonly ImagePart[],
  ) {}
}

function answer(runId: string, outcome: EffectOutcome): Promise<unknown> {
  if (outcome.ok) return Promise.resolve(outcome.images === undefined || outcome.images.length === 0 ? outcome.value : new WithImages(outcome.value, outcome.images));
  const { message, code, sizes, structured } = outcome.error;
  if (structured !== undefined) {
    // The run repairs the reply (or tries again) as in process: it needs the typed error with the reply.
    const error = new StructuredOutputError(structured.schema, structured.issues as unknown as z.core.$ZodIssue[], structured.text);
    if (structured.completion !== undefined) error.completion = structured.completion as Completion;
    return Promise.reject(error);
  }
  if (code === CONTEXT_LENGTH) {
    // The agent handles a full context window itself (it compacts and tries again): it needs the typed error.
    const error = new ContextLengthError('', { ...sizes });
    error.message = message;
    return Promise.reject(error);
  }
  return Promise.reject(DurableRunError.effectFailed(message, { runId, ...defined({ originalCode: code }) }));
}

export interface Frame {
  readonly step: EffectLedger;
  readonly runId: string;
  readonly agentId: string;
  readonly turn: number;
  modelCalls: number;
  readonly toolCalls: Map<string, number>;
}

export const frames = new AsyncLocalStorage<Frame>();

/** For the runs a delegation's call job starts. */
export interface CallScope {
  readonly key: string;
  started: number;
  /** The ids it gave out before the run was asked for (a system names a task's run first). */
  readonly named: Set<string>;
}
export const calls = new AsyncLocalStorage<CallScope>();

export function inFrame<T>(step: EffectLedger, runId: string, agentId: string, work: () => T): T {
  return frames.run({ step, runId, agentId, turn: 0, modelCalls: 0, toolCalls: new Map() }, work);
}

export function durablePhases(agentId: string, phases: PhaseImplementations<RunContext>): PhaseImplementations<RunContext> {
  const wrap = <TOutput, TInput extends { readonly runId: string; readonly messages?: readonly unknown[] }>(
    implementation: (args: PhaseArgs<TInput, RunContext>) => PromiseLike<TOutput>,
  ) => {
    return (args: PhaseArgs<TInput, RunContext>): PromiseLike<TOutput> => {
      const step = args.run.effects;
      if (step === undefined) return implementation(args);
      const frame: Frame = { step, runId: args.input.runId, agentId, turn: args.input.messages?.length ?? 0, modelCalls: 0, toolCalls: new Map() };
      return frames.run(frame, () => implementation(args));
    };
  };
  return {
    ...(phases.hydrate === undefined ? {} : { hydrate: wrap(phases.hydrate) }),
    reason: wrap(phases.reason),
    gate: phases.gate,
    act: wrap(phases.act),
  };
}

export function durableProvider(inner: InferenceProvider): InferenceProvider {
  const call = (frame: Frame, request: CompletionRequest, stream: boolean): Promise<Completion> => {
    const key = `${frame.runId}:model:${frame.turn}:${frame.modelCalls++}`;
    const { messages, tools, toolChoice, model, temperature, maxTokens, reasoningEffort } = request;
    const effect = (): EffectRequest => ({
      kind: 'model',
      agentId: frame.agentId,
      ...(stream ? { stream: true as const } : {}),
      // Its messages and tools are copied by the step, once each.
      request: {
        messages: [...messages],
        ...(tools === undefined ? {} : { tools: [...tools] }),
        ...(JSON.parse(JSON.stringify({ toolChoice, model, temperature, maxTokens, reasoningEffort })) as Omit<ModelRequestJson, 'messages' | 'tools'>),
      },
      ...(request.output === undefined ? {} : { output: true as const }),
    });
    const completion = frame.step.effect(key, effect, request.signal) as Promise<Completion>;
    // Named by its key, a streamed reply shows as the message its live deltas opened, whichever worker made the call.
    return stream ? completion.then((made) => ({ ...made, call: key })) : completion;
  };
  return {
    name: inner.name,
    defaultModel: inner.defaultModel,
    supportsNativeTools: inner.supportsNativeTools,
    supportsStructuredOutput: inner.supportsStructuredOutput,
    complete<TOutput>(request: CompletionRequest<TOutput>): Promise<Completion<TOutput>> {
      const frame = frames.getStore();
      if (frame === undefined) return inner.complete(request);
      return call(frame, request, false) as Promise<Completion<TOutput>>;
    },
    stream<TOutput>(request: CompletionRequest<TOutput>): AsyncIterable<StreamEvent<TOutput>> {
      const frame = frames.getStore();
      if (frame === undefined) return inner.stream(request);
      // The worker that makes the call streams it to this run's followers (`agent.tokens$` in any process); the run gets the reply whole.
      const completion = call(frame, request, true);
      return (async function* () {
        yield { type: 'done', completion: (await completion) as Completion<TOutput> } as StreamEvent<TOutput>;
      })();
    },
  };
}

type ModelRequestJson = z.infer<typeof ModelEffectRequest>['request'];

export function durableTool(tool: Tool): Tool {
  return {
    ...tool,
    execute(input: unknown, context: ToolContext) {
      const frame = frames.getStore();
      if (frame === undefined) return tool.execute(input, context);
      const base = `${context.idempotencyKey}`;
      const count = frame.toolCalls.get(base) ?? 0;
      frame.toolCalls.set(base, count + 1);
      const effect = (): EffectRequest => ({
        kind: 'tool',
        agentId: context.agentId,
        tool: tool.name,
        input: asStored(input ?? null),
        toolCallId: context.toolCallId,
        idempotencyKey: context.idempotencyKey,
        runId: context.runId,
      });
      return frame.step.effect(`${base}:tool:${count}`, effect, context.signal).then((value) => {
        if (!(value instanceof WithImages)) return value;
        context.attachImages?.(value.images);
        return value.value;
      });
    },
  };
}
