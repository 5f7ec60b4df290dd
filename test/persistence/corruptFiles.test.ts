/**
 * a log corrupt in the middle, empty or NUL-filled, and a corrupt, empty or
 * NUL-filled meta.json, each give a CorruptFileError naming the file. The file is left byte for
 * byte as it was (the log is also copied aside), nothing is replaced by defaults, and only a
 * missing run reads as "not found" / fresh.
 */
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createAgent, type Agent } from '../../src/agent/createAgent.ts';
import { ConfigurationError } from '../../src/core/errors.ts';
import { CorruptFileError } from '../../src/persistence/errors.ts';
import { createFileStore, type RunStore } from '../../src/persistence/fileStore.ts';
import { LOG_VERSION } from '../../src/persistence/records.ts';
import { scriptedModel } from '../../src/testing/index.ts';
import { echoScript, echoTool, interruptedRun, removeTempDirs, runFiles, tempDir } from './support.ts';

const agents: Agent[] = [];
afterEach(() => {
  for (const agent of agents.splice(0)) agent.stop();
});
afterAll(removeTempDirs);

function agentOn(store: RunStore, script = echoScript()) {
  const model = scriptedModel(script);
  const agent = createAgent({ id: 'agent_ref', model, tools: [echoTool()], persistence: { store } });
  agents.push(agent);
  return { agent, model };
}

function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error('expected a throw');
}

function expectCorrupt(error: unknown, file: string): CorruptFileError {
  expect(error).toBeInstanceOf(CorruptFileError);
  const corrupt = error as CorruptFileError;
  expect(corrupt.code).toBe('corrupt_file');
  expect(corrupt.file).toBe(file);
  expect(corrupt.message).toContain(file);
  return corrupt;
}

const corruptLogs: Array<[string, (lines: readonly string[]) => string | Buffer, number | undefined]> = [
  ['corrupt in the middle', (lines) => [lines[0], lines[1], `{"v":${LOG_VERSION},"kind":"event","entry":{"seq\n`, ...lines.slice(3)].join(''), 3],
  ['empty', () => '', undefined],
  ['NUL-filled', () => Buffer.alloc(4096, 0), undefined],
  ['whole but for a NUL-filled tail', (lines) => Buffer.concat([Buffer.from(lines.join('')), Buffer.alloc(512, 0)]), undefined],
];

describe('a corrupt log', () => {
  it.each(corruptLogs)('%s: CorruptFileError naming log.jsonl; the file is untouched and copied aside', async (_name, make, line) => {
    const crashed = await interruptedRun();
    const files = runFiles(crashed.store, crashed.runId);
    const lines = crashed.fullLines.slice(0, crashed.cutAt);
    writeFileSync(files.log, make(lines));
    const before = readFileSync(files.log);
    const metaBefore = readFileSync(files.meta);
    const { agent, model } = agentOn(crashed.store);

    const error = expectCorrupt(thrown(() => agent.resume(crashed.runId)), files.log);
    if (line !== undefined) expect(error.line).toBe(line);
    expect(readFileSync(files.log).equals(before)).toBe(true);
    expect(readFileSync(`${files.log}.corrupt`).equals(before)).toBe(true);
    expect(readFileSync(files.meta).equals(metaBefore)).toBe(true);
    expect(model.calls).toHaveLength(0);
    expect(existsSync(files.lock)).toBe(false); // the refused resume let go of the run

    expectCorrupt(thrown(() => crashed.store.readJournal(crashed.runId)), files.log);
    // Not replaced by a fresh run under the same id either.
    expect(() => agent.start('say hi', { runId: crashed.runId })).toThrow(ConfigurationError);
    expect(readFileSync(files.log).equals(before)).toBe(true);
    expect((await crashed.store.getRun(crashed.runId))?.status).toBe('running');
  });
});

describe('a finished run whose log was overwritten by NUL bytes', () => {
  it('is listed as corrupt, naming its log, and reading it says so: it does not vanish from the store', async () => {
    const store = createFileStore({ dir: tempDir() });
    const { agent } = agentOn(store, [{ text: 'hi' }]);
    // A given id: the run has a log of its own (a run the store names shares a segment, below).
    const { runId } = await agent.run('say hi', { runId: 'run_overwritten' });
    const files = runFiles(store, runId);
    writeFileSync(files.log, Buffer.alloc(statSync(files.log).size, 0));
    const listed = (await store.listRuns()).find((meta) => meta.runId === runId);
    expect(listed).toMatchObject({ status: 'corrupt', file: files.log, error: { code: 'corrupt_file' } });
    await expect(store.getRun(runId)).rejects.toSatisfy((error) => expectCorrupt(error, files.log) !== undefined);
  });
});

describe('a store path that is a file', () => {
  it('is refused by name instead of reading as an empty store', () => {
    const file = join(tempDir(), 'not-a-folder');
    writeFileSync(file, '');
    expect(() => createFileStore({ dir: file })).toThrow(ConfigurationError);
    expect(() => createFileStore({ dir: file })).toThrow(/is a file, not a folder/);
  });
});

const corruptMetas: Array<[string, string | Buffer]> = [
  ['truncated JSON', '{"v":1,"runId":"run_cra'],
  ['empty', ''],
  ['whitespace only', '  \n'],
  ['NUL-filled', Buffer.alloc(256, 0)],
];

describe('a corrupt meta.json', () => {
  it.each(corruptMetas)('%s: CorruptFileError naming meta.json; never replaced by defaults', async (_name, content) => {
    const crashed = await interruptedRun();
    const files = runFiles(crashed.store, crashed.runId);
    const good = readFileSync(files.meta);
    writeFileSync(files.meta, content);
    const before = readFileSync(files.meta);
    const logBefore = readFileSync(files.log);
    const { agent, model } = agentOn(crashed.store, [{ text: 'finished' }]);

    expectCorrupt(thrown(() => agent.resume(crashed.runId)), files.meta);
    await expect(crashed.store.getRun(crashed.runId)).rejects.toSatisfy((error) => expectCorrupt(error, files.meta) !== undefined);
    expect(() => agent.start('say hi', { runId: crashed.runId })).toThrow(ConfigurationError);
    // The index lists it as corrupt, naming the file, and invents no metadata for it.
    const listed = (await crashed.store.listRuns()).find((m) => m.runId === crashed.runId);
    expect(listed).toMatchObject({ status: 'corrupt', file: files.meta, error: { code: 'corrupt_file' } });
    expect(listed?.task).toBeUndefined();
    expect(readFileSync(files.meta).equals(before)).toBe(true);
    expect(readFileSync(files.log).equals(logBefore)).toBe(true);
    expect(existsSync(files.tmp)).toBe(false);
    expect(model.calls).toHaveLength(0);

    // Repaired by hand, the run resumes: the refusals left no lock and changed nothing.
    writeFileSync(files.meta, good);
    const result = await agent.resume(crashed.runId).settled;
    expect(result.status).toBe('done');
    expect(result.messages).toEqual(crashed.reference.messages);
  });
});

describe('a missing run', () => {
  it('is StoreError (run_not_found) to resume and read, null to look up, and fresh to start', async () => {
    const crashed = await interruptedRun();
    const { agent } = agentOn(crashed.store);
    const files = runFiles(crashed.store, 'run_missing');

    const error = thrown(() => agent.resume('run_missing'));
    expect(error).toMatchObject({ code: 'run_not_found' });
    expect(error).toMatchObject({ code: 'run_not_found', file: files.log });
    expect(() => crashed.store.readJournal('run_missing')).toThrow(expect.objectContaining({ code: 'run_not_found' }));
    await expect(crashed.store.getRun('run_missing')).resolves.toBeNull();

    const result = await agent.start('say hi', { runId: 'run_missing' }).settled;
    expect(result.status).toBe('done');
    expect((await crashed.store.getRun('run_missing'))?.status).toBe('done');
  });
});
