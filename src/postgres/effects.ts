/**
 * A call claimed by a worker that died is made again by the next claimer, unless its tool is not
 * idempotent and had begun: then the run hears it may have taken effect, as a resumed run does.
 */
import { DEFAULTS } from '../core/defaults.ts';
import { runWithTimeout } from '../executor/timeout.ts';
import type { Completion, CompletionRequest, InferenceProvider } from '../core/provider.ts';
import { TokenPublisher } from './tokens.ts';
import { calls, type EffectOutcome, type EffectRequest } from './durable.ts';
import { callerOf, type Caller, type Engine } from './engine.ts';
import type { Tool } from '../tools/types.ts';
import { DurableRunError } from './errors.ts';
import { ContextLengthError, InferenceError, StructuredOutputError } from '../inference/errors.ts';
import { toolSessionMemory } from './sessionMemory.ts';
import { whileReconnecting } from './transaction.ts';
import type { SessionMemory } from '../core/sessionMemory.ts';
import { defined } from '../core/defined.ts';
import type { ImagePart } from '../core/messages.ts';
import { toolImages, type Blobs } from './blobs.ts';

/** `begun`: a non-idempotent tool's call had started before (its worker died). */
export interface ClaimedCall {
  readonly key: string;
  readonly request: Exclude<EffectRequest, { kind: 'child' }>;
  readonly begun: boolean;
  /** As the run's queued options keep it: its tools get the session's memory. */
  readonly session?: string;
}

/** `blobs`: the bytes of the images its outcome refers to, for the step that records it to store. */
export interface CallResult {
  readonly outcome: EffectOutcome;
  readonly blobs?: Blobs;
}

/** `runId`: the run that asked for it, whose followers see a streamed reply's deltas. */
export async function makeCall(engine: Engine, claimed: ClaimedCall, abort: AbortSignal, runId: string): Promise<CallResult> {
  const { request, key } = claimed;
  const bound = callerOf(engine, request.agentId);
  if (bound === undefined) return failed(new DurableRunError(`The call ${key} belongs to agent "${request.agentId}", which this worker does not have.`));
  const tool = request.kind === 'tool' ? await bound.tool(request.tool) : undefined;
  if (request.kind === 'tool' && tool === undefined) return failed(new DurableRunError(`This worker's agent "${request.agentId}" has no tool "${request.tool}".`));
  if (claimed.begun && tool !== undefined && !tool.idempotent) {
    return failed(new DurableRunError(`"${tool.name}" was running when its worker stopped and is not idempotent: it may already have taken effect, so it was not run again.`));
  }
  // Its tools share the session's memory as it is when the call starts (read again while the database is away).
  let session: SessionMemory | undefined;
  if (request.kind === 'tool' && claimed.session !== undefined) {
    const sessionId = claimed.session;
    try {
      session = await whileReconnecting(() => toolSessionMemory(engine.pool, sessionId, bound.redact), { signal: abort });
    } catch (error) {
      return failed(new DurableRunError(`The session memory of run ${request.runId} could not be read (${error instanceof Error ? error.message : String(error)}); "${request.tool}" was not run.`));
    }
  }
  // Images a tool attaches reach the model only of an agent that takes them, as in process.
  const attached: ImagePart[] = [];
  const streaming = request.kind === 'model' && request.stream === true ? new TokenPublisher(engine.pool, { agentId: request.agentId, runId, call: key }, bound.redactStream) : undefined;
  const attach = bound.images === undefined ? undefined : (images: readonly ImagePart[]) => void attached.push(...images);
  const outcome = bound.redact(await call(request, bound, tool, abort, session, attach, streaming));
  if (attached.length === 0 || bound.images === undefined || !outcome.ok) return { outcome };
  const kept = toolImages(attached, bound.images);
  return { outcome: { ...outcome, images: kept.images }, blobs: kept.blobs };
}

const failed = (error: unknown): CallResult => ({ outcome: failure(error) });

/** A tool that must not run twice, or one not known here. */
export async function mustMarkBegun(engine: Engine, request: EffectRequest): Promise<boolean> {
  if (request.kind !== 'tool') return false;
  const tool = await callerOf(engine, request.agentId)?.tool(request.tool);
  return tool === undefined || !tool.idempotent;
}

async function call(
  request: Exclude<EffectRequest, { kind: 'child' }>,
  bound: Caller,
  tool: Tool | undefined,
  abort: AbortSignal,
  session: SessionMemory | undefined,
  attachImages: ((images: readonly ImagePart[]) => void) | undefined,
  streaming: TokenPublisher | undefined,
): Promise<EffectOutcome> {
  if (request.kind === 'model') {
    if (request.output === true && bound.output === undefined) return failure(new DurableRunError(`This worker's agent "${request.agentId}" has no output schema; define it with the same \`output\` as the agent that queued the run.`));
    try {
      const output = request.output === true ? bound.output : undefined;
      const asked = { ...(request.request as unknown as CompletionRequest), ...defined({ output }), signal: abort };
      const completion = streaming === undefined ? await bound.provider.complete(asked) : await streamed(bound.provider, asked, streaming);
      return { ok: true, value: completion };
    } catch (error) {
      return failure(error);
    }
  }
  if (tool === undefined) return failure(new Error(`no tool ${request.tool}`));
  const timed = await runWithTimeout(
    (signal) =>
      calls.run({ key: request.idempotencyKey, started: 0, named: new Set() }, () =>
        tool.execute(request.input as never, {
          get signal() {
            return signal();
          },
          toolCallId: request.toolCallId,
          idempotencyKey: request.idempotencyKey,
          runId: request.runId,
          agentId: request.agentId,
          ...defined({ session, attachImages }),
        }),
      ),
    tool.timeoutMs ?? DEFAULTS.tools.timeoutMs,
    abort,
  );
  if (!timed.ok) return failure(timed.error);
  const json = JSON.stringify(timed.value ?? null);
  return json === undefined ? failure(new Error(`"${tool.name}" returned a value that is not JSON.`)) : { ok: true, value: JSON.parse(json) as unknown };
}

/** One model call as one effect: its deltas are published on the way, its reply recorded whole. */
async function streamed(provider: InferenceProvider, request: CompletionRequest, publisher: TokenPublisher): Promise<Completion> {
  let completion: Completion | undefined;
  try {
    for await (const event of provider.stream(request)) {
      if (event.type === 'text.delta') publisher.text(event.delta);
      else if (event.type === 'reasoning.delta') publisher.thinking(event.delta);
      else if (event.type === 'done') completion = event.completion;
    }
  } finally {
    await publisher.end();
  }
  if (completion === undefined) throw InferenceError.streamInterrupted(`${provider.name}'s stream ended without its 'done' event`, { deltasYielded: true });
  return completion;
}

function failure(error: unknown): EffectOutcome {
  const name = error instanceof Error ? error.name : 'Error';
  const message = error instanceof Error ? error.message : String(error);
  const code = typeof (error as { code?: unknown } | null)?.code === 'string' ? (error as { code: string }).code : undefined;
  const sizes = error instanceof ContextLengthError ? contextSizes(error) : undefined;
  const structured = error instanceof StructuredOutputError ? structuredFailure(error) : undefined;
  return { ok: false, error: { name, message, ...defined({ code, sizes, structured }) } };
}

/** The issues as plain data (an issue's `input` may be anything), the reply whole. */
function structuredFailure(error: StructuredOutputError): NonNullable<Extract<EffectOutcome, { ok: false }>['error']['structured']> {
  const schema = error.schemaName;
  const issues = error.issues.map(({ code, message, path }) => ({ code, message, path: path.map((key) => (typeof key === 'symbol' ? String(key) : key)) }));
  return { schema, issues, text: error.text, ...defined({ completion: error.completion === undefined ? undefined : (JSON.parse(JSON.stringify(error.completion)) as unknown) }) };
}

function contextSizes({ limitTokens, promptTokens, completionTokens }: ContextLengthError): { limitTokens?: number; promptTokens?: number; completionTokens?: number } {
  return {
    ...defined({ limitTokens, promptTokens, completionTokens }),
  };
}
