/**
 * `actorloop replay --follow` and `runs` on a journal-only store's run (no lease to judge it by):
 * its header names the process writing it, so on the same host a follower tells when that process
 * is gone. A real child process runs the agent and is SIGKILLed while followed.
 */
import { execFile, spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killHard, spawnFixture } from '../persistence/support.ts';
import { MAIN, offlineEnv, runCli, tempDir, TSX_LOADER } from './runCli.ts';

const TIMEOUT = 180_000;

let temp: ReturnType<typeof tempDir>;
beforeAll(() => {
  temp = tempDir();
});
afterAll(() => temp.remove());

function follow(runId: string) {
  const child = spawn(process.execPath, ['--import', TSX_LOADER, MAIN, 'replay', runId, '--follow', '--store', temp.dir], { cwd: temp.dir, env: offlineEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
  const output = { stdout: '', stderr: '' };
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output.stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output.stderr += chunk));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, output, exited };
}

/** What a pipe holds on Linux: more output than this waits in the command for the reader. */
const PIPE_BYTES = 65_536;

/** `replay --follow` into a pipe its reader starts reading only 3 s on: what waited for the pipe must reach the reader too. */
function slowlyRead(runId: string): Promise<{ stdout: string; stderr: string }> {
  const replay = [process.execPath, '--import', TSX_LOADER, MAIN, 'replay', runId, '--follow', '--store', temp.dir].map((arg) => `'${arg}'`).join(' ');
  return new Promise((resolve, reject) => {
    execFile('sh', ['-c', `${replay} | (sleep 3; cat)`], { cwd: temp.dir, env: offlineEnv(), maxBuffer: 64 * 1024 * 1024, timeout: 100_000 }, (error, stdout, stderr) => (error === null ? resolve({ stdout, stderr }) : reject(error)));
  });
}

describe('a journal-only run whose process is killed', { timeout: TIMEOUT }, () => {
  // A run id given has a log of its own; one the store picks shares a journal segment.
  it.each([['its own log', 'journal_followed'], ['a journal segment', '-']])(
    'in %s: `replay --follow` ends with one line saying it was interrupted and cannot be resumed, exit 1, and `runs` lists it interrupted',
    async (_, given) => {
      const agent = spawnFixture('journalAgent.ts', [temp.dir, given]);
      let follower: ReturnType<typeof follow> | undefined;
      try {
        const runId = (await agent.waitFor((line) => line.startsWith('ready '), 60_000)).slice('ready '.length);
        follower = follow(runId);
        // It prints the run so far and waits for more while the process lives.
        await expect.poll(() => follower?.output.stdout ?? '', { timeout: 60_000 }).toMatch(/tool echo/);
        expect(follower.child.exitCode).toBeNull();
        await killHard(agent);

        const message = `run ${runId} was interrupted: the process running it is gone. Its store kept only the journal (mode 'journal'), so it cannot be resumed; start it again with a new run.\n`;
        const code = await Promise.race([follower.exited, new Promise<'still following'>((resolve) => setTimeout(() => resolve('still following'), 60_000))]);
        expect(code).toBe(1);
        expect(follower.output.stderr).toBe(message);
        // Followed after the process died: the same, at once, having printed all it wrote, to a reader slower than it.
        const late = await slowlyRead(runId);
        expect(late.stderr).toBe(message);
        expect(late.stdout.length).toBeGreaterThan(PIPE_BYTES);
        expect(late.stdout).toBe(follower.output.stdout);
        const listed = await runCli(['runs', '--json', '--store', temp.dir], temp.dir);
        expect(JSON.parse(listed.stdout)).toEqual(expect.arrayContaining([expect.objectContaining({ runId, status: 'interrupted', journalOnly: true })]));
        const table = await runCli(['runs', '--store', temp.dir], temp.dir);
        expect(table.stdout).toContain('interrupted (owner gone; journal only, cannot be resumed)');
      } finally {
        await killHard(agent);
        follower?.child.kill('SIGKILL');
      }
    },
    TIMEOUT,
  );
});
