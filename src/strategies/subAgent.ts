/**
 * One branch as a sub-agent: a real `createAgent` agent (full loop, with tools if configured)
 * started on the branch's prompt. Its answer becomes the branch's thought; a failed run becomes
 * an error thought (`metadata.error`), so one bad branch never sinks the others. The branch
 * actor's AbortSignal cancels the run.
 */
import type { AnyActorRef } from 'xstate';
import { createAgent, type Agent, type AgentConfig } from '../agent/createAgent.ts';
import type { LoopResult } from '../core/run.ts';
import { describeError } from '../core/errors.ts';
import type { JournalEntry } from '../core/loopEvent.ts';
import { ZERO_USAGE } from '../core/provider.ts';
import type { StrategyBranchInput, StrategyBranchOutput } from '../../machines/strategy.types.ts';
import type { Branch, Thought } from '../core/strategy.ts';

/** Where a branch is in its run. @example `{ runId: 'run-1', round: 2, index: 0 }` */
export interface BranchInfo {
  /** The strategy run's id. */
  readonly runId: string;
  readonly round: number;
  readonly index: number;
}

/**
 * The sub-agent of each branch: one agent config for all branches, or a factory returning an
 * `Agent` or a config per branch (e.g. a different scripted model per branch in tests). An agent
 * built from a config is stopped when its branch ends; an `Agent` you return is left running.
 *
 * @example
 * ```ts
 * const subAgent: SubAgentSource = (branch) => ({ model: scriptedModel([{ text: answers[branch.id] }]) });
 * ```
 */
export type SubAgentSource = AgentConfig | ((branch: Branch, info: BranchInfo) => Agent | AgentConfig);

/** What a branch needs from the runner. @example `{ source: { model }, forward: (entry) => entries.push(entry) }` */
export interface BranchDeps {
  readonly source: SubAgentSource;
  /** Given to sub-agents built from a config that sets no `inspect` of its own. */
  readonly inspect?: AgentConfig['inspect'];
  /** Receives every journal entry of the sub-agent's run. */
  readonly forward: (entry: JournalEntry) => void;
}

function isAgent(value: Agent | AgentConfig): value is Agent {
  return typeof (value as { start?: unknown }).start === 'function' && typeof (value as { run?: unknown }).run === 'function';
}

function thoughtOf(branch: Branch, result: LoopResult): Thought {
  const base = {
    id: branch.id,
    content: result.text ?? '',
    ...(branch.parentId === undefined ? {} : { parentId: branch.parentId }),
  };
  const metadata = { ...branch.metadata, runId: result.runId, agentId: result.agentId, iterations: result.iterations };
  if (result.status === 'done') return { ...base, metadata };
  return { ...base, metadata: { ...metadata, error: result.error?.message ?? `the sub-agent run ended with ${result.reason}`, reason: result.reason } };
}

/**
 * Run one branch to its end.
 *
 * @example
 * ```ts
 * const out = await runBranch({ runId: 'run-1', round: 1, index: 0, branch }, signal, { source: config, forward: journal });
 * out.thought.content; // the sub-agent's answer
 * ```
 */
export async function runBranch(input: StrategyBranchInput, signal: AbortSignal, deps: BranchDeps, self?: AnyActorRef): Promise<StrategyBranchOutput> {
  const startedAt = Date.now();
  const { branch } = input;
  const failed = (error: unknown): StrategyBranchOutput => ({
    thought: {
      id: branch.id,
      content: '',
      ...(branch.parentId === undefined ? {} : { parentId: branch.parentId }),
      metadata: { ...branch.metadata, error: describeError(error) },
    },
    usage: ZERO_USAGE,
    durationMs: Date.now() - startedAt,
  });
  if (signal.aborted) throw signal.reason;

  let agent: Agent;
  let owned = false;
  try {
    const made = typeof deps.source === 'function' ? deps.source(branch, { runId: input.runId, round: input.round, index: input.index }) : deps.source;
    if (isAgent(made)) agent = made;
    else {
      agent = createAgent(made.inspect === undefined && deps.inspect !== undefined ? { ...made, inspect: deps.inspect } : made);
      owned = true;
    }
  } catch (error) {
    return failed(error);
  }

  try {
    // The sub-agent's run joins the runner's actor system as a child of this branch's actor.
    const handle = agent.start(branch.prompt, { runId: `${input.runId}-r${input.round}-b${input.index}`, ...(self === undefined ? {} : { parent: self }) });
    const forwarding = handle.events$.subscribe({ next: deps.forward, error: () => undefined });
    const onAbort = () => handle.cancel('the strategy stopped this branch');
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      const result = await handle.settled;
      if (signal.aborted) throw signal.reason;
      return { thought: thoughtOf(branch, result), usage: result.usage, costUsd: result.costUsd, durationMs: Date.now() - startedAt };
    } finally {
      signal.removeEventListener('abort', onAbort);
      forwarding.unsubscribe();
    }
  } catch (error) {
    if (signal.aborted) throw error;
    return failed(error);
  } finally {
    if (owned) agent.stop();
  }
}
