/** The same typed errors as the OpenAI-compatible provider, so retries and the loop treat both alike (529 is retried). */
import { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from '@anthropic-ai/sdk';
import { ActorloopError } from '../core/errors.ts';
import { classifyError, classifyHttpError, redactSecrets } from './classify.ts';
import type { ClassifyContext } from './classify.ts';
import { InferenceError } from './errors.ts';

export function classifyAnthropicError(error: unknown, context: ClassifyContext = {}): ActorloopError {
  if (error instanceof ActorloopError) return error;
  const secrets = context.secrets ?? [];
  const cause = sanitizeCause(error, secrets);
  if (error instanceof APIUserAbortError) return InferenceError.cancelled({ cause });
  if (error instanceof APIConnectionTimeoutError) return InferenceError.timeout(context.timeoutMs, { cause });
  if (error instanceof APIConnectionError) return InferenceError.network(redactSecrets(messageChain(error), secrets) || 'connection failed', { cause });
  if (error instanceof APIError) {
    return classifyHttpError(error.status, errorObject(error.error), error.message, error.headers, { ...context, cause });
  }
  return classifyError(error, context);
}

/** A spend limit is a 429 too, but waiting will not lift it: its `error_code` is read as exhausted quota. */
function errorObject(body: unknown): unknown {
  if (typeof body !== 'object' || body === null || !('error' in body)) return body;
  const inner = body.error;
  if (typeof inner !== 'object' || inner === null) return body;
  const details = 'details' in inner && typeof inner.details === 'object' && inner.details !== null ? inner.details : undefined;
  const spendLimit = details !== undefined && 'error_code' in details && typeof details.error_code === 'string' && /spend_limit/.test(details.error_code);
  return spendLimit ? { ...inner, code: 'insufficient_quota' } : inner;
}

function messageChain(error: unknown): string {
  const parts: string[] = [];
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current instanceof Error; depth++) {
    const message = current.message.replace(/\.$/, '');
    if (message !== '' && !parts.includes(message)) parts.push(message);
    current = current.cause;
  }
  return parts.join(': ');
}

function sanitizeCause(error: unknown, secrets: readonly string[]): unknown {
  const active = secrets.filter((secret) => secret.length >= 8);
  if (active.length === 0) return error;
  let text = messageChain(error);
  if (error instanceof APIError) {
    try {
      text += JSON.stringify(error.error) ?? '';
      text += JSON.stringify(error.headers === undefined ? [] : [...error.headers]);
    } catch {
      // An unserialisable body cannot be checked: treat it as carrying the key.
      text += active[0];
    }
  }
  if (!active.some((secret) => text.includes(secret))) return error;
  const standIn = new Error(redactSecrets(messageChain(error), active));
  standIn.name = error instanceof Error ? error.name : 'Error';
  return standIn;
}
