import { z } from 'zod';
// Direct imports, not the front door: the CLI should not load modules a command does not use.
import { createAgent } from '../agent/createAgent.ts';
import { anthropic } from '../inference/anthropic.ts';
import { openAICompatible } from '../inference/openaiCompatible.ts';
import { gates } from '../policy/gates.ts';
import { defineTool } from '../tools/defineTool.ts';
import { scriptedModel } from '../testing/index.ts';
import type { Agent } from '../agent/types.ts';
import type { InferenceProvider } from '../core/provider.ts';
import type { RunStore } from '../persistence/fileStore.ts';
import type { Inspector } from '../inspect/index.ts';
import { defined } from '../core/defined.ts';

const CITIES: ReadonlyMap<string, { population: number; country: string }> = new Map([
  ['tokyo', { population: 37_115_000, country: 'Japan' }],
  ['paris', { population: 11_277_000, country: 'France' }],
  ['lagos', { population: 16_536_000, country: 'Nigeria' }],
  ['lima', { population: 11_362_000, country: 'Peru' }],
]);

export const DEMO_TASK = 'What is the combined population of Tokyo and Paris, in millions (two decimals)?';

const SCRIPT = [
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
] as const;

function demoTools(confirm: ReadonlySet<string>) {
  const lookupCity = defineTool({
    name: 'lookup_city',
    description: 'Look up the metropolitan population and country of a city. [verified]',
    input: z.object({ city: z.string().describe('City name, e.g. "Tokyo"') }),
    requiresConfirmation: confirm.has('lookup_city'),
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
    requiresConfirmation: confirm.has('add'),
    execute: ({ numbers }) => numbers.reduce((sum, n) => sum + n, 0),
  });
  const divide = defineTool({
    name: 'divide',
    description: 'Divide a by b.',
    input: z.object({ a: z.number(), b: z.number() }),
    requiresConfirmation: confirm.has('divide'),
    execute: ({ a, b }) => {
      if (b === 0) throw new Error('Division by zero.');
      return a / b;
    },
  });
  return [lookupCity, add, divide];
}

export const DEMO_TOOL_NAMES: readonly string[] = ['lookup_city', 'add', 'divide'];

export function chooseDemoModel(env: NodeJS.ProcessEnv = process.env): { model: InferenceProvider; real: boolean } {
  if (env.OPENAI_API_KEY || env.OPENAI_BASE_URL || env.OPENROUTER_API_KEY) {
    return { model: openAICompatible({ env }), real: true };
  }
  if (env.ANTHROPIC_API_KEY) return { model: anthropic({ env }), real: true };
  // Pick the reply from the conversation, not the call count, so a run resumed in a new
  // process (whose model has made no call yet) continues where the script left off.
  const model = scriptedModel((request) => SCRIPT[request.messages.filter((m) => m.role === 'assistant').length]);
  return { model, real: false };
}

/** The demo agent's id, in the runs it makes: `resume`, `approve` and `reject` continue those with the demo agent. */
export const DEMO_AGENT_ID = 'demo';

/** Runs the demo agent made before it had an id carry a generated one. */
const UNNAMED_AGENT_ID = /^agent_[0-9a-f]{8}$/;

export const isDemoAgentId = (agentId: string): boolean => agentId === DEMO_AGENT_ID || UNNAMED_AGENT_ID.test(agentId);

export interface DemoAgentOptions {
  readonly store?: RunStore;
  readonly maxIterations?: number;
  readonly modelName?: string;
  readonly confirm?: readonly string[];
  readonly inspector?: Inspector;
  /** Stream replies token by token. Default: only a real model streams (the terminal prints whole replies). */
  readonly stream?: boolean;
  readonly env?: NodeJS.ProcessEnv;
}

export function createDemoAgent(options: DemoAgentOptions = {}): { agent: Agent; real: boolean } {
  const { model, real } = chooseDemoModel(options.env);
  const agent = createAgent({
    id: DEMO_AGENT_ID,
    model: { provider: model, stream: options.stream ?? real, ...defined({ name: options.modelName }) },
    system: 'You are precise. Use the tools for every fact and every calculation, then answer in one sentence.',
    tools: demoTools(new Set(options.confirm ?? [])),
    policy: { gate: gates.permissive() },
    limits: { maxIterations: options.maxIterations ?? 10 },
    ...(options.store === undefined ? {} : { persistence: { store: options.store } }),
    ...(options.inspector === undefined ? {} : { observe: { inspect: options.inspector.inspect } }),
  });
  return { agent, real };
}
