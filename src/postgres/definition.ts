/**
 * What a caller relies on of its agent's definition, carried by each run it queues: the worker that
 * steps the run checks its own agent of that id against it, as a run's result is shaped by the
 * worker's definition, not the caller's.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { StructuredOutputSpec } from '../core/provider.ts';
import type { Tool } from '../tools/types.ts';
import { DurableRunError } from './errors.ts';

export const AgentDefinition = z.object({
  /** A hash of the output schema's JSON Schema; null without one. */
  output: z.string().nullable(),
  /** The agent's own tools (an MCP server's are looked up when called), sorted. */
  tools: z.array(z.string()),
});
export type AgentDefinition = z.infer<typeof AgentDefinition>;

export function agentDefinition(output: StructuredOutputSpec | undefined, tools: readonly Tool[]): AgentDefinition {
  return { output: output === undefined ? null : schemaHash(output), tools: tools.map((tool) => tool.spec.name).sort() };
}

function schemaHash(output: StructuredOutputSpec): string {
  // A part JSON Schema cannot express (a transform, a refinement) counts as "any": two such schemas differing there are not told apart.
  const json = JSON.stringify({ name: output.name, schema: z.toJSONSchema(output.schema, { unrepresentable: 'any' }) });
  return createHash('sha256').update(json).digest('hex').slice(0, 32);
}

/** Refuses a run queued for another definition of the agent than the worker's. */
export function checkDefinition(runId: string, agentId: string, queued: AgentDefinition, here: AgentDefinition): void {
  const differences: string[] = [];
  if (queued.output !== here.output) {
    differences.push(
      queued.output === null ? 'the worker\'s has an output schema and the caller\'s none'
      : here.output === null ? 'the caller\'s has an output schema and the worker\'s none'
      : 'their output schemas differ',
    );
  }
  const missing = queued.tools.filter((name) => !here.tools.includes(name));
  const extra = here.tools.filter((name) => !queued.tools.includes(name));
  if (missing.length > 0) differences.push(`only the caller's has the tools ${missing.join(', ')}`);
  if (extra.length > 0) differences.push(`only the worker's has the tools ${extra.join(', ')}`);
  if (differences.length === 0) return;
  throw DurableRunError.definitionMismatch(
    `Run ${runId} was queued for another definition of the agent "${agentId}" than this worker's: ${differences.join('; ')}. Deploy the same definition of the agent to the processes that queue its runs and the workers, then run it again.`,
    { runId },
  );
}
