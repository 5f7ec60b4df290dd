/** Unlike the inspector's `sanitize`, it never truncates or reshapes data: a redacted snapshot must still restore. */
import type { LoopEvent } from '../core/loopEvent.ts';
import { compileSecretRules, REDACTED, type SecretRuleOptions, type SecretRules } from './secrets.ts';
import { createStreamRedactor, type StreamRedactor } from './streamRedactor.ts';

/** Environment variables whose values are secrets wherever they appear. */
const SECRET_ENV = ['OPENAI_API_KEY', 'OPENROUTER_API_KEY', 'ANTHROPIC_API_KEY', 'OPENAI_ADMIN_KEY'] as const;

export interface Redactor {
  text(value: string): string;
  /** An event with its free-text fields redacted (a new object only when something changed). */
  event(event: LoopEvent): LoopEvent;
  /** Copy on write: only objects on the path to a secret are copied, and the input is never mutated. */
  deep<T>(value: T): T;
  /**
   * A scrubbed JSON copy of an object never changed once made (a conversation's message, a tool's definition),
   * made once per object and given again until a secret is added.
   */
  copy(value: unknown): unknown;
  /** For one streamed text (a reply's deltas): a secret split across deltas is redacted whole. */
  stream(): StreamRedactor;
  /** Treat `secret` as one from now on (a token obtained at run time); values under 4 characters are ignored. */
  addSecret(secret: string): void;
}

export function createRedactor(options: SecretRuleOptions = {}, env: NodeJS.ProcessEnv = process.env): Redactor {
  const fromEnv = SECRET_ENV.map((name) => env[name]).filter((v): v is string => typeof v === 'string' && v.length >= 8);
  const secrets = [...(options.secrets ?? []), ...fromEnv];
  let rules = sharedRules({ ...options, secrets });
  // Runs repeat the same short strings every iteration, so their verdicts are remembered per agent.
  let memo: ShortTextMemo | undefined;
  const text = (value: string): string => (memo ??= shortTextMemo(rules))(value);
  const deep = <T>(value: T): T => deepRedact(value, rules, (memo ??= shortTextMemo(rules)), 0, undefined) as T;
  // Durable runs store every model call's whole conversation: each message is copied and scrubbed once, not once per call.
  let copies = new WeakMap<object, unknown>();
  return {
    text,
    event: (event) => redactEvent(event, text),
    deep,
    copy(value) {
      if (value === null || typeof value !== 'object') return deep(value);
      let out = copies.get(value);
      if (out === undefined) {
        out = deep(JSON.parse(JSON.stringify(value)) as unknown);
        copies.set(value, out);
      }
      return out;
    },
    stream: () => createStreamRedactor(text, () => secrets),
    addSecret(secret) {
      if (secret.length < 4 || secrets.includes(secret)) return;
      secrets.push(secret);
      // Own rules, not the shared ones: a run-time token is this agent's alone.
      rules = compileSecretRules({ ...options, secrets });
      memo = undefined;
      copies = new WeakMap();
    },
  };
}

/** Rule sets already compiled, by what they were compiled from: agents built alike share one. */
const compiled = new Map<string, SecretRules>();
const MAX_COMPILED = 64;

function sharedRules(options: SecretRuleOptions): SecretRules {
  const key = JSON.stringify([
    (options.patterns ?? []).map((pattern) => [pattern.source, pattern.flags]),
    options.keys ?? [],
    options.secrets ?? [],
    options.replacement ?? null,
  ]);
  let rules = compiled.get(key);
  if (rules === undefined) {
    rules = compileSecretRules(options);
    if (compiled.size >= MAX_COMPILED) compiled.clear();
    compiled.set(key, rules);
  }
  return rules;
}

/** Strings up to this length are remembered; longer ones are scanned every time. */
const MEMO_MAX_LENGTH = 96;
/** Remembered strings before the memo starts over (bounds an agent's memory). */
const MEMO_MAX_ENTRIES = 1024;

type ShortTextMemo = (value: string) => string;

function shortTextMemo(rules: SecretRules): ShortTextMemo {
  const seen = new Map<string, string>();
  return (value) => {
    if (value === '') return value;
    if (value.length > MEMO_MAX_LENGTH) return rules.redactText(value);
    let out = seen.get(value);
    if (out === undefined) {
      out = rules.redactText(value);
      if (seen.size >= MEMO_MAX_ENTRIES) seen.clear();
      seen.set(value, out);
    }
    return out;
  };
}

/** An elicitation answer's text fields (a form holds primitives and string lists); the same object when nothing changed. */
function redactAnswer(answer: Record<string, unknown>, text: (value: string) => string): Record<string, unknown> {
  let changed = false;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(answer)) {
    const clean = typeof value === 'string' ? text(value) : Array.isArray(value) ? value.map((item: unknown) => (typeof item === 'string' ? text(item) : item)) : value;
    if (clean !== value && (typeof value === 'string' || JSON.stringify(clean) !== JSON.stringify(value))) changed = true;
    out[key] = clean;
  }
  return changed ? out : answer;
}

/** Only fields that can carry free text are scanned: the rest are ids, enums and numbers. */
function redactEvent(event: LoopEvent, text: (value: string) => string): LoopEvent {
  switch (event.type) {
    case 'run.started': {
      const task = text(event.task);
      return task === event.task ? event : { ...event, task };
    }
    case 'reasoning.completed': {
      const value = event.text === null ? null : text(event.text);
      const thought = event.reasoning === undefined ? undefined : text(event.reasoning);
      const toolCalls = sameOrNew(event.toolCalls, (call) => {
        const args = call.arguments === undefined ? undefined : text(call.arguments);
        return args === call.arguments ? call : { ...call, arguments: args };
      });
      if (value === event.text && thought === event.reasoning && toolCalls === event.toolCalls) return event;
      return { ...event, text: value, toolCalls, ...(thought === undefined ? {} : { reasoning: thought }) };
    }
    case 'observations.collected': {
      if (event.results === undefined) return event;
      const results = sameOrNew(event.results, (result) => {
        const content = text(result.content);
        return content === result.content ? result : { ...result, content };
      });
      return results === event.results ? event : { ...event, results };
    }
    // Redacted by their stream (`Redactor.stream`), which sees across deltas; alone, a delta may hold half a secret.
    case 'token.delta':
    case 'thinking.delta':
      return event;
    case 'human.awaiting': {
      if (event.question === undefined) return event;
      const message = text(event.question.message);
      return message === event.question.message ? event : { ...event, question: { ...event.question, message } };
    }
    case 'human.decided': {
      const reason = event.reason === undefined ? undefined : text(event.reason);
      const answer = event.answer === undefined ? undefined : redactAnswer(event.answer, text);
      if (reason === event.reason && answer === event.answer) return event;
      return { ...event, ...(reason === undefined ? {} : { reason }), ...(answer === undefined ? {} : { answer }) };
    }
    case 'policy.evaluated':
    case 'hook.completed': {
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

function sameOrNew<T>(items: T[], each: (item: T) => T): T[] {
  const mapped = items.map(each);
  return mapped.every((item, i) => item === items[i]) ? items : mapped;
}

/** Data a run persists is a few levels deep, so ancestors are tracked only below this depth; a cycle always gets this deep. */
const CYCLE_CHECK_DEPTH = 32;

function deepRedact(value: unknown, rules: SecretRules, text: ShortTextMemo, depth: number, ancestors: Set<object> | undefined): unknown {
  if (typeof value === 'string') return text(value);
  if (value === null || typeof value !== 'object') return value;
  let seen = ancestors;
  if (depth >= CYCLE_CHECK_DEPTH) {
    seen ??= new Set();
    if (seen.has(value)) return value;
    seen.add(value);
  }
  const next = depth + 1;
  let result: unknown = value;
  if (Array.isArray(value)) {
    let out: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      const clean = deepRedact(item, rules, text, next, seen);
      if (clean !== item && out === undefined) out = value.slice(0, i);
      out?.push(clean);
    }
    result = out ?? value;
  } else {
    const proto: unknown = Object.getPrototypeOf(value);
    if (proto !== Object.prototype && proto !== null) {
      // Class instances reach JSON through toJSON (our errors have one): redact what it yields.
      const toJSON = (value as { toJSON?: unknown }).toJSON;
      if (typeof toJSON === 'function') result = deepRedact(toJSON.call(value), rules, text, next, seen);
    } else {
      const keys = Object.keys(value);
      let out: Record<string, unknown> | undefined;
      for (let i = 0; i < keys.length; i++) {
        const key = keys[i] as string;
        const item = (value as Record<string, unknown>)[key];
        // A `__proto__` own key (from JSON.parse) is dropped: assigned, it would replace a prototype.
        const drop = key === '__proto__';
        const clean = drop ? undefined : typeof item === 'string' && rules.isSecretKey(key) ? REDACTED : deepRedact(item, rules, text, next, seen);
        if (out === undefined && (drop || clean !== item)) {
          out = {};
          for (let j = 0; j < i; j++) {
            const kept = keys[j] as string;
            out[kept] = (value as Record<string, unknown>)[kept];
          }
        }
        if (out !== undefined && !drop) out[key] = clean;
      }
      result = out ?? value;
    }
  }
  seen?.delete(value);
  return result;
}
