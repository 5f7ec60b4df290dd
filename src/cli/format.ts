import type { JournalEntry, LoopEvent } from '../core/loopEvent.ts';
import { printable } from '../tools/text.ts';

/**
 * Undefined for events not worth a line of their own (token deltas, hook timings). Servers, tools and models write
 * parts of it, so escape sequences are dropped: printed, they could rewrite what a person approving a call sees.
 */
export function summarizeEvent(event: LoopEvent): string | undefined {
  const summary = describeEvent(event);
  return summary === undefined ? undefined : printable(summary);
}

function describeEvent(event: LoopEvent): string | undefined {
  switch (event.type) {
    case 'run.started':
      return `run started: ${shorten(event.task, 80)} (model ${event.model})`;
    case 'run.resumed':
      return `run resumed after ${event.replayed} replayed steps`;
    case 'phase.entered':
      return `phase ${event.phase}`;
    case 'reasoning.completed': {
      const calls = event.toolCalls.length > 0 ? ` → ${event.toolCalls.map((c) => c.name).join(', ')}` : '';
      const text = event.text === null ? '' : ` "${shorten(event.text, 60)}"`;
      return `model replied${text}${calls} (${event.usage.totalTokens} tokens)`;
    }
    case 'policy.evaluated':
      return `gate ${event.decision} ${event.tool}${event.reason ? ` (${shorten(event.reason, 60)})` : ''}`;
    case 'tool.started':
      return `tool ${event.tool} started${event.attempt > 1 ? ` (attempt ${event.attempt})` : ''}`;
    case 'tool.finished':
      return `tool ${event.tool} → ${event.status} in ${event.durationMs} ms`;
    case 'recovery.triggered':
      return `recovery ${event.strategy} for ${event.tool}: ${shorten(event.error, 60)}`;
    case 'human.awaiting':
      if (event.question !== undefined) return `MCP server ${event.question.server} asks: ${shorten(event.question.message, 120)} — answer with: ${JSON.stringify(event.question.schema)}`;
      return `waiting for a human (${event.kind}) on ${event.toolCallIds.length} call(s)`;
    case 'human.decided':
      if (event.kind === 'elicitation') return event.decision === 'approve' ? `human answered: ${JSON.stringify(event.answer ?? {})}` : 'human declined to answer';
      return `human ${event.decision === 'approve' ? 'approved' : 'rejected'} ${event.toolCallIds.length} call(s)${event.reason ? `: ${event.reason}` : ''}`;
    case 'provider.retry':
      return `provider retry ${event.attempt}: ${shorten(event.error, 60)}`;
    case 'stuck.detected':
      return `stuck: ${event.reason} (${event.action})`;
    case 'mcp.restarted':
      return `MCP server "${event.server}" lost its session and was reconnected (${event.attempts} attempt${event.attempts === 1 ? '' : 's'})`;
    case 'step.limit_reached':
      return `limit reached in ${event.step}: ${event.reason}`;
    case 'context.compacted':
      return `context compacted (${event.strategy}): ${event.tokensBefore} → ${event.tokensAfter} tokens`;
    case 'context.overflowed':
      return `context over the model's window: compacted (${event.strategy}) ${event.tokensBefore} → ${event.tokensAfter} tokens, retried`;
    case 'run.terminated':
      return `run ended: ${event.reason} after ${event.iterations} iterations, ${event.usage.totalTokens} tokens${event.error ? ` — ${event.error.message}` : ''}`;
    default:
      return undefined;
  }
}

export function entryLine(entry: JournalEntry): string | undefined {
  const summary = summarizeEvent(entry.event);
  return summary === undefined ? undefined : `[${entry.iteration}] ${summary}`;
}

export function shorten(text: string, max: number): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length <= max ? line : `${line.slice(0, max - 1)}…`;
}

export function formatAge(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m`;
  if (s < 86_400) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86_400)}d`;
}

export function formatCost(usd: number): string {
  return `$${usd.toFixed(6)}`;
}

export interface JournalTotals {
  readonly iterations: number;
  readonly tokens: number;
  readonly costUsd: number;
  readonly terminated: boolean;
}

export function journalTotals(entries: readonly JournalEntry[]): JournalTotals {
  let tokens = 0;
  let costUsd = 0;
  let iterations = entries.at(-1)?.iteration ?? 0;
  let terminated = false;
  for (const { event } of entries) {
    if (event.type === 'reasoning.completed') {
      tokens += event.usage.totalTokens;
      costUsd += event.costUsd ?? 0;
    } else if (event.type === 'run.terminated') {
      iterations = event.iterations;
      terminated = true;
    }
  }
  return { iterations, tokens, costUsd, terminated };
}
