/**
 * One branch as a sub-agent: a real `createAgent` agent (full loop, with tools if configured)
 * run on the branch's prompt as a child actor of the branch. Its answer becomes the branch's
 * thought. Stopping the branch (the strategy ended, was cancelled or timed out) stops the run.
 */
import { fromPromise } from 'xstate';
import { createAgent, type Agent, type AgentConfig, type AgentRun, type PreparedRun } from '../agent/createAgent.ts';
import { subAgentMachine, type SubAgentConclude, type SubAgentPrepared, type SubAgentRequest } from '../../machines/subAgent.machine.ts';
import { inheritInspect } from '../agent/config.ts';
import type { AgentObserveConfig } from '../agent/types.ts';
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

/** One branch's sub-agent: prepared, then attached to its actor. */
interface BranchRun {
  readonly request: StrategyBranchInput;
  readonly prepared: PreparedRun;
  readonly startedAt: number;
  /** Stops an agent built for this branch once its run has settled. */
  readonly release: () => void;
  /** Set by `attach`: the branch's thought, once the run has settled. */
  outcome?: Promise<StrategyBranchOutput>;
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
  const runs = new Map<string, BranchRun>();
  return subAgentMachine.provide({
    actors: {
      prepare: fromPromise<SubAgentPrepared, SubAgentRequest>(async ({ input }) => {
        const request = input as StrategyBranchInput;
        const { branch } = request;
        const made = typeof deps.source === 'function' ? deps.source(branch, { runId: request.runId, round: request.round, index: request.index }) : deps.source;
        const agent = isAgent(made) ? made : createAgent(inheritInspect(made, deps.inspect));
        const prepared = agent.prepare(branch.prompt, { runId: `${request.runId}-r${request.round}-b${request.index}` });
        // An agent built for this branch goes with it; one the factory returned is left running.
        const release = isAgent(made) ? () => undefined : () => agent.stop();
        runs.set(prepared.runId, { request, prepared, startedAt: Date.now(), release });
        return { runId: prepared.runId, logic: prepared.logic, input: prepared.input };
      }),
      conclude: fromPromise<unknown, SubAgentConclude>(async ({ input }) => {
        const outcome = runs.get(input.runId)?.outcome;
        runs.delete(input.runId);
        if (outcome === undefined) throw new Error(`Branch run ${input.runId} was never attached to its actor.`);
        return outcome;
      }),
    },
    actions: {
      attach: (_, { runId, actor }) => {
        const run = runs.get(runId);
        if (run === undefined) throw new Error(`Branch run ${runId} was not prepared.`);
        const handle = run.prepared.attach(actor as AgentRun['actor']);
        const forwarding = handle.events$.subscribe({ next: deps.forward, error: () => undefined });
        run.outcome = handle.settled.then((result) => {
          forwarding.unsubscribe();
          run.release();
          // Stopped with the strategy: no conclude will come for it.
          if (handle.actor.getSnapshot().status === 'stopped') runs.delete(runId);
          return { thought: thoughtOf(run.request.branch, result), usage: result.usage, costUsd: result.costUsd, durationMs: Date.now() - run.startedAt };
        });
      },
    },
  });
}
