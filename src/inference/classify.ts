/** Classification happens once, at the edge, so retries and the loop only ever see typed errors with `retryable`. */
import { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai';
import { ActorloopError, describeError } from '../core/errors.ts';
import { AuthenticationError, ContextLengthError, InferenceError, RateLimitError } from './errors.ts';
import type { ContextLengthDetails, UpstreamError } from './errors.ts';
import { parseRetryAfter } from './retryAfter.ts';
import type { HeaderReader } from './retryAfter.ts';
import { defined } from '../core/defined.ts';

export interface ClassifyContext {
  /** Cut out of every message and cause. Strings under 8 characters are ignored. */
  readonly secrets?: readonly string[];
  readonly timeoutMs?: number;
  readonly keyVariable?: string;
}

/** Provider error texts can be whole HTML pages from a proxy. */
const MAX_DETAIL_CHARS = 300;
const NETWORK_CODES = new Set([
  'ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH',
  'ECONNABORTED', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED',
]);
const TIMEOUT_CODES = new Set(['ETIMEDOUT', 'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);
// OpenAI/Azure/vLLM/OpenRouter: "maximum context length"; Ollama: "exceeds the context length";
// llama.cpp: "exceeds the available context size"; Gemini: "input token count (…) exceeds the maximum number of tokens".
const CONTEXT_LENGTH = /context_length_exceeded|context length|context window|maximum context|context size|prompt is too long|input token count.*exceeds the maximum number of tokens/i;
/** llama.cpp's error type for a prompt over the slot's context; some builds send it with a 500. */
const LLAMA_CPP_CONTEXT_TYPE = 'exceed_context_size_error';
/** Qwen 3.5+ chat templates' `raise_exception`, as llama.cpp, Ollama, vLLM and MLX servers pass it on (with a 400 or a 500). */
const SYSTEM_NOT_FIRST = /system message must be at the beginning/i;

/** Callers that own the signal should rethrow `signal.reason` before classifying. */
export function classifyError(error: unknown, context: ClassifyContext = {}): ActorloopError {
  if (error instanceof ActorloopError) return error;
  const secrets = context.secrets ?? [];
  const cause = sanitizeCause(error, secrets);
  if (error instanceof APIUserAbortError || nameOf(error) === 'AbortError') return InferenceError.cancelled({ cause });
  if (error instanceof APIConnectionTimeoutError) return InferenceError.timeout(context.timeoutMs, { cause });
  if (error instanceof APIConnectionError) return InferenceError.network(detail(causeChain(error), secrets), { cause });
  if (error instanceof APIError) {
    return classifyHttpError(error.status, error.error, error.message, error.headers, { ...context, cause });
  }
  if (error instanceof SyntaxError) return InferenceError.invalidResponse(detail(`unparseable JSON (${error.message})`, secrets), { cause });
  const codes = codesOf(error);
  if (nameOf(error) === 'TimeoutError' || codes.some((code) => TIMEOUT_CODES.has(code))) {
    return InferenceError.timeout(context.timeoutMs, { cause });
  }
  if (codes.some((code) => NETWORK_CODES.has(code)) || /^(fetch failed|terminated)$/.test(messageOf(error))) {
    return InferenceError.network(detail(causeChain(error), secrets), { cause });
  }
  return InferenceError.unknown(detail(describeError(error), secrets), { cause });
}

/** Also for error objects inside a stream or a 200 body (OpenRouter, with the status as a numeric `code`). */
export function classifyHttpError(
  status: number | undefined,
  body: unknown,
  fallbackMessage: string,
  headers: HeaderReader | undefined,
  context: ClassifyContext & { readonly cause?: unknown } = {},
): InferenceError {
  const info = readErrorBody(body);
  const secrets = context.secrets ?? [];
  const upstream = info.upstream === undefined ? undefined : redactUpstream(info.upstream, secrets);
  // A gateway's own message ("Provider returned error") says nothing: the upstream's goes with it.
  const said = info.message ?? fallbackMessage;
  const text = detail(upstream === undefined ? said : `${said} (${upstream.provider ?? 'upstream'}: ${upstream.message})`, secrets);
  const effective = status ?? (typeof info.code === 'number' ? info.code : undefined);
  const options = {
    cause: context.cause,
    ...defined({ status: effective, upstream }),
  };
  // Read before `detail` cuts the text: llama.cpp puts the template's words after its source excerpt.
  const refusal = [said, upstream?.message ?? ''].find((text) => SYSTEM_NOT_FIRST.test(text));
  if (refusal !== undefined) return InferenceError.systemMessageRefused(detail(refusal.slice(refusal.search(SYSTEM_NOT_FIRST)), secrets), options);
  if (info.type === LLAMA_CPP_CONTEXT_TYPE || info.upstreamType === LLAMA_CPP_CONTEXT_TYPE) {
    return new ContextLengthError(text, { ...options, ...contextSizes(said, body) });
  }
  // 429 bodies talk about tokens too ("tokens per min"); they are never a context-length problem.
  const isClientError = effective === undefined || (effective >= 400 && effective < 500 && effective !== 429);
  if (isClientError && (info.code === 'context_length_exceeded' || CONTEXT_LENGTH.test(text))) {
    return new ContextLengthError(text, { ...options, ...contextSizes(said, body) });
  }
  if (effective === 401 || effective === 403) {
    return new AuthenticationError(text, { ...options, ...defined({ keyVariable: context.keyVariable }) });
  }
  if (effective === 429 || info.code === 'rate_limit_exceeded' || info.code === 'insufficient_quota') {
    const quotaExhausted = info.code === 'insufficient_quota' || info.type === 'insufficient_quota';
    return new RateLimitError(text, { ...options, quotaExhausted, ...retryAfter(headers) });
  }
  if (effective === 408) return InferenceError.timeout(context.timeoutMs, options);
  if (effective !== undefined && effective >= 400 && effective < 500) return InferenceError.badRequest(text, options);
  return InferenceError.server(text, { ...options, ...retryAfter(headers) });
}

export function redactSecrets(text: string, secrets: readonly string[] = []): string {
  let out = text;
  for (const secret of secrets) if (secret.length >= 8) out = out.split(secret).join('[redacted]');
  return out;
}

function retryAfter(headers: HeaderReader | undefined): { retryAfterMs?: number } {
  const ms = parseRetryAfter(headers);
  return defined({ retryAfterMs: ms });
}

function detail(text: string, secrets: readonly string[]): string {
  const clean = redactSecrets(text, secrets).trim().replace(/\.$/, '');
  return clean.length > MAX_DETAIL_CHARS ? `${clean.slice(0, MAX_DETAIL_CHARS)}…` : clean || 'no details';
}

interface ErrorBodyInfo {
  code?: string | number;
  type?: string;
  message?: string;
  upstream?: UpstreamError;
  upstreamType?: string;
}

function readErrorBody(body: unknown): ErrorBodyInfo {
  // Gemini answers with an array holding one `{ error }`.
  const record = Array.isArray(body) && body.length === 1 ? (asRecord(asRecord(body[0])?.error) ?? asRecord(body[0])) : asRecord(body);
  if (record === undefined) return {};
  const out: ErrorBodyInfo = {};
  if (typeof record.code === 'string' || typeof record.code === 'number') out.code = record.code;
  if (typeof record.type === 'string') out.type = record.type;
  if (typeof record.message === 'string') out.message = record.message;
  const metadata = asRecord(record.metadata);
  if (metadata !== undefined && (typeof metadata.raw === 'string' || asRecord(metadata.raw) !== undefined)) {
    const raw = readRaw(metadata.raw);
    out.upstream = {
      message: raw.message ?? (typeof metadata.raw === 'string' ? metadata.raw : safeJson(metadata.raw)),
      ...(typeof metadata.provider_name === 'string' ? { provider: metadata.provider_name } : {}),
    };
    if (raw.type !== undefined) out.upstreamType = raw.type;
  }
  return out;
}

// OpenAI, Azure, vLLM: "maximum context length is 4097 tokens. However, you requested 4120 tokens
// (3120 in the messages, 1000 in the completion)"; Anthropic: "prompt is too long: 214315 tokens > 204798 maximum".
const OPENAI_SIZES = /maximum context length is (\d+) tokens\. However, you requested (\d+) tokens(?: \((\d+) in the messages, (\d+) in the completion\))?/i;
const ANTHROPIC_SIZES = /prompt is too long: (\d+) tokens > (\d+) maximum/i;
const GEMINI_SIZES = /input token count \((\d+)\) exceeds the maximum number of tokens allowed \((\d+)\)/i;

function contextSizes(text: string, body: unknown): ContextLengthDetails {
  const openai = OPENAI_SIZES.exec(text);
  if (openai !== null) {
    const [, limit, requested, messages, completion] = openai;
    return {
      limitTokens: Number(limit),
      promptTokens: Number(messages ?? requested),
      ...(completion === undefined ? {} : { completionTokens: Number(completion) }),
    };
  }
  const anthropic = ANTHROPIC_SIZES.exec(text);
  if (anthropic !== null) return { promptTokens: Number(anthropic[1]), limitTokens: Number(anthropic[2]) };
  const gemini = GEMINI_SIZES.exec(text);
  if (gemini !== null) return { promptTokens: Number(gemini[1]), limitTokens: Number(gemini[2]) };
  const record = asRecord(body);
  const limit = record?.n_ctx;
  const prompt = record?.n_prompt_tokens;
  return {
    ...(typeof limit === 'number' && limit > 0 ? { limitTokens: limit } : {}),
    ...(typeof prompt === 'number' && prompt > 0 ? { promptTokens: prompt } : {}),
  };
}

function readRaw(raw: unknown): { message?: string; type?: string } {
  let value = raw;
  if (typeof raw === 'string') {
    try {
      value = JSON.parse(raw);
    } catch {
      return {};
    }
  }
  const record = asRecord(value);
  const inner = asRecord(record?.error) ?? record;
  if (inner === undefined) return {};
  return {
    ...(typeof inner.message === 'string' ? { message: inner.message } : {}),
    ...(typeof inner.type === 'string' ? { type: inner.type } : {}),
  };
}

function redactUpstream(upstream: UpstreamError, secrets: readonly string[]): UpstreamError {
  const message = redactSecrets(upstream.message, secrets);
  const clipped = message.length > MAX_DETAIL_CHARS ? `${message.slice(0, MAX_DETAIL_CHARS)}…` : message;
  return { ...upstream, message: clipped };
}

function asRecord(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

function nameOf(value: unknown): string | undefined {
  return typeof value === 'object' && value !== null && 'name' in value && typeof value.name === 'string' ? value.name : undefined;
}

function messageOf(value: unknown): string {
  return value instanceof Error ? value.message : '';
}

/** undici nests the socket error two levels down. */
function codesOf(value: unknown): string[] {
  const codes: string[] = [];
  let current: unknown = value;
  for (let depth = 0; depth < 5 && typeof current === 'object' && current !== null; depth++) {
    if ('code' in current && typeof current.code === 'string') codes.push(current.code);
    current = 'cause' in current ? current.cause : undefined;
  }
  return codes;
}

function causeChain(value: unknown): string {
  const parts: string[] = [];
  let current: unknown = value;
  for (let depth = 0; depth < 5 && current instanceof Error; depth++) {
    const message = current.message.replace(/\.$/, '');
    if (message !== '' && !parts.includes(message)) parts.push(message);
    current = current.cause;
  }
  return parts.join(': ') || describeError(value);
}

/** Servers echo the rejected key in 401 bodies, so a cause carrying a secret becomes a redacted stand-in. */
function sanitizeCause(error: unknown, secrets: readonly string[]): unknown {
  const active = secrets.filter((secret) => secret.length >= 8);
  if (active.length === 0) return error;
  let text = causeChain(error);
  if (error instanceof APIError) text += safeJson(error.error) + safeJson(error.headers === undefined ? undefined : [...error.headers]);
  if (!active.some((secret) => text.includes(secret))) return error;
  const standIn = new Error(redactSecrets(causeChain(error), active));
  standIn.name = nameOf(error) ?? 'Error';
  return standIn;
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? '';
  } catch {
    return '';
  }
}
