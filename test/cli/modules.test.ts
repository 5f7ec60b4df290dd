/**
 * `actorloop run --agents MODULE` and the file-store commands on a user's agents, as child
 * processes: the module's agents run, are listed, and are continued with their own module; a run
 * whose process was SIGKILLed is listed as interrupted, `replay --follow` says so and ends, and
 * `resume` finishes it.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAIN, offlineEnv, runCli, tempDir, TSX_LOADER } from './runCli.ts';

const AGENTS = fileURLToPath(new URL('./fixtures/userAgents.ts', import.meta.url));
const ESCAPING = fileURLToPath(new URL('./fixtures/escapeAgents.ts', import.meta.url));
const TIMEOUT = 120_000;

let temp: ReturnType<typeof tempDir>;
beforeAll(() => {
  temp = tempDir();
});
afterAll(() => temp.remove());

interface Row {
  runId: string;
  status: string;
  task: string;
}

async function rows(): Promise<Row[]> {
  const listed = await runCli(['runs', '--json'], temp.dir);
  expect(listed.code).toBe(0);
  return JSON.parse(listed.stdout) as Row[];
}

describe('actorloop run --agents MODULE', { timeout: TIMEOUT }, () => {
  it('prints a final answer and a failure without the escape sequences they carried', async () => {
    const answered = await runCli(['run', '--agents', ESCAPING, '--agent', 'painter', 'paint'], temp.dir);
    expect(answered.code).toBe(0);
    expect(answered.stdout).toContain('answer: plain');
    expect(answered.stdout).not.toContain('\u001b');
    expect(answered.stdout).not.toContain('\u0007');
    const failed = await runCli(['run', '--agents', ESCAPING, '--agent', 'breaker', 'break'], temp.dir);
    expect(failed.code).toBe(1);
    expect(failed.stderr).toContain('upstream said');
    expect(failed.stderr).not.toContain('\u001b');
  });

  it('runs the named agent of a module in the store: its answer, its run listed and replayable', async () => {
    const { code, stdout, stderr } = await runCli(['run', '--agents', AGENTS, '--agent', 'echoer', 'say hello'], temp.dir);
    expect(stderr).toContain('agent "echoer" from');
    expect(code).toBe(0);
    expect(stdout).toContain('answer: The module says HELLO FROM THE MODULE');
    const run = (await rows()).find((row) => row.task === 'say hello');
    expect(run).toMatchObject({ status: 'done' });
    const replay = await runCli(['replay', run!.runId], temp.dir);
    expect(replay.stdout).toMatch(/tool shout → ok/);
  }, TIMEOUT);

  it('asks which agent when the module defines several, and names them when the name is unknown', async () => {
    const several = await runCli(['run', '--agents', AGENTS, 'anything'], temp.dir);
    expect(several.code).toBe(1);
    expect(several.stderr).toContain('defines 3 agents (echoer, deployer, sleeper): pick one with --agent NAME.');
    const unknown = await runCli(['run', '--agents', AGENTS, '--agent', 'nobody', 'anything'], temp.dir);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('has no agent "nobody"; it defines echoer, deployer, sleeper.');
    const demoFlag = await runCli(['run', '--agents', AGENTS, '--agent', 'echoer', '--confirm', 'shout', 'anything'], temp.dir);
    expect(demoFlag.code).toBe(2);
    expect(demoFlag.stderr).toContain('--confirm configures the demo agent');
  }, TIMEOUT);

  it('approves a waiting run of a module agent with its module; without it, refuses rather than continue it with the demo agent', async () => {
    const started = await runCli(['run', '--agents', AGENTS, '--agent', 'deployer', 'deploy it'], temp.dir);
    expect(started.code).toBe(0);
    const runId = /run (\S+) is waiting for a human/.exec(started.stdout)?.[1];
    expect(runId).toBeDefined();
    const withoutModule = await runCli(['approve', runId!], temp.dir);
    expect(withoutModule.code).toBe(1);
    expect(withoutModule.stderr).toContain(`Run ${runId} was made by agent "deployer", not the demo agent: give the module that defines it with --agents MODULE.`);
    const approved = await runCli(['approve', runId!, '--agents', AGENTS], temp.dir);
    expect(approved.code).toBe(0);
    expect(approved.stdout).toContain('answer: shipped');
  }, TIMEOUT);
});

describe('a run whose process was killed', { timeout: TIMEOUT }, () => {
  it('is listed as running while its process lives, as interrupted once it is SIGKILLed, and resume finishes it', async () => {
    const child = spawn(process.execPath, ['--import', TSX_LOADER, MAIN, 'run', '--agents', AGENTS, '--agent', 'sleeper', 'sleep on it'], {
      cwd: temp.dir,
      env: { ...offlineEnv(), BLOCK_TOOL: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    try {
      // The tool call has started: the run is on disk and its process is inside the call.
      await expect.poll(() => out, { timeout: 30_000 }).toMatch(/tool slow/);
      const live = (await rows()).find((row) => row.task === 'sleep on it');
      expect(live?.status).toBe('running');
      child.kill('SIGKILL');
      await exited;

      const runId = live!.runId;
      expect((await rows()).find((row) => row.runId === runId)?.status).toBe('interrupted');
      const table = await runCli(['runs'], temp.dir);
      expect(table.stdout).toContain(`interrupted (owner gone; resume with: actorloop resume ${runId})`);

      const resumed = await runCli(['resume', runId, '--agents', AGENTS], temp.dir);
      expect(resumed.code).toBe(0);
      expect(resumed.stdout).toContain('answer: woke up');
      expect((await rows()).find((row) => row.runId === runId)?.status).toBe('done');
    } finally {
      child.kill('SIGKILL');
    }
  }, TIMEOUT);

  it('ends `replay --follow` with one line saying it was interrupted and how to resume it, exit 1, whether it dies while followed or before', async () => {
    const cli = (args: readonly string[], env: NodeJS.ProcessEnv = {}) => {
      const child = spawn(process.execPath, ['--import', TSX_LOADER, MAIN, ...args], { cwd: temp.dir, env: { ...offlineEnv(), ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
      const output = { stdout: '', stderr: '' };
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output.stdout += chunk));
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output.stderr += chunk));
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      return { child, output, exited };
    };
    const run = cli(['run', '--agents', AGENTS, '--agent', 'sleeper', 'follow me'], { BLOCK_TOOL: '1' });
    let follower: ReturnType<typeof cli> | undefined;
    try {
      await expect.poll(() => run.output.stdout, { timeout: 30_000 }).toMatch(/tool slow/);
      const runId = (await rows()).find((row) => row.task === 'follow me')!.runId;
      follower = cli(['replay', runId, '--follow']);
      // It has printed the run so far and is waiting for more.
      await expect.poll(() => follower!.output.stdout, { timeout: 60_000 }).toMatch(/phase act/);
      run.child.kill('SIGKILL');
      await run.exited;

      const message = `run ${runId} was interrupted: the process running it is gone. Continue it with: actorloop resume ${runId}\n`;
      expect(await follower.exited).toBe(1);
      expect(follower.output.stderr).toBe(message);
      // Followed after the process died: the same, at once.
      const late = await runCli(['replay', runId, '--follow'], temp.dir);
      expect(late).toMatchObject({ code: 1, stderr: message });
      expect(late.stdout).toBe(follower.output.stdout);
      // A plain replay still just prints the journal.
      expect(await runCli(['replay', runId], temp.dir)).toMatchObject({ code: 0, stderr: '' });
    } finally {
      run.child.kill('SIGKILL');
      follower?.child.kill('SIGKILL');
    }
  }, TIMEOUT);
});
