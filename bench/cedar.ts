/**
 * Scenario 3d: the Cedar gate deciding one call against a 50-policy set (permits by group and
 * by argument, forbids on argument patterns), the way the gate phase calls it.
 */
import { gates } from '../src/policy/gates.ts';
import type { GateContext, ProposedAction } from '../src/policy/types.ts';
import { summarize, type Summary } from './stats.ts';

export interface CedarResult {
  readonly policies: number;
  readonly perCallUs: Summary;
}

function policySet(count: number): string {
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    if (i % 3 === 0) out.push(`permit(principal, action == Action::"call", resource in ToolGroup::"group${i}");`);
    else if (i % 3 === 1) out.push(`permit(principal, action, resource) when { resource.name == "tool${i}" && context.arguments has limit && context.arguments.limit <= ${i * 10} };`);
    else out.push(`@id("forbid${i}") forbid(principal, action, resource) when { context.arguments has path && context.arguments.path like "/secret${i}/*" };`);
  }
  return out.join('\n');
}

/**
 * @example
 * ```ts
 * const r = measureCedar({ policies: 50, calls: 2_000 });
 * r.perCallUs.median; // µs per decision
 * ```
 */
export function measureCedar(options: { readonly policies: number; readonly calls: number }): CedarResult {
  const groups = Object.fromEntries(Array.from({ length: options.policies }, (_, i) => [`group${i}`, [`g${i}_*`]]));
  const gate = gates.cedar({ policies: policySet(options.policies), groups });
  const context: GateContext = { runId: 'run_bench', agentId: 'bench', iteration: 3, messages: [] };
  const actions: ProposedAction[] = [
    { toolCallId: 'c', tool: 'g3_read', arguments: { path: '/home/notes.txt', limit: 5 }, permissions: ['fs.read'] },
    { toolCallId: 'c', tool: 'tool4', arguments: { limit: 20, path: '/secret5/x' }, permissions: [] },
    { toolCallId: 'c', tool: 'unknown', arguments: { query: 'weather' }, permissions: ['net.fetch'] },
  ];
  for (let i = 0; i < 200; i++) gate.evaluate(actions[i % actions.length] as ProposedAction, context);
  const samples: number[] = [];
  for (let i = 0; i < options.calls; i++) {
    const started = performance.now();
    gate.evaluate(actions[i % actions.length] as ProposedAction, context);
    samples.push((performance.now() - started) * 1000);
  }
  return { policies: options.policies, perCallUs: summarize(samples) };
}
