/**
 * `actorloop approve` and `reject` as child processes: a run whose tool needs confirmation is
 * left waiting for a human by `run`, then decided by a second process that resumes it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, tempDir } from './runCli.ts';

const TIMEOUT = 60_000;

let temp: ReturnType<typeof tempDir>;
beforeAll(() => {
  temp = tempDir();
});
afterAll(() => temp.remove());

async function runWaiting(task: string): Promise<string> {
  const started = await runCli(['run', task, '--confirm', 'add'], temp.dir);
  expect(started.code).toBe(0);
  const runId = /run (\S+) is waiting for a human/.exec(started.stdout)?.[1];
  expect(runId).toBeDefined();
  return runId!;
}

describe('actorloop approve and reject', { timeout: 60_000 }, () => {
  it('leaves a run waiting for a human, lists it as awaiting_human, and approve finishes it; a second approve exits 1', async () => {
    const runId = await runWaiting('approve me');
    const listed = await runCli(['runs', '--json'], temp.dir);
    expect(JSON.parse(listed.stdout)).toContainEqual(expect.objectContaining({ runId, status: 'awaiting_human' }));

    const approved = await runCli(['approve', runId], temp.dir);
    expect(approved.code).toBe(0);
    expect(approved.stdout).toMatch(/human approved 1 call\(s\)/);
    expect(approved.stdout).toContain('answer: Tokyo');

    const again = await runCli(['approve', runId], temp.dir);
    expect(again.code).toBe(1);
    expect(again.stderr.trimEnd().split('\n')).toEqual([`actorloop: Run ${runId} is not waiting for a human (status done): there is nothing to approve.`]);
  }, TIMEOUT);

  it('reject sends the reason back to the model and the run goes on to its end', async () => {
    const runId = await runWaiting('reject me');
    const rejected = await runCli(['reject', runId, '--reason', 'no adding today'], temp.dir);
    expect(rejected.code).toBe(0);
    expect(rejected.stdout).toContain('human rejected 1 call(s): no adding today');
    expect(rejected.stdout).toContain('answer: ');
  }, TIMEOUT);
});
