// The hand-off is an ask of kind `delegate`: queued, timed out and cancelled like any ask, and with the delegating run.
import { z } from 'zod';
import type { LoopResult } from '../core/run.ts';
import { ConfigurationError } from '../core/errors.ts';
import { defineTool } from '../tools/defineTool.ts';
import type { Tool } from '../tools/types.ts';
import { SYSTEM_DEFAULTS } from './defaults.ts';
import type { DelegateToolOptions } from './types.ts';

export type DelegateAsk = (
  to: string,
  task: string,
  options: { readonly from: string; readonly senderRunId: string; readonly timeoutMs: number; readonly signal: AbortSignal },
) => Promise<LoopResult>;

const DelegateInput = z.object({
  task: z.string().min(1).describe('The sub-task, self-contained: everything the other agent needs to know to answer it.'),
});

/** Within the models' tool naming rule. */
export function delegateToolName(agentId: string): string {
  return `delegate_to_${agentId.replace(/[^a-zA-Z0-9_-]/g, '_')}`.slice(0, 64);
}

/** The target is looked up when the tool runs, so it may be spawned after the agent that uses it. */
export function createDelegateTool(to: string, options: DelegateToolOptions, ask: DelegateAsk): Tool<{ task: string }, string> {
  const timeoutMs = options.timeoutMs ?? SYSTEM_DEFAULTS.askTimeoutMs;
  return defineTool({
    name: options.name ?? delegateToolName(to),
    description:
      options.description ??
      `Hand a self-contained sub-task to the agent "${to}" and get its final answer back. Use it for work that agent specialises in; put everything it needs in the task.`,
    input: DelegateInput,
    // The executor's default per-tool timeout (30 s) is far shorter than a sub-agent's run.
    timeoutMs,
    async execute({ task }, context) {
      if (context.agentId === to) {
        // With one task at a time, the agent would wait on its own queue until the timeout.
        throw new ConfigurationError(`Agent "${to}" cannot delegate to itself; give the tool to another agent or delegate to a different one.`);
      }
      const result = await ask(to, task, { from: context.agentId, senderRunId: context.runId, timeoutMs, signal: context.signal });
      return result.text ?? '';
    },
  });
}
