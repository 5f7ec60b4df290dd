/**
 * A durable agent's structured answer (`createAgent({ output, runtime })`): the worker validates the
 * model's answer against the schema, sends a mismatch back for repair, and the caller gets the typed
 * value, whichever process runs the steps.
 */
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import { createAgent } from '../../src/index.ts';
import { scriptedModel } from '../../src/testing/index.ts';
import { createPostgresRuntime, type PostgresRuntime } from '../../src/postgres/index.ts';
import { freshDatabase, postgresMissing } from '../support/postgres.ts';
import { inProcess, type InProcess } from './fixtures/agents.ts';

const missing = postgresMissing();
const Weather = z.object({ city: z.string(), celsius: z.number() });

/** A first answer that does not match, then one that does; `native`: the endpoint takes the schema itself. */
const model = (native: boolean) =>
  scriptedModel(
    (request) => {
      const repairs = request.messages.filter((message) => message.role === 'assistant').length;
      const answer = repairs === 0 ? { city: 'Paris', celsius: 'warm' } : { city: 'Paris', celsius: 21 };
      return native ? { text: JSON.stringify(answer) } : { toolCalls: [{ id: `f${repairs}`, name: 'final_answer', arguments: answer }] };
    },
    { recordCalls: false, supportsStructuredOutput: native },
  );

describe.skipIf(missing !== '')('a structured answer from a durable agent', () => {
  let setup: InProcess | undefined;
  let caller: PostgresRuntime | undefined;

  beforeAll(async () => {
    const url = await freshDatabase('structured');
    setup = await inProcess(url, 4);
    caller = createPostgresRuntime({ connectionString: url, poolSize: 2 });
  });
  afterAll(async () => {
    await caller?.close();
    await setup?.close();
  });

  for (const native of [true, false]) {
    it(`is validated in the worker, repaired once, and returned typed to a caller in another runtime (${native ? 'schema sent to the endpoint' : 'a final_answer tool'})`, async () => {
      const id = native ? 'weather-native' : 'weather-tool';
      // The worker's agent, and the caller's: the same definition, as in two processes.
      createAgent({ id, model: model(native), output: Weather, runtime: setup?.runtime });
      const agent = createAgent({ id, model: model(native), output: Weather, runtime: caller });
      const result = await agent.run('Weather in Paris?');
      expectTypeOf(result.output).toEqualTypeOf<{ city: string; celsius: number }>();
      expect(result.output).toEqual({ city: 'Paris', celsius: 21 });
      expect(result.iterations).toBe(2);
      const journal = await caller?.journal(result.runId);
      expect(journal?.some((entry) => entry.event.type === 'reasoning.completed')).toBe(true);
      // Each model call is a recorded effect, made after its step committed: none inside a step's transaction.
      const models = await setup?.pool.query<{ status: string }>(`SELECT status FROM actorloop.effects WHERE actor_id = $1 AND kind = 'model' ORDER BY since`, [result.runId]);
      expect(models?.rows.map((row) => row.status)).toEqual(['done', 'done']);
    }, 60_000);
  }
});
