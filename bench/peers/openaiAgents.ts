/**
 * Peer: OpenAI Agents JS — `run(agent, task)` with a function tool — driven by the react-N
 * script through a hand-written `Model` (its custom-model interface). Tracing is off, as a
 * benchmark of the loop (not of the tracing exporter) should have it.
 */
import { Agent, Usage, run, setTracingDisabled, tool, type Model, type ModelRequest, type ModelResponse } from '@openai/agents';
import { z } from 'zod';
import { TASK, TOOL_DESCRIPTION, TOOL_NAME, expectAnswer, newCounts, nextStep, sleep, type CallCounts, type ReactConfig } from '../scenarios/react.ts';
import type { Contender } from '../scenarios/types.ts';

setTracingDisabled(true);

function lastToolResult(request: ModelRequest): string | undefined {
  if (typeof request.input === 'string') return undefined;
  const last = request.input.at(-1);
  return last?.type === 'function_call_result' ? JSON.stringify(last.output) : undefined;
}

function scriptedModel(config: ReactConfig, counts: CallCounts): Model {
  return {
    async getResponse(request): Promise<ModelResponse> {
      counts.model++;
      if (config.delayMs > 0) await sleep(config.delayMs);
      const step = nextStep(lastToolResult(request), config.n);
      return {
        usage: new Usage(),
        output:
          'call' in step
            ? [{ type: 'function_call', callId: `c${step.call}`, name: TOOL_NAME, arguments: JSON.stringify({ i: step.call }), status: 'completed' }]
            : [{ type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: step.answer }] }],
      };
    },
    getStreamedResponse() {
      throw new Error('The react-N script answers getResponse only.');
    },
  };
}

/** The echo tool as an Agents JS function tool, counting its calls. */
export function agentsEcho(counts: { tool: number }) {
  return tool({
    name: TOOL_NAME,
    description: TOOL_DESCRIPTION,
    parameters: z.object({ i: z.number().int() }),
    execute: ({ i }) => {
      counts.tool++;
      return String(i);
    },
  });
}

export const openaiAgents: Contender = {
  id: 'openai_agents',
  label: 'OpenAI Agents JS 0.20: run(), custom Model',
  create(config) {
    const counts = newCounts();
    const agent = new Agent({ name: 'react', instructions: 'Count.', model: scriptedModel(config, counts), tools: [agentsEcho(counts)] });
    return {
      counts,
      async run() {
        const result = await run(agent, TASK, { maxTurns: config.n + 1 });
        expectAnswer(result.finalOutput, openaiAgents.label);
      },
    };
  },
};
