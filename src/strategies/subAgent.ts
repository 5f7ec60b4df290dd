// The sub-agent's run is a child actor of the branch, so stopping the branch (end, cancel, timeout) stops the run.
import { createAgent, type Agent, type AgentConfig, type AgentRun } from '../agent/createAgent.ts';
import { subAgentLogic } from '../agent/subAgentLogic.ts';
import { inheritInspect } from '../agent/config.ts';
import type { AgentObserveConfig } from '../agent/config.ts';
import type { LoopResult } from '../core/run.ts';
import type { JournalEntry } from '../core/loopEvent.ts';
import type { StrategyBranchInput, StrategyBranchOutput } from '../../machines/strategy.types.ts';
import type { Branch, Thought } from '../core/strategy.ts';
import { defined } from '../core/defined.ts';

export interface BranchInfo {
  /** The strategy run's id. */
  readonly runId: string;
  readonly round: number;
  readonly index: number;
}

/** An agent built from a config is stopped when its branch ends; an `Agent` you pass or return is left running. */
export type SubAgentSource = Agent | AgentConfig | ((branch: Branch, info: BranchInfo) => Agent | AgentConfig);

export interface BranchDeps {
  readonly source: SubAgentSource;
  /** Given to sub-agents built from a config that sets no `observe.inspect` of its own. */
  readonly inspect?: AgentObserveConfig['inspect'];
  readonly forward: (entry: JournalEntry) => void;
  /** Each branch's run as it starts: one stopped with the runner never reports its usage to the machine. */
  readonly started?: (run: AgentRun) => void;
}

function isAgent(value: Agent | AgentConfig): value is Agent {
  return typeof (value as { start?: unknown }).start === 'function' && typeof (value as { run?: unknown }).run === 'function';
}

function thoughtOf(branch: Branch, result: LoopResult): Thought {
  const base = {
    id: branch.id,
    content: result.text ?? '',
    ...defined({ parentId: branch.parentId }),
  };
  const metadata = { ...branch.metadata, runId: result.runId, agentId: result.agentId, iterations: result.iterations };
  if (result.status === 'done') return { ...base, metadata };
  return { ...base, metadata: { ...metadata, error: result.error?.message ?? `the sub-agent run ended with ${result.reason}`, reason: result.reason } };
}

/** A factory that throws, or a run that fails, becomes an error thought: one bad branch never sinks the others. */
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
        deps.started?.(run);
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
