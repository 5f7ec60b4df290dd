/**
 * A run restored from a checkpoint keeps its wall-clock limit: XState restores no timers, so the
 * resume arms the limit again, afresh, as a run replayed from its input has it.
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createAgent, type Agent } from '../../src/agent/createAgent.ts';
import { createFileStore } from '../../src/persistence/fileStore.ts';
import { readRunLog } from '../../src/persistence/runLog.ts';
import { scriptedModel } from '../../src/testing/index.ts';
import { echoTool, removeTempDirs, runFiles, tempDir } from './support.ts';

afterAll(removeTempDirs);
const agents: Agent[] = [];
afterEach(() => {
  for (const agent of agents.splice(0)) agent.stop();
});

/** Three echo turns, then an answer: late (past any limit here) or at once. */
const model = (late: boolean) =>
  scriptedModel((request) => {
    const turn = request.messages.filter((m) => m.role === 'assistant').length;
    if (turn < 3) return { toolCalls: [{ id: `c${turn}`, name: 'echo', arguments: { word: `w${turn}` } }] };
    return late ? { text: 'late', delayMs: 60_000 } : { text: 'finished' };
  });

describe('a run restored from a checkpoint', () => {
  it('times out again when its next step outlasts its wall-clock limit, and finishes once the step is quick', { timeout: 30_000 }, async () => {
    const store = createFileStore({ dir: tempDir(), checkpoints: { every: 1 } });
    const start = (late: boolean) => {
      const agent = createAgent({ id: 'agent_cpt', model: model(late), tools: [echoTool()], persistence: { store }, limits: { timeoutMs: 1_000 } });
      agents.push(agent);
      return agent;
    };
    const first = await start(true).start('echo three words', { runId: 'run_cpt' }).settled;
    expect(first).toMatchObject({ status: 'failed', reason: 'timeout', resumable: true });
    expect(readRunLog(runFiles(store, 'run_cpt').log).records.filter((r) => r.kind === 'checkpoint').map((r) => r.kind === 'checkpoint' && r.iteration)).toEqual([1, 2, 3]);

    // Restored from the checkpoint at iteration 3, its last model call is late again.
    const again = await start(true).resume('run_cpt').settled;
    expect(again).toMatchObject({ status: 'failed', reason: 'timeout', resumable: true, iterations: 3 });

    const done = await start(false).resume('run_cpt').settled;
    expect(done).toMatchObject({ status: 'done', text: 'finished', iterations: 4 });
  });
});
