/**
 * A durable run's breakers travel with its log: a worker with a fresh agent (a process that
 * never saw the failures) goes on with the breaker the run's earlier steps opened.
 */
import { z } from 'zod';
import { afterEach, describe, expect, it } from 'vitest';
import { createAgent, defineTool } from '../../src/index.ts';
import { scriptedModel } from '../../src/testing/index.ts';
import { createPostgresRuntime, runWorker, type DurableWorker, type PostgresRuntime } from '../../src/postgres/index.ts';
import { freshDatabase, postgresMissing } from '../support/postgres.ts';

const missing = postgresMissing();

describe.skipIf(missing !== '')('circuit breakers of durable runs', () => {
  const open: { runtime: PostgresRuntime; worker: DurableWorker }[] = [];
  afterEach(async () => {
    for (const { runtime, worker } of open.splice(0)) {
      await worker.stop();
      await runtime.close();
    }
  });

  /** A process's agent: its own breakers (two failures open them for ten minutes), tools and worker. */
  async function processOf(url: string, executions: number[]) {
    const runtime = createPostgresRuntime({ connectionString: url, migrate: true, poolSize: 4 });
    const flaky = defineTool({
      name: 'flaky',
      description: 'A tool whose backend is down.',
      input: z.object({ attempt: z.number() }),
      execute: ({ attempt }) => {
        executions.push(attempt);
        throw new Error(`backend down (attempt ${attempt})`);
      },
    });
    const deploy = defineTool({ name: 'deploy', description: 'Deploy.', input: z.object({}), requiresConfirmation: true, execute: () => 'deployed' });
    const model = scriptedModel(
      (request) => {
        const results = request.messages.filter((m) => m.role === 'tool').length;
        if (results < 2) return { toolCalls: [{ id: `f${results + 1}`, name: 'flaky', arguments: { attempt: results + 1 } }] };
        if (results === 2) return { toolCalls: [{ id: 'd1', name: 'deploy', arguments: {} }] };
        if (results === 3) return { toolCalls: [{ id: 'f3', name: 'flaky', arguments: { attempt: 3 } }] };
        return { text: 'done' };
      },
      { recordCalls: false },
    );
    const agent = createAgent({ id: 'breaker-agent', model, tools: [flaky, deploy], runtime, resilience: { breakers: { failureThreshold: 2, recoveryTimeoutMs: 600_000 } } });
    const worker = await runWorker({ runtime, concurrency: 2, pollIntervalMs: 100 });
    open.push({ runtime, worker });
    return { runtime, agent, worker };
  }

  it('a worker with a fresh agent refuses the call the run\'s open breaker refuses: the tool is not called', { timeout: 20_000 }, async () => {
    const url = await freshDatabase('breakers');
    const executions: number[] = [];
    const first = await processOf(url, executions);
    void first.agent.run('Use flaky, then deploy.', { runId: 'run_durable_breaker' }).catch(() => undefined);
    await expect.poll(async () => (await first.runtime.getRun('run_durable_breaker'))?.status, { timeout: 10_000 }).toBe('awaiting_human');
    expect(executions).toEqual([1, 2]);
    // The first process goes away while the run waits for a human.
    const gone = open.splice(0);
    for (const { runtime, worker } of gone) {
      await worker.stop();
      await runtime.close();
    }

    const second = await processOf(url, executions);
    await second.runtime.approve('run_durable_breaker');
    await expect.poll(async () => (await second.runtime.getRun('run_durable_breaker'))?.status, { timeout: 10_000 }).toBe('done');
    expect(executions).toEqual([1, 2]);
    const finished = (await second.runtime.journal('run_durable_breaker')).flatMap((entry) => (entry.event.type === 'tool.finished' ? [`${entry.event.tool}:${entry.event.status}`] : []));
    expect(finished).toEqual(['flaky:error', 'flaky:error', 'deploy:ok', 'flaky:circuit_open']);
  });
});
