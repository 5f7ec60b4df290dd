// One `--agents` module serves `worker`, `run` and `resume`; the latter two also need it to return its agents.
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Agent } from '../agent/types.ts';
import type { RunStore } from '../persistence/fileStore.ts';
import type { PostgresRuntime } from '../postgres/index.ts';
import { cliError } from './args.ts';

/** Where the command keeps runs, ready to spread into `createAgent`'s config. */
export type RunKeeping = { readonly runtime: PostgresRuntime } | { readonly persistence: { readonly store: RunStore } };

export type DefineAgents = (runtime: PostgresRuntime | undefined, keep: RunKeeping) => unknown;

/** `path` is relative to the working folder. */
export async function loadAgentsModule(path: string): Promise<DefineAgents> {
  let loaded: { default?: unknown };
  try {
    loaded = (await import(pathToFileURL(resolve(path)).href)) as { default?: unknown };
  } catch (error) {
    throw cliError(`Could not load the agents module ${path}: ${error instanceof Error ? error.message : String(error)}`);
  }
  const define = loaded.default;
  if (typeof define !== 'function') {
    throw cliError(`${path} must export by default a function (runtime, keep) => … that creates its agents with createAgent({ …, ...keep }).`);
  }
  return define as DefineAgents;
}

const isAgent = (value: unknown): value is Agent =>
  value !== null && typeof value === 'object' && typeof (value as { id?: unknown }).id === 'string' && typeof (value as { start?: unknown }).start === 'function';

/** The agents a module's default export returned: one agent, an array of them, or an object whose values are agents. */
function agentsOf(returned: unknown): Agent[] {
  if (isAgent(returned)) return [returned];
  const values = Array.isArray(returned) ? (returned as unknown[]) : returned !== null && typeof returned === 'object' ? Object.values(returned) : [];
  return values.filter(isAgent);
}

/** The agent whose id is `name`, or the module's only agent when no name is given. */
export async function defineAndPick(define: DefineAgents, path: string, runtime: PostgresRuntime | undefined, keep: RunKeeping, name: string | undefined): Promise<Agent> {
  const agents = agentsOf(await define(runtime, keep));
  if (agents.length === 0) {
    throw cliError(`${path} returned no agent: its default export must return the agents it creates (an agent, an array, or an object of them).`);
  }
  const ids = agents.map((agent) => agent.id).join(', ');
  if (name === undefined) {
    if (agents.length === 1) return agents[0] as Agent;
    throw cliError(`${path} defines ${agents.length} agents (${ids}): pick one with --agent NAME.`);
  }
  const found = agents.find((agent) => agent.id === name);
  if (found === undefined) throw cliError(`${path} has no agent "${name}"; it defines ${ids}.`);
  return found;
}
