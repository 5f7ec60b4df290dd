#!/usr/bin/env node
// Exit codes: 0 done, 1 failed (one line on stderr; the stack only with --debug), 2 bad usage.
import { ActorloopError, ConfigurationError } from '../core/errors.ts';
import { USAGE, usageError } from './args.ts';
import { continueCommand, runCommand, type AgentCommandResult } from './commands/run.ts';
import { replayCommand } from './commands/replay.ts';
import { runsCommand } from './commands/runs.ts';
import { vizCommand } from './commands/viz.ts';
import { workerCommand } from './commands/worker.ts';
import { dbCommand } from './commands/db.ts';

const COMMANDS: Readonly<Record<string, (args: readonly string[]) => Promise<number | AgentCommandResult>>> = {
  run: runCommand,
  resume: (args) => continueCommand('resume', args),
  approve: (args) => continueCommand('approve', args),
  reject: (args) => continueCommand('reject', args),
  runs: runsCommand,
  replay: replayCommand,
  viz: vizCommand,
  worker: workerCommand,
  db: dbCommand,
};

async function main(argv: readonly string[]): Promise<number> {
  const [command, ...args] = argv;
  const debug = argv.includes('--debug');
  try {
    if (command === undefined) throw usageError('No command given.');
    if (command === '--help' || command === '-h' || command === 'help') {
      process.stdout.write(`${USAGE}\n`);
      return 0;
    }
    if (args.includes('--help') || args.includes('-h')) {
      process.stdout.write(`${USAGE}\n`);
      return 0;
    }
    // Own keys only: `constructor` or `toString` would otherwise find Object's and run it as a command.
    const handler = Object.hasOwn(COMMANDS, command) ? COMMANDS[command] : undefined;
    if (handler === undefined) throw usageError(`Unknown command "${command}".`);
    const outcome = await handler(args);
    if (typeof outcome === 'number') return outcome;
    await outcome.cleanup();
    return outcome.exitCode;
  } catch (error) {
    if (error instanceof ConfigurationError && error.code === 'usage') {
      process.stderr.write(`actorloop: ${error.message}\n\n${USAGE}\n`);
      return 2;
    }
    const message = error instanceof ActorloopError || error instanceof Error ? error.message : String(error);
    process.stderr.write(`actorloop: ${message}\n`);
    if (debug && error instanceof Error && error.stack !== undefined) process.stderr.write(`${error.stack}\n`);
    return 1;
  }
}

// A reader that stops early (`| head`) closes the pipe: not a failure of the command.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(0);
  throw error;
});

// Exit explicitly: a run parked for a human keeps its writer's timers, which would hold the process open.
const code = await main(process.argv.slice(2));
// Output to a full pipe is written later: exit once all of it is out, or a long replay piped on is cut short.
await Promise.all([process.stdout, process.stderr].map((stream) => new Promise<void>((resolve) => stream.write('', () => resolve()))));
process.exit(code);
