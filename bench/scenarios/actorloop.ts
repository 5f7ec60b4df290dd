/**
 * Contenders (c) and (d): actorloop through its public API, every default on — the permissive
 * gate, a circuit breaker per tool, stuck detection, the event bus with a live `events$`
 * subscriber and the in-memory journal. The script reaches the agent through a hand-written
 * `InferenceProvider`, the interface any custom model implements. (d) adds the resumable file
 * store (journal, model replies, write-ahead tool records) in a scratch folder.
 */
import { z } from 'zod';
import { createAgent, createFileStore, defineTool, type AgentConfig, type Completion, type CompletionRequest, type InferenceProvider, type StreamEvent } from '../../src/index.ts';
import { TASK, TOOL_DESCRIPTION, TOOL_NAME, expectAnswer, newCounts, nextStep, sleep, type CallCounts, type ReactConfig } from './react.ts';
import type { Contender } from './types.ts';

const usage = { promptTokens: 0, completionTokens: 0, totalTokens: 0 };

/** The react-N script as an actorloop model: reads the last tool message of the request. */
export function scriptedProvider(config: ReactConfig, counts: CallCounts): InferenceProvider {
  const complete = async <TOutput>(request: CompletionRequest<TOutput>): Promise<Completion<TOutput>> => {
    counts.model++;
    if (config.delayMs > 0) await sleep(config.delayMs);
    const last = request.messages.at(-1);
    const step = nextStep(last?.role === 'tool' ? last.content : undefined, config.n);
    return 'call' in step
      ? { text: null, toolCalls: [{ id: `c${step.call}`, name: TOOL_NAME, arguments: JSON.stringify({ i: step.call }) }], finishReason: 'tool_calls', usage, model: 'react' }
      : { text: step.answer, toolCalls: [], finishReason: 'stop', usage, model: 'react' };
  };
  return {
    name: 'scripted-react',
    defaultModel: 'react',
    supportsNativeTools: true,
    supportsStructuredOutput: false,
    complete,
    async *stream<TOutput>(request: CompletionRequest<TOutput>): AsyncIterable<StreamEvent<TOutput>> {
      yield { type: 'done', completion: await complete(request) };
    },
  };
}

/** The echo tool, counting its calls. */
export function echoTool(counts: { tool: number }) {
  return defineTool({
    name: TOOL_NAME,
    description: TOOL_DESCRIPTION,
    input: z.object({ i: z.number().int() }),
    execute: ({ i }) => {
      counts.tool++;
      return String(i);
    },
  });
}

/** Run one actorloop agent on the task and check its answer and that `events$` saw the run. */
export function runAgent(config: AgentConfig, label: string): () => Promise<void> {
  const agent = createAgent(config);
  let seen = 0;
  agent.events$.subscribe(() => {
    seen++;
  });
  return async () => {
    const before = seen;
    const result = await agent.run(TASK);
    expectAnswer(result.text, label);
    if (seen === before) throw new Error(`${label}: the events$ subscriber saw no events.`);
  };
}

function actorloopContender(id: string, label: string, extras: () => Partial<AgentConfig>): Contender {
  return {
    id,
    label,
    create(config) {
      const counts = newCounts();
      const run = runAgent({ model: scriptedProvider(config, counts), tools: [echoTool(counts)], limits: { maxIterations: config.n + 1 }, ...extras() }, label);
      return { counts, run };
    },
  };
}

/** (c) actorloop with every default on. */
export const actorloop: Contender = actorloopContender('actorloop', '(c) actorloop, all defaults (in-memory journal)', () => ({}));

/**
 * (d) (c) plus the resumable file store under `dir`. The caller removes `dir` only when every
 * figure is taken: on some file systems creating files right after deleting thousands is much
 * slower, which would charge the next runs for the bench's own clean-up.
 */
export const actorloopDurable = (dir: string): Contender =>
  actorloopContender('actorloop_durable', '(d) actorloop, durable: resumable file store (journal, replies, write-ahead tool records)', () => ({
    persistence: { store: createFileStore({ dir }) },
  }));
