/** Labels are escaped, so text from the model or a tool can never break out of its node. */
import type { Trace, TraceStep } from './trace.ts';

/** Node ids are generated, never taken from step ids (which carry tool-call ids from the model). */
interface Ids {
  next: number;
  readonly of: Map<string, string>;
}

function nodeId(ids: Ids, traceId: string, stepId: string): string {
  const key = `${traceId}\u0000${stepId}`;
  let id = ids.of.get(key);
  if (id === undefined) {
    id = `n${ids.next++}`;
    ids.of.set(key, id);
  }
  return id;
}

/** Mermaid labels are quoted strings: quotes and markup characters become entities. */
function escape(text: string): string {
  return text.replace(/[&"<>#`|{}[\]]/g, (c) => `#${c.charCodeAt(0)};`).replace(/\s+/g, ' ');
}

function label(step: TraceStep): string {
  const d = step.data;
  switch (step.type) {
    case 'llm_call': {
      const calls = Array.isArray(d['toolCalls']) ? d['toolCalls'].length : 0;
      return `model call ${step.id.replace('llm_', '#')}${calls > 0 ? ` → ${calls} call${calls === 1 ? '' : 's'}` : ' → answer'}`;
    }
    case 'tool_call':
      return `${String(d['tool'])}${d['decision'] === undefined || d['decision'] === 'allow' ? '' : ` (${String(d['decision'])})`}`;
    case 'tool_result':
      return `${String(d['tool'])}: ${String(d['status'])}`;
    case 'reasoning':
      if (d['branchId'] !== undefined) return `branch ${String(d['branchId'])}${d['ok'] === false ? ' (failed)' : ''}`;
      if (d['decision'] !== undefined) return `${String(d['strategy'])}: ${String(d['decision'])}`;
      return `thinking: ${String(d['text'] ?? '').slice(0, 60)}`;
  }
}

const SHAPE: Readonly<Record<TraceStep['type'], readonly [string, string]>> = {
  llm_call: ['([', '])'],
  tool_call: ['[', ']'],
  tool_result: ['[/', '/]'],
  reasoning: ['{{', '}}'],
};

function render(trace: Trace, ids: Ids, lines: string[], indent: string): void {
  for (const step of trace.steps) {
    const [open, close] = SHAPE[step.type];
    lines.push(`${indent}${nodeId(ids, trace.id, step.id)}${open}"${escape(label(step))}"${close}`);
  }
  for (const step of trace.steps) {
    for (const parent of step.parentIds) lines.push(`${indent}${nodeId(ids, trace.id, parent)} --> ${nodeId(ids, trace.id, step.id)}`);
  }
  for (const child of trace.children) {
    lines.push(`${indent}subgraph ${nodeId(ids, child.id, '')}["${escape(`run ${child.id}`)}"]`);
    render(child, ids, lines, `${indent}  `);
    lines.push(`${indent}end`);
    const from = trace.steps.find((step) => step.data['subTraceId'] === child.id);
    const first = child.steps.find((step) => step.parentIds.length === 0);
    if (from !== undefined && first !== undefined) lines.push(`${indent}${nodeId(ids, trace.id, from.id)} -.-> ${nodeId(ids, child.id, first.id)}`);
  }
}

/**
 * @example
 * ```ts
 * writeFileSync('run.mmd', traceToMermaid(trace)); // paste into any Mermaid viewer
 * ```
 */
export function traceToMermaid(trace: Trace): string {
  const lines = ['flowchart TD'];
  render(trace, { next: 0, of: new Map() }, lines, '  ');
  return `${lines.join('\n')}\n`;
}
