/**
 * Agents for tests: every agent created here is stopped after its test, so no run outlives it.
 * Call `afterEach(stopTrackedAgents)` in the file.
 */
import { afterEach, beforeEach } from 'vitest';
import { createAgent, type Agent, type AgentConfig } from '../../src/agent/createAgent.ts';
import type { Message, ToolMessage } from '../../src/core/messages.ts';
import type { JournalEntry } from '../../src/core/loopEvent.ts';

const tracked: Agent[] = [];

export function trackAgent(config: AgentConfig): Agent {
  const agent = createAgent(config);
  tracked.push(agent);
  return agent;
}

/** A tracked agent plus every journal entry it emits, collected from the start. */
export function agentWithEntries(config: AgentConfig): { agent: Agent; entries: JournalEntry[] } {
  const agent = trackAgent(config);
  const entries: JournalEntry[] = [];
  agent.events$.subscribe((entry) => entries.push(entry));
  return { agent, entries };
}

export function stopTrackedAgents(): void {
  for (const agent of tracked.splice(0)) agent.stop();
}

export function toolMessages(messages: readonly Message[]): ToolMessage[] {
  return messages.filter((m): m is ToolMessage => m.role === 'tool');
}

/**
 * Collects every unhandled promise rejection during each test of the calling `describe`.
 * Call it at the top of the block; the returned array is emptied before each test.
 */
export function collectUnhandledRejections(): unknown[] {
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);
  beforeEach(() => {
    unhandled.length = 0;
    process.on('unhandledRejection', onUnhandled);
  });
  afterEach(() => {
    process.off('unhandledRejection', onUnhandled);
  });
  return unhandled;
}
