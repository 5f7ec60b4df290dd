/**
 * The live progress view of `actorloop run` on a terminal, through a pseudo-terminal made by
 * util-linux `script`, so stdout is a TTY as it is for a person at a shell.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { MAIN, offlineEnv, tempDir, TSX_LOADER } from './runCli.ts';

const SCRIPT = '/usr/bin/script';

let temp: ReturnType<typeof tempDir>;
beforeAll(() => {
  temp = tempDir();
});
afterAll(() => temp.remove());

it.skipIf(!existsSync(SCRIPT))(
  'redraws phase, iteration, tools in flight, tokens and cost on a terminal, then prints the answer',
  async () => {
    const command = [process.execPath, '--import', TSX_LOADER, MAIN, 'run', 'live view task'].map((part) => `'${part}'`).join(' ');
    const output = await new Promise<string>((done, fail) => {
      execFile(SCRIPT, ['-qfec', command, '/dev/null'], { cwd: temp.dir, env: offlineEnv() }, (error, stdout) => (error === null ? done(stdout) : fail(error)));
    });
    expect(output).toMatch(/iteration 1 · phase act/);
    for (const phase of ['hydrate', 'reason', 'gate', 'act', 'observe']) expect(output).toContain(`phase ${phase}`);
    expect(output).toMatch(/tools in flight: lookup_city/);
    expect(output).toMatch(/tokens \d+ · cost \$0\.000000/);
    expect(output).toContain('phase ended (final_answer)');
    expect(output).toContain('answer: Tokyo');
  },
  60_000,
);
