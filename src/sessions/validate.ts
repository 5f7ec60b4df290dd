/** Values are checked against what the file can hold and read back: one the safe JSON reader refuses would make the whole session unreadable. */
import { createHash } from 'node:crypto';
import type { z } from 'zod';
import { Message } from '../core/messages.ts';
import { JsonValue, SESSION_LIMITS } from './document.ts';
import { SessionError } from './errors.ts';

/** An id is printed in messages and logs, where control characters could forge lines. */
const CONTROL = /\p{Cc}/u;

const typeName = (value: unknown): string => (value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value);

export function checkSessionId(id: unknown): asserts id is string {
  const problem =
    typeof id !== 'string'
      ? `must be a string, got ${typeName(id)}`
      : id.trim() === ''
        ? 'must not be empty or blank'
        : id.length > SESSION_LIMITS.idLength
          ? `is ${id.length} characters long; the limit is ${SESSION_LIMITS.idLength}`
          : CONTROL.test(id)
            ? 'must not contain control characters (newlines, tabs, NUL…)'
            : undefined;
  if (problem !== undefined) {
    throw new SessionError('session_invalid_id', `A session id ${problem}. Use printable text such as a user or conversation id, e.g. "support-42".`);
  }
}

/**
 * A readable slug of the redacted id (so no secret lands in a name), then a hash of the exact id,
 * which keeps distinct ids apart whatever their case, separators or script.
 */
export function sessionFileName(id: string, redactText: (text: string) => string): string {
  checkSessionId(id);
  // UTF-16 code units, not UTF-8: two ids differing only in a lone surrogate stay distinct.
  const hash = createHash('sha256').update(Buffer.from(id, 'utf16le')).digest('hex').slice(0, 32);
  const slug = redactText(id)
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+/, '')
    .slice(0, 40)
    .replace(/-+$/, '');
  return `${slug === '' ? 'session' : slug}-${hash}.json`;
}

export function checkMemoryName(kind: 'namespace' | 'key', name: unknown, sessionId: string): asserts name is string {
  const limit = kind === 'namespace' ? SESSION_LIMITS.namespaceLength : SESSION_LIMITS.keyLength;
  const problem =
    typeof name !== 'string'
      ? `must be a string, got ${typeName(name)}`
      : name === ''
        ? 'must not be empty'
        : name.length > limit
          ? `is ${name.length} characters long; the limit is ${limit}`
          : name === '__proto__'
            ? 'must not be "__proto__" (the session file format refuses it)'
            : undefined;
  if (problem !== undefined) {
    throw new SessionError('session_invalid_key', `Session "${sessionId}": a memory ${kind} ${problem}. Use a short descriptive name such as "plan".`, { sessionId });
  }
}

export function checkMemoryValue(value: unknown, key: string, sessionId: string): asserts value is JsonValue {
  const fail = (path: string, problem: string): never => {
    throw new SessionError('session_invalid_value', 
      `Session "${sessionId}": memory value of "${key}" is not storable: ${path} ${problem}. ` +
        'Memory holds JSON only: strings, finite numbers, booleans, null, arrays and plain objects.',
      { sessionId, path },
    );
  };
  const problem = nonJson(value, '$', 0, key, new Set());
  if (problem !== undefined) fail(problem.path, problem.reason);
  // The walk above explains; zod's JSON schema is the rule itself.
  if (!JsonValue.safeParse(value).success) fail('$', 'fails the JSON schema');
  const chars = JSON.stringify(value).length;
  if (chars > SESSION_LIMITS.valueChars) {
    fail('$', `is ${chars} characters as JSON; the limit is ${SESSION_LIMITS.valueChars} (store a summary or a reference instead)`);
  }
}

function nonJson(value: unknown, path: string, depth: number, key: string, ancestors: Set<object>): { path: string; reason: string } | undefined {
  const at = (reason: string) => ({ path, reason });
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return undefined;
    case 'number':
      return Number.isFinite(value) ? undefined : at(`is ${String(value)}, which JSON cannot represent`);
    case 'undefined':
      return at('is undefined (store null, or delete the key)');
    case 'bigint':
      return at('is a BigInt (store it as a string)');
    case 'function':
    case 'symbol':
      return at(`is a ${typeof value}`);
  }
  if (value === null) return undefined;
  const object = value as object;
  if (depth >= SESSION_LIMITS.valueDepth) return at(`is nested more than ${SESSION_LIMITS.valueDepth} levels deep`);
  if (ancestors.has(object)) return at('refers back to itself (a cycle)');
  // The safe JSON reader refuses this pair wherever it appears: a deep merge would follow it.
  if (key === 'constructor' && Object.hasOwn(object, 'prototype')) return at('is a "constructor" object with a "prototype" key, which the session file refuses');
  if (Object.getOwnPropertySymbols(object).length > 0) return at('has symbol keys');
  ancestors.add(object);
  try {
    if (Array.isArray(object)) {
      for (let i = 0; i < object.length; i++) {
        if (!(i in object)) return { path: `${path}[${i}]`, reason: 'is an empty slot of a sparse array' };
        const found = nonJson(object[i], `${path}[${i}]`, depth + 1, String(i), ancestors);
        if (found !== undefined) return found;
      }
      return undefined;
    }
    const proto: unknown = Object.getPrototypeOf(object);
    if (proto !== Object.prototype && proto !== null) {
      const name = (object as { constructor?: { name?: unknown } }).constructor?.name;
      return at(`is ${typeof name === 'string' && name !== '' ? `a ${name}` : 'a class instance'}, not a plain object (convert it first, e.g. date.toISOString())`);
    }
    for (const [name, item] of Object.entries(object)) {
      const child = /^[A-Za-z_$][\w$]*$/.test(name) ? `${path}.${name}` : `${path}[${JSON.stringify(name)}]`;
      if (name === '__proto__') return { path: child, reason: 'is a "__proto__" key, which the session file refuses' };
      const found = nonJson(item, child, depth + 1, name, ancestors);
      if (found !== undefined) return found;
    }
    return undefined;
  } finally {
    ancestors.delete(object);
  }
}

/** Unknown message fields are dropped, as the message schema does everywhere. */
export function checkTurn(turn: unknown, sessionId: string): { runId: string; messages: Message[] } {
  const fail = (problem: string): never => {
    throw new SessionError('session_invalid_turn', `Session "${sessionId}": a turn ${problem}. Pass { runId, messages } with the run's id and the messages it added.`, { sessionId });
  };
  if (turn === null || typeof turn !== 'object') return fail(`must be an object, got ${typeName(turn)}`);
  const { runId, messages } = turn as { runId?: unknown; messages?: unknown };
  if (typeof runId !== 'string' || runId === '') return fail('needs a non-empty string runId');
  if (runId.length > SESSION_LIMITS.runIdLength) return fail(`has a runId of ${runId.length} characters; the limit is ${SESSION_LIMITS.runIdLength}`);
  const parsed = MessageList.safeParse(messages);
  if (!parsed.success) return fail(`has messages that are not conversation messages (${describeIssues(parsed.error)})`);
  return { runId, messages: parsed.data };
}

/** A custom redactor must keep them messages. */
export function checkRedactedMessages(messages: unknown, sessionId: string): Message[] {
  const parsed = MessageList.safeParse(messages);
  if (parsed.success) return parsed.data;
  throw new SessionError('session_invalid_turn', `Session "${sessionId}": the redactor returned messages that are not conversation messages (${describeIssues(parsed.error)}). Make redact keep the shape of what it is given.`, { sessionId });
}

const MessageList = Message.array();

function describeIssues(error: z.ZodError): string {
  return error.issues
    .slice(0, 3)
    .map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`)
    .join('; ');
}
