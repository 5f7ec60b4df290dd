/**
 * The runtime's secret redaction: one rule set per agent, applied to every event before it is
 * emitted or journaled, and to every message, snapshot and tool result before it is persisted.
 * Unlike the inspector's `sanitize`, it never truncates or reshapes data: a redacted snapshot
 * must still restore.
 */
import type { LoopEvent } from '../events/loopEvent.ts';
import { compileSecretRules, REDACTED, type SecretRuleOptions, type SecretRules } from './secrets.ts';

/** Environment variables whose values are secrets wherever they appear. */
const SECRET_ENV = ['OPENAI_API_KEY', 'OPENROUTER_API_KEY', 'ANTHROPIC_API_KEY', 'OPENAI_ADMIN_KEY'] as const;

export interface Redactor {
  text(value: string): string;
  /** An event with its free-text fields redacted (a new object only when something changed). */
  event(event: LoopEvent): LoopEvent;
  /** A deep copy with secret-keyed values and secret-looking text replaced; shape preserved. */
  deep<T>(value: T): T;
}

/**
 * @example
 * ```ts
 * const redact = createRedactor({ secrets: [myToken] });
 * redact.text(`token is ${myToken}`); // 'token is [REDACTED]'
 * ```
 */
export function createRedactor(options: SecretRuleOptions = {}, env: NodeJS.ProcessEnv = process.env): Redactor {
  const fromEnv = SECRET_ENV.map((name) => env[name]).filter((v): v is string => typeof v === 'string' && v.length >= 8);
  const rules = compileSecretRules({ ...options, secrets: [...(options.secrets ?? []), ...fromEnv] });
  const text = (value: string): string => (value === '' ? value : rules.redactText(value));
  return {
    text,
    event: (event) => redactEvent(event, text),
    deep: <T>(value: T): T => deepRedact(value, rules, new WeakMap()) as T,
  };
}

/** Only fields that can carry free text are scanned: the rest are ids, enums and numbers. */
function redactEvent(event: LoopEvent, text: (value: string) => string): LoopEvent {
  switch (event.type) {
    case 'run.started': {
      const task = text(event.task);
      return task === event.task ? event : { ...event, task };
    }
    case 'reasoning.completed': {
      if (event.text === null) return event;
      const value = text(event.text);
      return value === event.text ? event : { ...event, text: value };
    }
    case 'token.delta': {
      const delta = text(event.delta);
      return delta === event.delta ? event : { ...event, delta };
    }
    case 'policy.evaluated':
    case 'human.decided': {
      if (event.reason === undefined) return event;
      const reason = text(event.reason);
      return reason === event.reason ? event : { ...event, reason };
    }
    case 'step.limit_reached':
    case 'stuck.detected': {
      const reason = text(event.reason);
      return reason === event.reason ? event : { ...event, reason };
    }
    case 'recovery.triggered':
    case 'provider.retry': {
      const error = text(event.error);
      return error === event.error ? event : { ...event, error };
    }
    case 'strategy.decided': {
      if (event.detail === undefined) return event;
      const detail = text(event.detail);
      return detail === event.detail ? event : { ...event, detail };
    }
    case 'run.terminated': {
      if (event.error === undefined) return event;
      const message = text(event.error.message);
      return message === event.error.message ? event : { ...event, error: { ...event.error, message } };
    }
    default:
      return event;
  }
}

function deepRedact(value: unknown, rules: SecretRules, seen: WeakMap<object, unknown>): unknown {
  if (typeof value === 'string') return value === '' ? value : rules.redactText(value);
  if (value === null || typeof value !== 'object') return value;
  const known = seen.get(value);
  if (known !== undefined) return known;
  if (Array.isArray(value)) {
    const out: unknown[] = [];
    seen.set(value, out);
    for (const item of value) out.push(deepRedact(item, rules, seen));
    return out;
  }
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) {
    // Class instances reach JSON through toJSON (our errors have one): redact what it yields.
    const toJSON = (value as { toJSON?: unknown }).toJSON;
    return typeof toJSON === 'function' ? deepRedact(toJSON.call(value), rules, seen) : value;
  }
  const out: Record<string, unknown> = {};
  seen.set(value, out);
  for (const key of Object.keys(value)) {
    if (key === '__proto__') continue;
    const item = (value as Record<string, unknown>)[key];
    out[key] = typeof item === 'string' && rules.isSecretKey(key) ? REDACTED : deepRedact(item, rules, seen);
  }
  return out;
}
