/**
 * A durable run follows the worker's agent definition: when the process that queued it defined the
 * agent with another output schema or other tools, the worker refuses the run with a typed error
 * and the caller's `run()` rejects with it, instead of resolving with a result its type does not describe.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent, defineTool } from '../../src/index.ts';
import { DurableRunError } from '../../src/errors.ts';
import { scriptedModel } from '../../src/testing/index.ts';
import { createPostgresRuntime, type PostgresRuntime } from '../../src/postgres/index.ts';
import { freshDatabase, postgresMissing } from '../support/postgres.ts';
import { inProcess, type InProcess } from './fixtures/agents.ts';

const missing = postgresMissing();
const Weather = z.object({ city: z.string(), celsius: z.number() });
const Forecast = z.object({ city: z.string(), days: z.array(z.number()) });

/** Answers through the schema it is sent, or in plain text without one. */
const model = () =>
  scriptedModel((request) => ({ text: request.output === undefined ? 'It is warm in Paris.' : JSON.stringify({ city: 'Paris', celsius: 21, days: [21] }) }), {
    recordCalls: false,
    supportsStructuredOutput: true,
  });

const tool = (name: string) => defineTool({ name, description: `The ${name} tool.`, input: z.object({}), execute: () => name });

describe.skipIf(missing !== '')('an agent defined differently by the caller and the worker', () => {
  let setup: InProcess | undefined;
  let caller: PostgresRuntime | undefined;

  beforeAll(async () => {
    const url = await freshDatabase('definitions');
    setup = await inProcess(url, 4);
    caller = createPostgresRuntime({ connectionString: url, poolSize: 2 });
  });
  afterAll(async () => {
    await caller?.close();
    await setup?.close();
  });

  const refused = async (run: Promise<unknown>, what: RegExp): Promise<DurableRunError> => {
    const error = await run.then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    expect(error).toBeInstanceOf(DurableRunError);
    expect(error).toMatchObject({ code: 'definition_mismatch' });
    expect((error as Error).message).toMatch(what);
    expect((error as Error).message).toMatch(/same definition/);
    return error as DurableRunError;
  };

  it('rejects the run of a caller whose agent has an output schema the worker\'s agent lacks', async () => {
    createAgent({ id: 'plain-on-worker', model: model(), runtime: setup?.runtime });
    const agent = createAgent({ id: 'plain-on-worker', model: model(), output: Weather, runtime: caller });
    const error = await refused(agent.run('Weather in Paris?'), /output schema/);
    const row = await setup?.pool.query<{ status: string }>('SELECT status FROM actorloop.actors WHERE id = $1', [error.runId]);
    expect(row?.rows[0]?.status).toBe('failed');
  }, 60_000);

  it('rejects the run of a caller whose output schema differs from the worker\'s', async () => {
    createAgent({ id: 'forecast-on-worker', model: model(), output: Forecast, runtime: setup?.runtime });
    const agent = createAgent({ id: 'forecast-on-worker', model: model(), output: Weather, runtime: caller });
    await refused(agent.run('Weather in Paris?'), /output schema/);
  }, 60_000);

  it('rejects the run of a caller whose agent has other tools than the worker\'s', async () => {
    createAgent({ id: 'tools-on-worker', model: model(), tools: [tool('lookup'), tool('delete_everything')], runtime: setup?.runtime });
    const agent = createAgent({ id: 'tools-on-worker', model: model(), tools: [tool('lookup')], runtime: caller });
    await refused(agent.run('Weather in Paris?'), /delete_everything/);
  }, 60_000);

  it('runs as before when both define it the same way', async () => {
    createAgent({ id: 'same-everywhere', model: model(), output: Weather, tools: [tool('lookup')], runtime: setup?.runtime });
    const agent = createAgent({ id: 'same-everywhere', model: model(), output: Weather, tools: [tool('lookup')], runtime: caller });
    const result = await agent.run('Weather in Paris?');
    expect(result.output).toEqual({ city: 'Paris', celsius: 21 });
  }, 60_000);
});
