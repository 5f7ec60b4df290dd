/**
 * `npm start`: a small multi-step agent run, printed live. Uses a real model when
 * OPENAI_API_KEY, OPENAI_BASE_URL or OPENROUTER_API_KEY is set; otherwise a scripted model,
 * and it says so.
 */
import { z } from 'zod';
import { createAgent, defineTool, gates, openAICompatible } from '../index.ts';
import { scriptedModel } from '../testing/index.ts';
import type { InferenceProvider } from '../core/provider.ts';

const CITIES: ReadonlyMap<string, { population: number; country: string }> = new Map([
  ['tokyo', { population: 37_115_000, country: 'Japan' }],
  ['paris', { population: 11_277_000, country: 'France' }],
  ['lagos', { population: 16_536_000, country: 'Nigeria' }],
  ['lima', { population: 11_362_000, country: 'Peru' }],
]);

const lookupCity = defineTool({
  name: 'lookup_city',
  description: 'Look up the metropolitan population and country of a city. [verified]',
  input: z.object({ city: z.string().describe('City name, e.g. "Tokyo"') }),
  execute: ({ city }) => {
    const found = CITIES.get(city.trim().toLowerCase());
    if (found === undefined) throw new Error(`Unknown city "${city}". Known: ${[...CITIES.keys()].join(', ')}.`);
    return { city, ...found };
  },
});

const add = defineTool({
  name: 'add',
  description: 'Add a list of numbers.',
  input: z.object({ numbers: z.array(z.number()).min(1) }),
  execute: ({ numbers }) => numbers.reduce((sum, n) => sum + n, 0),
});

const divide = defineTool({
  name: 'divide',
  description: 'Divide a by b.',
  input: z.object({ a: z.number(), b: z.number() }),
  execute: ({ a, b }) => {
    if (b === 0) throw new Error('Division by zero.');
    return a / b;
  },
});

const TASK = 'What is the combined population of Tokyo and Paris, in millions (two decimals)?';

function chooseModel(): { model: InferenceProvider; real: boolean } {
  const env = process.env;
  if (env.OPENAI_API_KEY || env.OPENAI_BASE_URL || env.OPENROUTER_API_KEY) {
    return { model: openAICompatible(), real: true };
  }
  return {
    real: false,
    model: scriptedModel([
      {
        text: 'I will look up both cities.',
        toolCalls: [
          { name: 'lookup_city', arguments: { city: 'Tokyo' } },
          { name: 'lookup_city', arguments: { city: 'Paris' } },
        ],
      },
      { toolCalls: [{ name: 'add', arguments: { numbers: [37_115_000, 11_277_000] } }] },
      { toolCalls: [{ name: 'divide', arguments: { a: 48_392_000, b: 1_000_000 } }] },
      { text: 'Tokyo (37.12 M) and Paris (11.28 M) together have about 48.39 million people.' },
    ]),
  };
}

async function main(): Promise<void> {
  const { model, real } = chooseModel();
  console.log(
    real
      ? `actorloop demo: real model "${model.defaultModel}" via ${model.name}`
      : 'actorloop demo: no OPENAI_API_KEY / OPENAI_BASE_URL set — using the SCRIPTED model (offline, deterministic).',
  );
  console.log(`task: ${TASK}\n`);
  const agent = createAgent({
    model: { provider: model, stream: real },
    system: 'You are precise. Use the tools for every fact and every calculation, then answer in one sentence.',
    tools: [lookupCity, add, divide],
    policy: { gate: gates.permissive() },
    limits: { maxIterations: 10 },
  });
  agent.events$.subscribe(({ event, iteration }) => {
    switch (event.type) {
      case 'phase.entered':
        console.log(`[${iteration}] ${event.phase}`);
        break;
      case 'policy.evaluated':
        console.log(`      gate ${event.decision} ${event.tool}${event.reason ? ` (${event.reason})` : ''}`);
        break;
      case 'tool.finished':
        console.log(`      tool ${event.tool} → ${event.status} in ${event.durationMs} ms`);
        break;
      case 'recovery.triggered':
        console.log(`      recovery ${event.strategy} for ${event.tool}: ${event.error}`);
        break;
      case 'reasoning.completed':
        if (event.toolCalls.length > 0) console.log(`      model proposes ${event.toolCalls.map((c) => c.name).join(', ')}`);
        break;
      default:
        break;
    }
  });
  try {
    const result = await agent.run(TASK);
    console.log(`\nanswer: ${result.text}`);
    console.log(
      `iterations: ${result.iterations}, tokens: ${result.usage.totalTokens} (prompt ${result.usage.promptTokens}, completion ${result.usage.completionTokens}), cost: $${result.costUsd.toFixed(6)}, time: ${result.durationMs} ms`,
    );
  } catch (error) {
    console.error(`\nthe run did not finish: ${error instanceof Error ? error.message : String(error)}`);
    process.exitCode = 1;
  }
}

await main();
