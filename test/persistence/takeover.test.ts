/**
 * Who may resume a run: a writer on another host whose lease has expired is taken over, a live
 * one is not unless forced; a forced takeover says so in the run's journal, and the writer it
 * was taken from stops writing. A run killed before it recorded anything but its start resumes
 * from there.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent, type Agent } from '../../src/agent/createAgent.ts';
import { createFileStore } from '../../src/persistence/fileStore.ts';
import { scriptedModel } from '../../src/testing/index.ts';
import type { ScriptStep } from '../../src/testing/scriptStep.ts';
import { defineTool } from '../../src/tools/defineTool.ts';
import type { Tool } from '../../src/tools/types.ts';
import { echoScript, echoTool, killHard, removeTempDirs, runFiles, spawnFixture, tempDir, type Child } from './support.ts';

const children: Child[] = [];
const agents: Agent[] = [];
afterEach(async () => {
  for (const agent of agents.splice(0)) agent.stop();
  await Promise.all(children.splice(0).map(killHard));
});
afterAll(removeTempDirs);

function agentOn(dir: string, script: readonly ScriptStep[] = [{ text: 'finished' }], tools: readonly Tool[] = [echoTool()]): Agent {
  const agent = createAgent({ id: 'agent_ref', model: scriptedModel(script), tools, persistence: { store: createFileStore({ dir }) } });
  agents.push(agent);
  return agent;
}

/** A finished reference run's log, cut after its first `upTo` line: what a crash there leaves. */
async function cutRun(runId: string, upTo: (line: string) => boolean): Promise<{ dir: string; reference: Awaited<ReturnType<Agent['run']>> }> {
  const referenceDir = tempDir();
  const reference = await agentOn(referenceDir, echoScript()).start('say hi', { runId }).settled;
  const lines = readFileSync(runFiles(createFileStore({ dir: referenceDir }), runId).log, 'utf8').split(/(?<=\n)/);
  const dir = tempDir();
  const store = createFileStore({ dir });
  const files = runFiles(store, runId);
  store.createRun({ runId: 'run_other', agentId: 'x', task: 'make runs/' });
  writeFileSync(files.log, lines.slice(0, lines.findIndex(upTo) + 1).join(''));
  return { dir, reference };
}

describe('a run written on another host', () => {
  it('is taken over once its lease has expired, and not while it is live', async () => {
    const { dir } = await cutRun('run_elsewhere', (line) => line.includes('"kind":"gate"'));
    const files = runFiles(createFileStore({ dir }), 'run_elsewhere');
    writeFileSync(files.log, readFileSync(files.log, 'utf8').replace(/"owner":\{[^}]*\}/, '"owner":{"pid":4242,"host":"a-replaced-container"}'));
    const store = createFileStore({ dir, leaseMs: 30_000 });
    // Its writer renewed the lease just now (the log was written a moment ago): live.
    expect(() => store.resumeRun('run_elsewhere')).toThrow(/process 4242 on host a-replaced-container.*takeover: true/);
    // A minute later without renewal, it has expired.
    const aMinuteAgo = Date.now() / 1000 - 60;
    utimesSync(files.log, aMinuteAgo, aMinuteAgo);
    const resumed = await agentOn(dir).resume('run_elsewhere').settled;
    expect(resumed).toMatchObject({ status: 'done', text: 'finished' });
  });
});

describe('a forced takeover', () => {
  it('takes a live run, names the writer it took it from, and that writer stops writing', { timeout: 60_000 }, async () => {
    const dir = tempDir();
    // The child renews its lease every 0.5 s, so it notices the takeover quickly.
    const child = spawnFixture('agentProcess.ts', [dir, 'run_forced', 'block', '1500']);
    children.push(child);
    await child.waitFor((line) => line === 'ready');
    const waitRuns: string[] = [];
    const wait = defineTool({ name: 'wait', description: 'Wait', input: z.object({}), execute: () => (waitRuns.push('ran'), 'released') });
    const agent = agentOn(dir, [{ text: 'finished' }], [wait]);

    expect(() => agent.resume('run_forced')).toThrow(expect.objectContaining({ code: 'run_locked' }));
    const handle = agent.resume('run_forced', { takeover: true });
    const result = await handle.settled;
    expect(result).toMatchObject({ status: 'done', text: 'finished' });
    expect(waitRuns).toEqual(['ran']);
    // The child's run ended when its lease renewal found the run taken; it wrote nothing more.
    await child.waitFor((line) => line === 'ended cancelled', 20_000);
    const entries = createFileStore({ dir }).readJournal('run_forced').entries;
    expect(entries.map((e) => e.sequence)).toEqual(entries.map((_, i) => i));
    // The hydrate, reason and gate replies it replayed; the call the child was making it made again.
    const resumed = entries.filter((e) => e.event.type === 'run.resumed');
    expect(resumed.map((e) => e.event)).toEqual([{ type: 'run.resumed', replayed: 3, tookOver: { pid: child.process.pid, host: expect.any(String) } }]);
    expect(entries.filter((e) => e.event.type === 'run.terminated')).toHaveLength(1);
    expect(entries.at(-1)?.event).toMatchObject({ type: 'run.terminated', reason: 'final_answer' });
  });
});

describe('a run killed before it recorded a step', () => {
  it('resumes from its start record: the whole task, from the beginning', async () => {
    const { dir, reference } = await cutRun('run_started', (line) => line.includes('"kind":"start"'));
    const executions: string[] = [];
    const resumed = await agentOn(dir, echoScript(), [echoTool(executions)]).resume('run_started').settled;
    expect(resumed).toMatchObject({ status: 'done', text: reference.text, iterations: 2 });
    expect(resumed.messages).toEqual(reference.messages);
    expect(executions).toHaveLength(1);
  });

  it('with nothing but its header (its start record torn away): from the task the header holds', async () => {
    const { dir } = await cutRun('run_header_only', (line) => line.includes('"kind":"run"'));
    const { log } = runFiles(createFileStore({ dir }), 'run_header_only');
    // Its writer: a process of this host that has exited (the fixture's own pid may be alive here).
    const gone = spawnSync(process.execPath, ['-e', '']).pid;
    writeFileSync(log, readFileSync(log, 'utf8').replace(/"owner":\{[^}]*\}/, JSON.stringify({ owner: { pid: gone, host: hostname() } }).slice(1, -1)));
    const resumed = await agentOn(dir, echoScript()).resume('run_header_only').settled;
    expect(resumed).toMatchObject({ status: 'done', text: 'finished' });
    expect(resumed.messages[0]).toEqual({ role: 'user', content: 'say hi' });
  });
});
