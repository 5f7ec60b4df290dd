/**
 * Restoring a checkpoint's snapshot without XState walking its conversation: the restored
 * actor has the conversation, whether XState keeps the context object it is given or a copy.
 */
import { createActor, type Snapshot } from 'xstate';
import { describe, expect, it } from 'vitest';
import { agentMachine } from '../../machines/agent.machine.ts';
import type { AgentMachineInput } from '../../machines/agent.types.ts';
import { restoreActor } from '../../src/agent/checkpoint.ts';
import type { Message } from '../../src/core/messages.ts';

const input: AgentMachineInput = {
  runId: 'run_ra',
  agentId: 'agent_ra',
  task: 'restore me',
  model: 'test-model',
  toolNames: [],
  limits: { maxIterations: 10, maxTotalTokens: 100_000, timeoutMs: 300_000, maxRepairTurns: 3 },
};

const conversation: Message[] = [
  { role: 'user', content: 'restore me' },
  { role: 'assistant', content: null, toolCalls: [{ id: 'c0', name: 'echo', arguments: '{}' }] },
  { role: 'tool', toolCallId: 'c0', content: 'echoed' },
];

const persisted = { ...(createActor(agentMachine, { input }).getPersistedSnapshot() as Record<string, unknown>), context: { ...input, messages: conversation } };

describe('restoreActor', () => {
  it('restores the conversation into the context XState keeps', () => {
    const actor = restoreActor(persisted, (snapshot) => createActor(agentMachine, { input, snapshot: snapshot as Snapshot<unknown> }));
    expect(actor.getSnapshot().context.messages).toBe(conversation);
  });

  it('restores the snapshot as it is when XState keeps a copy of the context', () => {
    const copying = (snapshot: Record<string, unknown>) =>
      createActor(agentMachine, { input, snapshot: { ...snapshot, context: { ...(snapshot.context as object) } } as unknown as Snapshot<unknown> });
    expect(restoreActor(persisted, copying).getSnapshot().context.messages).toEqual(conversation);
  });
});
