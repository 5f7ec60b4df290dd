import { afterEach, describe, expect, it } from 'vitest';
import type { JsonValue } from '../../src/sessions/document.ts';
import { SESSION_LIMITS } from '../../src/sessions/document.ts';
import type { SessionTurn } from '../../src/sessions/handle.ts';
import { assistant, cleanUp, FAKE_KEY, openTracked, redactor, STORE_KINDS, user } from './support.ts';
import type { SessionError } from '../../src/sessions/errors.ts';

afterEach(cleanUp);

/** A value typed as JSON that is not: what a JavaScript caller or a careless cast can pass. */
const notJson = (value: unknown): JsonValue => value as JsonValue;

const cyclic = (): unknown => {
  const node: Record<string, unknown> = { name: 'loop' };
  node.self = node;
  return node;
};
const nested = (levels: number): unknown => {
  let value: unknown = 'bottom';
  for (let i = 0; i < levels; i++) value = [value];
  return value;
};

describe.each(STORE_KINDS)('$name', (kind) => {
  it('opens a session it has never seen as empty', async () => {
    const session = await openTracked(kind.place().store(), 'new-session');
    expect(session.id).toBe('new-session');
    expect(session.messages()).toEqual([]);
    expect(session.runs()).toEqual([]);
    expect(session.memory('notes').entries()).toEqual([]);
  });

  it('keeps appended turns and their runs, in order, for the next open of the session', async () => {
    const place = kind.place();
    const first = await openTracked(place.store(), 'chat');
    await first.appendTurn({ runId: 'run_1', messages: [user('hi'), assistant('hello')] });
    await first.appendTurn({ runId: 'run_2', messages: [user('how are you?'), assistant('fine')] });
    await first.close();

    const again = await openTracked(place.store(), 'chat');
    expect(again.messages()).toEqual([user('hi'), assistant('hello'), user('how are you?'), assistant('fine')]);
    expect(again.runs().map((r) => r.runId)).toEqual(['run_1', 'run_2']);
    expect(again.runs().every((r) => typeof r.at === 'number' && r.at > 0)).toBe(true);
  });

  it('keeps sessions with different ids apart', async () => {
    const store = kind.place().store();
    const a = await openTracked(store, 'a');
    const b = await openTracked(store, 'b');
    await a.appendTurn({ runId: 'run_a', messages: [user('for a')] });
    await b.memory('notes').set('k', 'for b');
    expect(b.messages()).toEqual([]);
    expect(a.memory('notes').get('k')).toBeUndefined();
  });

  it('hands out copies: changing what messages(), runs() or get() returned changes nothing stored', async () => {
    const session = await openTracked(kind.place().store(), 'copies');
    await session.appendTurn({ runId: 'run_1', messages: [user('original')] });
    await session.memory('notes').set('list', ['original']);
    const messages = session.messages();
    (messages[0] as { content: string }).content = 'changed';
    messages.push(user('extra'));
    session.runs().pop();
    (session.memory('notes').get('list') as string[]).push('changed');
    expect(session.messages()).toEqual([user('original')]);
    expect(session.runs()).toHaveLength(1);
    expect(session.memory('notes').get('list')).toEqual(['original']);
  });

  it('stores a copy of a memory value: changing the object after set changes nothing stored', async () => {
    const session = await openTracked(kind.place().store(), 'copy-in');
    const value = { steps: ['search'] };
    await session.memory('notes').set('plan', value);
    value.steps.push('changed');
    expect(session.memory('notes').get('plan')).toEqual({ steps: ['search'] });
  });

  it('refuses to append the same run twice, leaving its messages once', async () => {
    const session = await openTracked(kind.place().store(), 'twice');
    await session.appendTurn({ runId: 'run_1', messages: [user('once')] });
    const error = await session.appendTurn({ runId: 'run_1', messages: [user('once')] }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'session_run_recorded' });
    expect((error as SessionError).runId).toBe('run_1');
    expect(session.messages()).toEqual([user('once')]);
  });

  it.each([
    ['an empty run id', { runId: '', messages: [] }],
    ['a run id past the limit', { runId: 'r'.repeat(SESSION_LIMITS.runIdLength + 1), messages: [] }],
    ['a message with an unknown role', { runId: 'run_1', messages: [{ role: 'robot', content: 'x' }] }],
    ['messages that are not an array', { runId: 'run_1', messages: 'hi' }],
  ])('rejects a turn with %s with SessionError (session_invalid_turn), storing nothing', async (_name, turn) => {
    const session = await openTracked(kind.place().store(), 'bad-turns');
    await expect(session.appendTurn(turn as unknown as SessionTurn)).rejects.toMatchObject({ code: 'session_invalid_turn' });
    expect(session.messages()).toEqual([]);
    expect(session.runs()).toEqual([]);
  });

  it('keeps memory set and deleted across opens of the session', async () => {
    const place = kind.place();
    const first = await openTracked(place.store(), 'memory');
    const notes = first.memory('notes');
    await notes.set('plan', { steps: ['search', 'answer'], attempts: 2, done: false, note: null });
    await notes.set('language', 'French');
    await notes.set('gone', 1);
    expect(await notes.delete('gone')).toBe(true);
    expect(await notes.delete('never-set')).toBe(false);
    await first.close();

    const again = await openTracked(place.store(), 'memory');
    expect(again.memory('notes').entries()).toEqual([
      ['plan', { steps: ['search', 'answer'], attempts: 2, done: false, note: null }],
      ['language', 'French'],
    ]);
    expect(again.memory('notes').get('gone')).toBeUndefined();
  });

  it('keeps the same key in two namespaces as two values', async () => {
    const place = kind.place();
    const first = await openTracked(place.store(), 'namespaces');
    await first.memory('planner').set('state', 'planning');
    await first.memory('critic').set('state', 'reviewing');
    await first.memory('critic').delete('state');
    await first.memory('critic').set('other', 1);
    await first.close();

    const again = await openTracked(place.store(), 'namespaces');
    expect(again.memory('planner').get('state')).toBe('planning');
    expect(again.memory('critic').get('state')).toBeUndefined();
    expect(again.memory('critic').entries()).toEqual([['other', 1]]);
  });

  it.each([
    ['a function', () => 1, '$'],
    ['undefined', undefined, '$'],
    ['a BigInt', 10n, '$'],
    ['a symbol', Symbol('s'), '$'],
    ['NaN', Number.NaN, '$'],
    ['Infinity', Number.POSITIVE_INFINITY, '$'],
    ['a Date', new Date(0), '$'],
    ['a Map', new Map([['a', 1]]), '$'],
    ['a cycle', cyclic(), '$.self'],
    ['a nested function', { plan: { run: () => 1 } }, '$.plan.run'],
    ['undefined inside an array', ['a', undefined], '$[1]'],
    ['a sparse array', [1, , 3], '$[1]'], // eslint-disable-line no-sparse-arrays
    ['a __proto__ key', JSON.parse('{"ok":1,"__proto__":{"polluted":true}}') as unknown, '$.__proto__'],
    ['a constructor.prototype pair', { constructor: { prototype: {} } }, '$.constructor'],
    ['nesting past the limit', nested(SESSION_LIMITS.valueDepth + 1), `$${'[0]'.repeat(SESSION_LIMITS.valueDepth)}`],
    ['a value past the size limit', 'x'.repeat(SESSION_LIMITS.valueChars), '$'],
  ])('rejects %s as a memory value with SessionError (session_invalid_value) naming where, storing nothing', async (_name, value, path) => {
    const session = await openTracked(kind.place().store(), 'values');
    const notes = session.memory('notes');
    await notes.set('kept', 'before');
    const error = await notes.set('bad', notJson(value)).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'session_invalid_value' });
    expect((error as SessionError).path).toBe(path);
    expect((error as Error).message).toMatch(/JSON only/);
    expect(notes.entries()).toEqual([['kept', 'before']]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('accepts, and reads back, values at the depth limit and objects without a prototype', async () => {
    const place = kind.place();
    const session = await openTracked(place.store(), 'edges');
    const bare = Object.assign(Object.create(null) as Record<string, JsonValue>, { a: 1 });
    await session.memory('notes').set('deep', notJson(nested(SESSION_LIMITS.valueDepth)));
    await session.memory('notes').set('bare', bare);
    await session.close();
    const again = await openTracked(place.store(), 'edges');
    expect(again.memory('notes').get('deep')).toEqual(nested(SESSION_LIMITS.valueDepth));
    expect(again.memory('notes').get('bare')).toEqual({ a: 1 });
  });

  it.each([
    ['an empty key', ''],
    ['a key past the limit', 'k'.repeat(SESSION_LIMITS.keyLength + 1)],
    ['a __proto__ key', '__proto__'],
    ['a non-string key', 7],
  ])('rejects %s with SessionError (session_invalid_key)', async (_name, key) => {
    const session = await openTracked(kind.place().store(), 'keys');
    const notes = session.memory('notes');
    await expect(notes.set(key as string, 1)).rejects.toMatchObject({ code: 'session_invalid_key' });
    expect(() => notes.get(key as string)).toThrow(expect.objectContaining({ code: 'session_invalid_key' }));
    await expect(notes.delete(key as string)).rejects.toMatchObject({ code: 'session_invalid_key' });
  });

  it('rejects bad namespaces, and the constructor/prototype pair the file format refuses', async () => {
    const session = await openTracked(kind.place().store(), 'namespace-names');
    expect(() => session.memory('')).toThrow(expect.objectContaining({ code: 'session_invalid_key' }));
    expect(() => session.memory('n'.repeat(SESSION_LIMITS.namespaceLength + 1))).toThrow(expect.objectContaining({ code: 'session_invalid_key' }));
    expect(() => session.memory('__proto__')).toThrow(expect.objectContaining({ code: 'session_invalid_key' }));
    await expect(session.memory('constructor').set('prototype', 1)).rejects.toMatchObject({ code: 'session_invalid_key' });
    await session.memory('constructor').set('name', 1);
    expect(session.memory('constructor').get('name')).toBe(1);
  });

  it.each([
    ['an empty id', ''],
    ['a blank id', '   '],
    ['an id with a newline', 'a\nb'],
    ['an id past the limit', 'i'.repeat(SESSION_LIMITS.idLength + 1)],
    ['a non-string id', 42],
  ])('rejects %s with SessionError (session_invalid_id)', async (_name, id) => {
    await expect(kind.place().store().open(id as string)).rejects.toMatchObject({ code: 'session_invalid_id' });
  });

  it('refuses a second open of a held session with SessionError (session_locked), and opens it again once closed', async () => {
    const place = kind.place();
    const first = await openTracked(place.store(), 'held');
    await first.appendTurn({ runId: 'run_1', messages: [user('hi')] });
    const error = await place.store().open('held').catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'session_locked' });
    expect((error as SessionError).sessionId).toBe('held');
    expect((error as Error).message).toContain('"held"');
    await first.close();

    const again = await openTracked(place.store(), 'held');
    expect(again.messages()).toEqual([user('hi')]);
  });

  it('throws SessionError (session_closed) from every use of a closed handle, and closing twice is harmless', async () => {
    const session = await openTracked(kind.place().store(), 'closed');
    const notes = session.memory('notes');
    await session.close();
    await session.close();
    expect(() => session.messages()).toThrow(expect.objectContaining({ code: 'session_closed' }));
    expect(() => session.runs()).toThrow(expect.objectContaining({ code: 'session_closed' }));
    expect(() => session.memory('notes')).toThrow(expect.objectContaining({ code: 'session_closed' }));
    expect(() => notes.get('k')).toThrow(expect.objectContaining({ code: 'session_closed' }));
    expect(() => notes.entries()).toThrow(expect.objectContaining({ code: 'session_closed' }));
    await expect(notes.set('k', 1)).rejects.toMatchObject({ code: 'session_closed' });
    await expect(notes.delete('k')).rejects.toMatchObject({ code: 'session_closed' });
    await expect(session.appendTurn({ runId: 'run_1', messages: [] })).rejects.toMatchObject({ code: 'session_closed' });
  });

  it('finishes writes already made before close releases the session', async () => {
    const place = kind.place();
    const session = await openTracked(place.store(), 'pending');
    let settled = 0;
    const writes = [session.appendTurn({ runId: 'run_1', messages: [user('hi')] }), session.memory('notes').set('k', 'v')];
    for (const write of writes) void write.then(() => settled++);
    await session.close();
    expect(settled).toBe(2);
    const again = await openTracked(place.store(), 'pending');
    expect(again.messages()).toEqual([user('hi')]);
    expect(again.memory('notes').get('k')).toBe('v');
  });

  it('applies concurrent writes in call order, none lost', async () => {
    const place = kind.place();
    const session = await openTracked(place.store(), 'concurrent');
    await Promise.all(
      Array.from({ length: 10 }, (_, i) => [session.appendTurn({ runId: `run_${i}`, messages: [user(`turn ${i}`)] }), session.memory('counts').set(`k${i}`, i)]).flat(),
    );
    await session.close();
    const again = await openTracked(place.store(), 'concurrent');
    expect(again.messages().map((m) => m.content)).toEqual(Array.from({ length: 10 }, (_, i) => `turn ${i}`));
    expect(again.memory('counts').entries()).toHaveLength(10);
  });

  it('redacts secrets in messages, memory values and secret-named keys before keeping them', async () => {
    const place = kind.place({ redact: redactor() });
    const first = await openTracked(place.store(), 'secrets');
    await first.appendTurn({
      runId: 'run_1',
      messages: [user(`my key is ${FAKE_KEY}`), { role: 'assistant', content: null, toolCalls: [{ id: 'c1', name: 'call', arguments: JSON.stringify({ key: FAKE_KEY }) }] }],
    });
    await first.memory('auth').set('note', { text: `use ${FAKE_KEY}` });
    await first.memory('auth').set('apiKey', 'plain-looking-value');
    await first.close();

    const again = await openTracked(place.store(), 'secrets');
    const stored = JSON.stringify([again.messages(), again.memory('auth').entries()]);
    expect(stored).not.toContain(FAKE_KEY);
    expect(stored).not.toContain('plain-looking-value');
    expect(again.messages()[0]).toEqual(user('my key is [REDACTED]'));
    expect(again.memory('auth').get('apiKey')).toBe('[REDACTED]');
  });

  it('accepts a plain function as the redactor', async () => {
    const place = kind.place({ redact: <T>(value: T): T => JSON.parse(JSON.stringify(value).replaceAll('secret-word', '***')) as T });
    const session = await openTracked(place.store(), 'function-redactor');
    await session.appendTurn({ runId: 'run_1', messages: [user('the secret-word')] });
    expect(session.messages()).toEqual([user('the ***')]);
  });
});
