/**
 * persisted data is untrusted input. Records of another schema version, newer or from an
 * earlier pre-release, give StoreError (unsupported_version); schema-invalid records give
 * CorruptFileError; `__proto__` keys (and `constructor.prototype`) anywhere are refused before
 * any value reaches the program, so nothing is polluted.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent, type Agent } from '../../src/agent/createAgent.ts';
import { CorruptFileError } from '../../src/persistence/errors.ts';
import { createFileStore } from '../../src/persistence/fileStore.ts';
import { readRunLog } from '../../src/persistence/runLog.ts';
import { LOG_VERSION } from '../../src/persistence/records.ts';
import { safeJsonParse } from '../../src/persistence/safeJson.ts';
import { scriptedModel } from '../../src/testing/index.ts';
import { defineTool } from '../../src/tools/defineTool.ts';
import { echoTool, interruptedRun, removeTempDirs, runFiles, tempDir, type InterruptedRun } from './support.ts';

const agents: Agent[] = [];
afterEach(() => {
  for (const agent of agents.splice(0)) agent.stop();
  // Every test ends with the prototype as it was.
  expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  expect(Object.prototype.hasOwnProperty.call(Object.prototype, 'polluted')).toBe(false);
});
afterAll(removeTempDirs);

function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error('expected a throw');
}

/** Replace line `index` (0-based) of the interrupted run's log, or append when it is past the end. */
function withLine(crashed: InterruptedRun, index: number, line: string): string {
  const files = runFiles(crashed.store, crashed.runId);
  const lines = crashed.fullLines.slice(0, crashed.cutAt);
  lines.splice(index, index < lines.length ? 1 : 0, `${line}\n`);
  writeFileSync(files.log, lines.join(''));
  return files.log;
}

/** Resuming must refuse before using anything: the model is never called. */
function refusedResume(crashed: InterruptedRun): unknown {
  const model = scriptedModel([{ text: 'finished' }]);
  const agent = createAgent({ id: 'agent_ref', model, tools: [echoTool()], persistence: { store: crashed.store } });
  agents.push(agent);
  const error = thrown(() => agent.resume(crashed.runId));
  expect(model.calls).toHaveLength(0);
  return error;
}

const V = `"v":${LOG_VERSION}`;
const event = (extra = '') =>
  `{${V},"kind":"event","entry":{"sequence":99,"timestamp":1,"agentId":"a","runId":"run_crashed","iteration":0,"event":{"type":"phase.entered","phase":"reason"${extra}}}}`;
/** A gate reply whose one planned call has `args` as its parsed arguments. */
const gate = (args: string) => `{${V},"kind":"gate","iteration":1,"output":{"plan":[{"call":{"id":"c","name":"t","arguments":"{}"},"arguments":${args},"verdict":"run"}]}}`;

describe('records of another schema version', () => {
  it.each([
    ['in the middle', 2],
    ['as the last record', 99],
  ])('%s: StoreError (unsupported_version) naming the log, file untouched', async (_name, at) => {
    const crashed = await interruptedRun();
    const file = withLine(crashed, at, event().replace(V, `"v":${LOG_VERSION + 1}`));
    const before = readFileSync(file);
    const error = refusedResume(crashed);
    expect(error).toMatchObject({ code: 'unsupported_version' });
    expect(error).toMatchObject({ code: 'unsupported_version', file });
    expect((error as Error).message).toContain(file);
    expect(readFileSync(file).equals(before)).toBe(true);
  });

  it('from an earlier pre-release: StoreError (unsupported_version) saying so, to resume, read or list the run; the file untouched', async () => {
    const crashed = await interruptedRun();
    const { log, meta } = runFiles(crashed.store, crashed.runId);
    writeFileSync(log, readFileSync(log, 'utf8').replaceAll(`{${V},`, `{"v":${LOG_VERSION - 1},`));
    rmSync(meta); // the index reads the run from its log's header
    const before = readFileSync(log);
    const error = refusedResume(crashed);
    expect(error).toMatchObject({ code: 'unsupported_version' });
    expect(error).toMatchObject({ code: 'unsupported_version', file: log });
    expect((error as Error).message).toContain(`${log} line 1 has schema version ${LOG_VERSION - 1}; this actorloop reads version ${LOG_VERSION} only.`);
    expect((error as Error).message).toMatch(/written by an earlier pre-release of actorloop and cannot be read by this one/);
    expect(() => crashed.store.readJournal(crashed.runId)).toThrow(expect.objectContaining({ code: 'unsupported_version' }));
    expect(await crashed.store.listRuns()).toEqual([expect.objectContaining({ runId: crashed.runId, status: 'corrupt', file: log, error: expect.objectContaining({ code: 'unsupported_version' }) })]);
    expect(readFileSync(log).equals(before)).toBe(true);
  });

  it('in meta.json: StoreError (unsupported_version) naming meta.json', async () => {
    const crashed = await interruptedRun();
    const { meta } = runFiles(crashed.store, crashed.runId);
    writeFileSync(meta, readFileSync(meta, 'utf8').replace('"v":1', '"v":2'));
    const error = refusedResume(crashed);
    expect(error).toMatchObject({ code: 'unsupported_version' });
    expect(error).toMatchObject({ file: meta });
    await expect(crashed.store.getRun(crashed.runId)).rejects.toMatchObject({ code: 'unsupported_version' });
  });
});

describe('schema-invalid records', () => {
  it.each([
    ['a sequence that is not a number', event().replace('"sequence":99', '"sequence":"zero"')],
    ['an unknown record kind', `{${V},"kind":"telemetry","data":{}}`],
    ['an unknown event type', event().replace('"type":"phase.entered"', '"type":"run.exploded"')],
    ['a message with an unknown role', `{${V},"kind":"hydrate","output":{"inject":[{"role":"robot","content":"x"}]}}`],
    ['no version at all', event().replace(`${V},`, '')],
    ['an array', '[1,2,3]'],
    ['null', 'null'],
  ])('%s: CorruptFileError with its line number', async (_name, line) => {
    const crashed = await interruptedRun();
    const file = withLine(crashed, 2, line);
    const error = refusedResume(crashed);
    expect(error).toBeInstanceOf(CorruptFileError);
    expect(error).toMatchObject({ code: 'corrupt_file', file, line: 3 });
  });

  it('in meta.json: CorruptFileError naming meta.json', async () => {
    const crashed = await interruptedRun();
    const { meta } = runFiles(crashed.store, crashed.runId);
    writeFileSync(meta, readFileSync(meta, 'utf8').replace('"status":"running"', '"status":"exploded"'));
    expect(refusedResume(crashed)).toMatchObject({ code: 'corrupt_file', file: meta });
  });
});

const POLLUTING: Array<[string, string]> = [
  ['top level of a record', event().replace(`{${V},`, `{${V},"__proto__":{"polluted":"top"},`)],
  ['inside an event', event(',"__proto__":{"polluted":"event"}')],
  ['inside a message', `{${V},"kind":"hydrate","output":{"inject":[{"role":"user","content":"hi","__proto__":{"polluted":"message"}}]}}`],
  ['deep in tool arguments', gate('{"nested":[{"__proto__":{"polluted":"arguments"}}]}')],
  ['as constructor.prototype in tool arguments', gate('{"constructor":{"prototype":{"polluted":"ctor"}}}')],
  ['inside a tool result', `{${V},"kind":"call.finished","key":"k","outcome":{"__proto__":{"polluted":"outcome"},"toolCallId":"c","tool":"t","status":"ok","content":"","isError":false}}`],
];

describe('records with __proto__ keys', () => {
  it.each(POLLUTING)('%s: refused as corrupt before use', async (_name, line) => {
    const crashed = await interruptedRun();
    const file = withLine(crashed, 2, line);
    expect(refusedResume(crashed)).toMatchObject({ code: 'corrupt_file', file, line: 3 });
    expect(() => crashed.store.readJournal(crashed.runId)).toThrow(CorruptFileError);
    expect(() => readRunLog(file)).toThrow(/forbidden key/);
  });

  it('in meta.json: refused as corrupt', async () => {
    const crashed = await interruptedRun();
    const { meta } = runFiles(crashed.store, crashed.runId);
    writeFileSync(meta, readFileSync(meta, 'utf8').replace('{', '{"__proto__":{"polluted":"meta"},'));
    expect(refusedResume(crashed)).toMatchObject({ code: 'corrupt_file', file: meta });
    await expect(crashed.store.getRun(crashed.runId)).rejects.toBeInstanceOf(CorruptFileError);
    expect(await crashed.store.listRuns()).toEqual([expect.objectContaining({ runId: crashed.runId, status: 'corrupt', file: meta })]);
  });

  it('safeJsonParse refuses them at any depth', () => {
    expect(safeJsonParse('{"a":[{"b":{"__proto__":{"polluted":1}}}]}')).toEqual({ ok: false, reason: 'forbidden key "__proto__"' });
    expect(safeJsonParse('{"__proto__":null}').ok).toBe(false);
    expect(safeJsonParse('[{"x":{"constructor":{"prototype":{"polluted":1}}}}]')).toEqual({ ok: false, reason: 'forbidden key "constructor"' });
  });

  it('safeJsonParse refuses them spelled with escapes, however many other escapes the text has', () => {
    for (const key of ['\\u005f_proto__', '__pr\\u006fto__', '__PROTO__'.toLowerCase().replace('p', '\\u0070')]) {
      expect(safeJsonParse(`{"sep":"a\\u0000b","half":"\\ud83d","${key}":{"polluted":1}}`)).toEqual({ ok: false, reason: 'forbidden key "__proto__"' });
    }
    expect(safeJsonParse('{"c\\u006fnstructor":{"prototype":{}},"sep":"\\u0000"}')).toEqual({ ok: false, reason: 'forbidden key "constructor"' });
    expect(safeJsonParse('{"sep":"echo\\u0000{}","half":"\\ud83d"}')).toEqual({ ok: true, value: { sep: 'echo\u0000{}', half: '\ud83d' } });
  });
});

describe('harmless look-alikes', () => {
  it('keep ordinary keys named constructor or prototype', () => {
    expect(safeJsonParse('{"constructor":"Ada","prototype":{"v":2},"maker":{"constructor":{"name":"Bob"}},"proto":{"__proto":1}}')).toEqual({
      ok: true,
      value: { constructor: 'Ada', prototype: { v: 2 }, maker: { constructor: { name: 'Bob' } }, proto: { __proto: 1 } },
    });
  });

  it('a tool argument named prototype or constructor does not make the run unreadable', async () => {
    const store = createFileStore({ dir: tempDir() });
    const build = defineTool({
      name: 'build',
      description: 'Build from a prototype',
      input: z.object({ prototype: z.object({ size: z.number() }), constructor: z.object({ name: z.string() }) }),
      execute: ({ prototype, constructor }) => `${constructor.name} built size ${prototype.size}`,
    });
    const model = scriptedModel([{ toolCalls: [{ name: 'build', arguments: { prototype: { size: 3 }, constructor: { name: 'Ada' } } }] }, { text: 'built' }]);
    const agent = createAgent({ model, tools: [build], persistence: { store } });
    agents.push(agent);
    const result = await agent.start('build it', { runId: 'run_build' }).settled;
    expect(result.status).toBe('done');
    const { entries, warnings } = store.readJournal('run_build');
    expect(warnings).toEqual([]);
    expect(entries.at(-1)?.event).toMatchObject({ type: 'run.terminated', reason: 'final_answer' });
  });

  it('a model sending a "constructor" that holds "prototype" to a tool taking any object is told to rename it, and the run stays readable', async () => {
    const store = createFileStore({ dir: tempDir() });
    let saved = 0;
    const save = defineTool({ name: 'save', description: 'Save settings', input: z.object({ data: z.record(z.string(), z.unknown()) }), execute: () => `saved ${++saved}` });
    const model = scriptedModel([{ toolCalls: [{ name: 'save', arguments: { data: { constructor: { prototype: { a: 1 } } } } }] }, { text: 'gave up' }]);
    const agent = createAgent({ model, tools: [save], persistence: { store } });
    agents.push(agent);
    const result = await agent.start('save it', { runId: 'run_save' }).settled;
    expect(result.status).toBe('done');
    expect(saved).toBe(0);
    expect(result.messages.find((message) => message.role === 'tool')?.content).toContain('data.constructor: a key "constructor" holding a key "prototype" is not allowed');
    const { entries, warnings } = store.readJournal('run_save');
    expect(warnings).toEqual([]);
    expect(entries.at(-1)?.event).toMatchObject({ type: 'run.terminated', reason: 'final_answer' });
  });

  it('a structured answer holding "constructor" with "prototype" or "__proto__" is sent back for repair, and the run stays readable', async () => {
    for (const [i, bad] of ['{"maker":{"constructor":{"prototype":{"a":1}}}}', '{"maker":{"__proto__":{"a":1}}}'].entries()) {
      const store = createFileStore({ dir: tempDir() });
      const model = scriptedModel([{ text: bad }, { text: '{"maker":{"constructor":"Ada"}}' }]);
      const agent = createAgent({ model, tools: [], output: z.object({ maker: z.record(z.string(), z.unknown()) }), persistence: { store } });
      const result = await agent.start('Who made it?', { runId: `run_answer_${i}` }).settled;
      agent.stop();
      expect(result.status).toBe('done');
      expect(result.output).toEqual({ maker: { constructor: 'Ada' } });
      expect(model.calls).toHaveLength(2);
      const { entries, warnings } = store.readJournal(`run_answer_${i}`);
      expect(warnings).toEqual([]);
      expect(entries.at(-1)?.event).toMatchObject({ type: 'run.terminated', reason: 'final_answer' });
    }
  });
});
