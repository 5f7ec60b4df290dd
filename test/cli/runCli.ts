/**
 * Runs the `actorloop` command as a child process, from the repository's sources through tsx,
 * in a temp folder (where its default store goes), without any model key in the environment
 * so the scripted model answers.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

export const ROOT = resolve(import.meta.dirname, '..', '..');
export const MAIN = join(ROOT, 'src', 'cli', 'main.ts');
/** tsx's loader by file URL: `--import tsx` would resolve from the temp folder, which has no node_modules. */
export const TSX_LOADER = pathToFileURL(join(ROOT, 'node_modules', 'tsx', 'dist', 'loader.mjs')).href;

/** Longer than any command takes under load, shorter than the slowest test's timeout. */
const CHILD_TIMEOUT_MS = 100_000;

export interface CliResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** The environment minus model keys, so the scripted model is used, and minus DATABASE_URL, so commands read the file store. */
export function offlineEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(
    Object.entries(process.env).filter(([key]) => !key.startsWith('OPENAI_') && !key.startsWith('OPENROUTER_') && !key.startsWith('ANTHROPIC_') && key !== 'DATABASE_URL'),
  );
}

/**
 * Run `actorloop <args>` in `cwd`, with `env` added to the offline environment.
 *
 * @example
 * ```ts
 * const { code, stdout } = await runCli(['runs', '--json'], dir);
 * ```
 */
export function runCli(args: readonly string[], cwd: string, env: NodeJS.ProcessEnv = {}): Promise<CliResult> {
  return new Promise((done) => {
    // A command that hangs is killed rather than left behind when its test times out.
    const options = { cwd, env: { ...offlineEnv(), ...env }, timeout: CHILD_TIMEOUT_MS, killSignal: 'SIGKILL' as const };
    execFile(process.execPath, ['--import', TSX_LOADER, MAIN, ...args], options, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === 'number' ? error.code : 1;
      done({ code, stdout, stderr });
    });
  });
}

/** A fresh temp folder, and a function that removes it. */
export function tempDir(): { dir: string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'actorloop-cli-'));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
