/**
 * The `actorloop` command end to end, as a child process: run, runs, replay, usage errors and
 * unknown runs (exit codes, what goes to stdout and stderr).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JournalEntry } from '../../src/core/loopEvent.ts';
import { runCli, tempDir } from './runCli.ts';

const ANSWER = 'Tokyo (37.12 M) and Paris (11.28 M) together have about 48.39 million people.';
const TIMEOUT = 60_000;

let temp: ReturnType<typeof tempDir>;
beforeAll(() => {
  temp = tempDir();
});
afterAll(() => temp.remove());

interface Row {
  runId: string;
  status: string;
  task: string;
  iterations: number;
  costUsd: number;
}

async function rows(): Promise<Row[]> {
  const listed = await runCli(['runs', '--json'], temp.dir);
  expect(listed.code).toBe(0);
  return JSON.parse(listed.stdout) as Row[];
}

describe('actorloop run', { timeout: 60_000 }, () => {
  it('runs the demo agent to its answer, one plain line per event when stdout is not a terminal, and exits 0', async () => {
    const { code, stdout } = await runCli(['run', 'combined population of Tokyo and Paris?'], temp.dir);
    expect(code).toBe(0);
    expect(stdout).toContain(`answer: ${ANSWER}`);
    expect(stdout).toMatch(/^\[0\] phase reason$/m);
    expect(stdout).toMatch(/^\[1\] tool lookup_city → ok in \d+ ms$/m);
  }, TIMEOUT);

  it('prints only journal entries with --json: every stdout line parses as a JournalEntry, from run.started to run.terminated', async () => {
    const { code, stdout } = await runCli(['run', 'json task', '--json'], temp.dir);
    expect(code).toBe(0);
    const entries = stdout.trimEnd().split('\n').map((line) => JournalEntry.parse(JSON.parse(line)));
    expect(entries[0]?.event.type).toBe('run.started');
    expect(entries.at(-1)?.event).toMatchObject({ type: 'run.terminated', reason: 'final_answer' });
  }, TIMEOUT);

  it('exits 1 with one line on stderr when the run fails (iteration limit)', async () => {
    const { code, stderr } = await runCli(['run', 'too short', '--max-iterations', '1'], temp.dir);
    expect(code).toBe(1);
    const failure = stderr.trimEnd().split('\n').filter((line) => line.startsWith('run '));
    expect(failure).toHaveLength(1);
    expect(failure[0]).toMatch(/failed \(max_iterations\)/);
  }, TIMEOUT);
});

describe('actorloop runs and replay', { timeout: 60_000 }, () => {
  it('lists the store runs with status, iterations and cost, as a table and as a --json array', async () => {
    const listed = await rows();
    const done = listed.find((row) => row.task === 'json task');
    expect(done).toMatchObject({ status: 'done', iterations: 4, costUsd: 0 });
    const table = await runCli(['runs'], temp.dir);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/^RUN\s+STATUS\s+ITER\s+COST\s+AGE\s+TASK$/m);
    expect(table.stdout).toContain(done!.runId);
  }, TIMEOUT);

  it('replays a run journal as a timeline of relative time, iteration and summary; --follow stops at its end', async () => {
    const runId = (await rows()).find((row) => row.task === 'json task')!.runId;
    const replay = await runCli(['replay', runId], temp.dir);
    expect(replay.code).toBe(0);
    const lines = replay.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^\+0\.000s\s+\[0\] run started: json task/);
    for (const line of lines) expect(line).toMatch(/^\+\d+\.\d{3}s\s+\[\d+\] /);
    expect(lines.at(-1)).toContain('run ended: final_answer after 4 iterations');
    const followed = await runCli(['replay', runId, '--follow'], temp.dir);
    expect(followed).toMatchObject({ code: 0, stdout: replay.stdout });
  }, TIMEOUT);
});

describe('actorloop bad input', { timeout: 60_000 }, () => {
  it.each([
    ['no command', []],
    ['an unknown command', ['launch']],
    ['an unknown command named like a property every object has', ['constructor']],
    ['an unknown command named like an inherited method', ['toString']],
    ['an unknown flag', ['runs', '--colour']],
    ['a run without a task', ['run']],
  ])('prints usage on stderr and exits 2 for %s', async (_what, args) => {
    const { code, stdout, stderr } = await runCli(args, temp.dir);
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toContain('Usage: actorloop <command>');
  }, TIMEOUT);

  it('prints one line without a stack trace and exits 1 for an unknown run id', async () => {
    const { code, stderr } = await runCli(['replay', 'run_nope'], temp.dir);
    expect(code).toBe(1);
    expect(stderr.trimEnd().split('\n')).toEqual([expect.stringMatching(/^actorloop: No run run_nope in .*actorloop runs/)]);
  }, TIMEOUT);

  it('prints one line and exits 1 when the store does not exist', async () => {
    const { code, stderr } = await runCli(['runs', '--store', 'missing-store'], temp.dir);
    expect(code).toBe(1);
    expect(stderr.trimEnd().split('\n')).toEqual([expect.stringMatching(/^actorloop: No run store at .*missing-store/)]);
  }, TIMEOUT);

  it('starts the live view with --inspect, prints its loopback URL, and still exits when the run ends', async () => {
    const { code, stderr, stdout } = await runCli(['run', 'What is the combined population of Tokyo and Paris?', '--inspect', '--model', 'gpt-demo'], temp.dir);
    expect(code).toBe(0);
    expect(stderr).toMatch(/inspector: http:\/\/127\.0\.0\.1:\d+\//);
    expect(stdout).toContain('answer');
  }, TIMEOUT);

  it('adds the stack trace to that line only with --debug', async () => {
    const { code, stderr } = await runCli(['replay', 'run_nope', '--debug'], temp.dir);
    expect(code).toBe(1);
    expect(stderr).toMatch(/^actorloop: No run run_nope/);
    expect(stderr).toMatch(/\n\s+at /);
  }, TIMEOUT);

  it('prints a machine diagram with viz --print, and lists the diagrams with viz', async () => {
    const printed = await runCli(['viz', '--print', 'agent'], temp.dir);
    expect(printed.code).toBe(0);
    expect(printed.stdout).toMatch(/^(stateDiagram-v2|flowchart)/m);
    const listed = await runCli(['viz'], temp.dir);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain('agent.svg');
  }, TIMEOUT);

  it('keeps stdout one JSON document with viz --json, printing or listing', async () => {
    const printed = await runCli(['viz', '--print', 'agent', '--json'], temp.dir);
    expect(printed.code).toBe(0);
    expect(JSON.parse(printed.stdout)).toEqual({ name: 'agent', mermaid: expect.stringMatching(/^(stateDiagram-v2|flowchart)/) });
    const listed = await runCli(['viz', '--json'], temp.dir);
    expect(listed.code).toBe(0);
    const parsed: unknown = JSON.parse(listed.stdout);
    expect(parsed).toMatchObject({ machines: expect.arrayContaining(['agent']), files: expect.arrayContaining(['agent.svg']) });
  }, TIMEOUT);
});
