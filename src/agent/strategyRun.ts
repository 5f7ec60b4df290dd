/**
 * `createAgent({ strategy })`: `agent.run(task)` runs the strategy, with branches as sub-agents
 * built from the same configuration (minus the strategy), and reports a `LoopResult` like any
 * run. For a live handle (events, cancel), use `startStrategy` directly.
 */
import type { Message } from '../core/messages.ts';
import type { JournalEntry } from '../core/loopEvent.ts';
import { startStrategy } from '../strategies/runStrategy.ts';
import type { StrategyResult } from '../strategies/result.ts';
import type { ConfiguredStrategy } from '../core/strategy.ts';
import type { AgentConfig, RunOptions } from './createAgent.ts';
import type { LoopResult } from '../core/run.ts';

export function runAgentStrategy(
  config: AgentConfig & { readonly strategy: ConfiguredStrategy<unknown, unknown> },
  agentId: string,
  task: string,
  options: RunOptions,
  publish: (entry: JournalEntry) => void,
): Promise<LoopResult> {
  const { strategy, id: _id, ...base } = config;
  const run = startStrategy({
    strategy,
    task,
    subAgent: base,
    model: config.model,
    agentId,
    ...(config.modelName === undefined ? {} : { modelName: config.modelName }),
    ...(options.runId === undefined ? {} : { runId: options.runId }),
    ...(config.inspect === undefined ? {} : { inspect: config.inspect }),
    ...(config.redact === undefined ? {} : { redact: config.redact }),
  });
  // Branch runs are in the strategy's journal already; the agent's events$ sees them all.
  run.events$.subscribe({ next: publish, error: () => undefined });
  return run.result.then(toLoopResult);
}

function toLoopResult(result: StrategyResult): LoopResult {
  const messages: Message[] = result.answer === null ? [] : [{ role: 'assistant', content: result.answer }];
  return {
    runId: result.runId,
    agentId: result.events[0]?.agentId ?? '',
    status: result.status,
    reason: result.status === 'done' ? 'final_answer' : result.status === 'cancelled' ? 'cancelled' : 'error',
    text: result.answer,
    iterations: result.rounds,
    usage: result.usage,
    costUsd: 0,
    messages,
    durationMs: result.durationMs,
    ...(result.error === undefined ? {} : { error: result.error }),
  };
}
