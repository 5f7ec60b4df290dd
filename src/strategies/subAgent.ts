/**
 * One branch as a sub-agent: a real `createAgent` agent (full loop, with tools if configured)
 * run on the branch's prompt as a child actor of the branch. Its answer becomes the branch's
 * thought. Stopping the branch (the strategy ended, was cancelled or timed out) stops the run.
 */
import { createAgent, type Agent, type AgentConfig } from '../agent/createAgent.ts';
import { subAgentLogic } from '../agent/subAgentLogic.ts';
import { inheritInspect } from '../agent/config.ts';
import type { AgentObserveConfig } from '../agent/config.ts';
import type { LoopResult } from '../core/run.ts';
import type { JournalEntry } from '../core/loopEvent.ts';
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
 * The sub-agent of each branch: one `Agent` whose runs every branch is (its tools, gate and
 * journal), one agent config for all branches, or a factory returning an `Agent` or a config
 * per branch (e.g. a different scripted model per branch in tests). An agent built from a config
 * is stopped when its branch ends; an `Agent` you pass or return is left running.
 *
 * @example
 * ```ts
 * const subAgent: SubAgentSource = (branch) => ({ model: scriptedModel([{ text: answers[branch.id] }]) });
 * ```
 */
export type SubAgentSource = Agent | AgentConfig | ((branch: Branch, info: BranchInfo) => Agent | AgentConfig);

/** What a branch needs from the runner. @example `{ source: { model }, forward: (entry) => entries.push(entry) }` */
export interface BranchDeps {
  readonly source: SubAgentSource;
  /** Given to sub-agents built from a config that sets no `observe.inspect` of its own. */
  readonly inspect?: AgentObserveConfig['inspect'];
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
 * A branch as an actor: `subAgentMachine` provided with how this strategy run's branches pick
 * their agent, hook up its run and turn its result into a thought. A factory that throws, or a
 * run that fails, becomes an error thought (`metadata.error`): one bad branch never sinks the others.
 *
 * @example
 * ```ts
 * const branch = branchActor({ source: { model }, forward: (entry) => journal.push(entry) });
 * strategyMachine.provide({ actors: { branch, init, step, aggregate } });
 * ```
 */
export function branchActor(deps: BranchDeps) {
  return subAgentLogic((input) => {
    const request = input as StrategyBranchInput;
    const { branch } = request;
    const startedAt = Date.now();
    const made = typeof deps.source === 'function' ? deps.source(branch, { runId: request.runId, round: request.round, index: request.index }) : deps.source;
    const agent = isAgent(made) ? made : createAgent(inheritInspect(made, deps.inspect));
    let forwarding: { unsubscribe(): void } | undefined;
    return {
      prepared: agent.prepare(branch.prompt, { runId: `${request.runId}-r${request.round}-b${request.index}` }),
      attached: (run) => {
        forwarding = run.events$.subscribe({ next: deps.forward, error: () => undefined });
      },
      conclude: (result): StrategyBranchOutput => {
        forwarding?.unsubscribe();
        // An agent built for this branch goes with it; one the factory returned is left running.
        if (!isAgent(made)) agent.stop();
        return { thought: thoughtOf(branch, result), usage: result.usage, costUsd: result.costUsd, durationMs: Date.now() - startedAt, runId: result.runId };
      },
    };
  });
}
