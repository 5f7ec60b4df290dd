/**
 * Runs persisted before the agent machine had one `phases` worker held the phase in flight as an
 * invoked promise actor named after it. Such a log, killed in `gate`, resumes through the store
 * into the same phase and ends as the uninterrupted run did.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { createAgent } from '../../src/agent/createAgent.ts';
import { scriptedModel } from '../../src/testing/index.ts';
import { echoTool, interruptedRun, removeTempDirs, runFiles } from './support.ts';

afterAll(removeTempDirs);

type Json = Record<string, unknown>;

/** The log with each snapshot's `phases` worker rewritten as the earlier layout's promise actor. */
function toEarlierLayout(text: string): { text: string; rewritten: number } {
  let rewritten = 0;
  const lines = text.split('\n').map((line) => {
    if (!line.includes('"kind":"snapshot"')) return line;
    const record = JSON.parse(line) as { snapshot: { children?: Record<string, { snapshot: { job?: { phase: string; input: Json } | null } }> } };
    const worker = record.snapshot.children?.['phases'];
    const job = worker?.snapshot.job;
    if (job === undefined || job === null) return line;
    rewritten++;
    record.snapshot.children = {
      [`0.agent.running.${job.phase}`]: { src: job.phase, syncSnapshot: false, snapshot: { status: 'active', input: job.input } } as never,
    };
    return JSON.stringify(record);
  });
  return { text: lines.join('\n'), rewritten };
}

describe('a run persisted with a promise actor per phase', () => {
  it('resumes through the store into the phase it was in, and ends as the uninterrupted run', async () => {
    const crashed = await interruptedRun('run_earlier_layout', { version: 5 });
    const files = runFiles(crashed.store, crashed.runId);
    const { text, rewritten } = toEarlierLayout(readFileSync(files.log, 'utf8'));
    expect(rewritten).toBeGreaterThan(0);
    expect(text).toContain('"src":"gate"');
    expect(text).not.toContain('"src":"phases"');
    writeFileSync(files.log, text);

    const executions: string[] = [];
    const agent = createAgent({ id: 'agent_ref', model: scriptedModel([{ text: 'finished' }]), tools: [echoTool(executions)], persistence: { store: crashed.store } });
    const run = agent.resume(crashed.runId);
    expect(run.phase()).toBe('gate');
    expect(Object.keys(run.actor.getSnapshot().children)).toEqual(['phases']);
    const result = await run.settled;
    expect(result.status).toBe('done');
    expect(result.text).toBe('finished');
    expect(result.messages).toEqual(crashed.reference.messages);
    // Its one call, made again under a key from what the call is (iteration 1, first call, echo).
    expect(executions).toHaveLength(1);
    expect(executions[0]).toMatch(new RegExp(`^${crashed.runId}:1:0:echo:[\\w-]{22}$`));
  });
});
