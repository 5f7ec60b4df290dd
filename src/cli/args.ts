import { parseArgs } from 'node:util';
import { ConfigurationError } from '../core/errors.ts';

/** The command line was wrong (`usage`): the caller prints the message and the usage, and exits 2. */
export function usageError(message: string): ConfigurationError {
  return new ConfigurationError(message, { code: 'usage' });
}

/** A command could not do what was asked (`cli`: no store, unknown run, run not waiting): exit 1. */
export function cliError(message: string): ConfigurationError {
  return new ConfigurationError(message, { code: 'cli' });
}

export const USAGE = `Usage: actorloop <command> [options]

Commands:
  run "<task>"            Run the demo agent (or your agent, with --agents) on a task
      --agents MODULE     Module whose default export (runtime, keep) => … returns your agents
      --agent NAME        Which of them (by id), when it returns several
      --max-iterations N  Demo agent: stop after N iterations
      --model NAME        Demo agent: model name for every call (real models only)
      --inspect           Demo agent: start the live view (an offline page on 127.0.0.1) and print its URL
      --confirm TOOLS     Demo agent: comma-separated tools whose calls wait for approve/reject
  runs                    List the runs (an interrupted one says how to resume it)
  replay <runId>          Print a run's journal as a timeline
      --follow            Keep reading until the run ends
  resume <runId>          Continue an interrupted or resumable run
  approve <runId>         Approve the calls a run is waiting on
      --answer JSON       The answer to an MCP server's question the run waits on (approving the waits before it)
  reject <runId>          Reject them
      --reason TEXT       Why (goes back to the model)
      --agents MODULE     The module of the run's agent (not needed for the demo agent's runs)
  viz                     Where the state machine diagrams are
      --print NAME        Print a machine's Mermaid diagram (e.g. agent)
  worker                  Advance durable runs kept in PostgreSQL
      --agents MODULE     Module whose default export (runtime, keep) => … defines the agents
      --concurrency N     Jobs at once (default 10)
      --database-url URL  The database (default DATABASE_URL)
  db migrate              Bring the database to this actorloop's schema
      --database-url URL  The database (default DATABASE_URL)

Options for every command:
  --store DIR             Run store folder (default .actorloop)
  --database-url URL      runs, replay, resume, approve, reject: runs kept in PostgreSQL
  --json                  Machine-readable output on stdout
  --debug                 Print stack traces of errors
  -h, --help              Show this help

A real model is used when OPENAI_API_KEY, OPENAI_BASE_URL or OPENROUTER_API_KEY is set,
else when ANTHROPIC_API_KEY is set; otherwise a scripted, offline model.`;

export interface CommonFlags {
  readonly store: string;
  readonly json: boolean;
  readonly debug: boolean;
}

type FlagSpec = Readonly<Record<string, { type: 'string' | 'boolean'; short?: string }>>;

const COMMON: FlagSpec = {
  store: { type: 'string' },
  json: { type: 'boolean' },
  debug: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
};

export interface ParsedCommand {
  readonly common: CommonFlags;
  readonly help: boolean;
  readonly positionals: readonly string[];
  string(name: string): string | undefined;
  flag(name: string): boolean;
}

/** A flag the command did not declare is a usage error (exit 2). */
export function parseCommand(args: readonly string[], flags: FlagSpec): ParsedCommand {
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({ args: [...args], options: { ...COMMON, ...flags }, allowPositionals: true, strict: true });
  } catch (error) {
    // parseArgs names the offending flag in its message; keep that, drop its hint about `--`.
    const message = error instanceof Error ? error.message.split('. To specify')[0] ?? error.message : String(error);
    throw usageError(message);
  }
  const values = parsed.values as Readonly<Record<string, string | boolean | undefined>>;
  const str = (name: string): string | undefined => {
    const value = values[name];
    return typeof value === 'string' ? value : undefined;
  };
  return {
    common: { store: str('store') ?? '.actorloop', json: values.json === true, debug: values.debug === true },
    help: values.help === true,
    positionals: parsed.positionals,
    string: str,
    flag: (name) => values[name] === true,
  };
}

export function onePositional(parsed: ParsedCommand, what: string, command: string): string {
  const [first, ...rest] = parsed.positionals;
  if (first === undefined || first === '') throw usageError(`actorloop ${command} needs <${what}>.`);
  if (rest.length > 0) throw usageError(`actorloop ${command} takes one <${what}>; got also "${rest.join(' ')}" (quote a task with spaces).`);
  return first;
}

export function positiveInt(value: string, flag: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw usageError(`${flag} needs a positive whole number; got "${value}".`);
  return n;
}
