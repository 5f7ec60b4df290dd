/** Shared helpers for the knowledge tests. */
import type { PreparerContext } from '../../src/core/hooks.ts';
import type { Message, SystemMessage } from '../../src/core/messages.ts';
import type { LoopEvent } from '../../src/core/loopEvent.ts';
import { isKnowledgeContext } from '../../src/knowledge/bridge.ts';
import type { ToolContext } from '../../src/tools/types.ts';

/** A hook context that records what the preparer emits. */
export function hookContext(iteration = 0): PreparerContext & { readonly events: LoopEvent[] } {
  const events: LoopEvent[] = [];
  return { runId: 'run_test', agentId: 'agent_test', iteration, signal: new AbortController().signal, emit: (e) => events.push(e), events };
}

/** What a tool's execute receives. */
export function toolContext(runId = 'run_test'): ToolContext {
  return { signal: new AbortController().signal, toolCallId: 'call_1', idempotencyKey: `${runId}:call_1`, runId, agentId: 'agent_test' };
}

/** The `[KNOWLEDGE_CONTEXT]` system messages of a conversation. */
export function knowledgeMessages(messages: readonly Message[]): SystemMessage[] {
  return messages.filter((m): m is SystemMessage => isKnowledgeContext(m));
}
