/**
 * The loopback-HTTP contenders in actorloop's own install, from the floor up: the bare loop on
 * the `openai` client, the same loop on actorloop's provider (what the provider costs alone), the
 * XState floor on the `openai` client, and actorloop with its OpenAI-compatible provider.
 */
import OpenAI from 'openai';
import { createActor, toPromise } from 'xstate';
import { openAICompatible, type Message } from '../../src/index.ts';
import { echoTool, runAgent } from './actorloop.ts';
import { bareRun, type FloorMessage, type FloorPhases } from './bareLoop.ts';
import { TOOL_DESCRIPTION, TOOL_NAME, expectAnswer, newCounts, reactN, type CallCounts } from './react.ts';
import type { HttpContender, HttpTarget } from './types.ts';
import { createFloorMachine } from './xstateFloor.ts';

const parameters = { type: 'object', properties: { i: { type: 'integer' } }, required: ['i'] };

const echo = async (call: NonNullable<FloorMessage['call']>, counts: CallCounts): Promise<FloorMessage> => {
  counts.tool++;
  return { role: 'tool', content: String((JSON.parse(call.arguments) as { i: number }).i), call };
};

/** The floors' phases with the model behind the `openai` client. */
function openaiPhases(target: HttpTarget, counts: CallCounts): FloorPhases {
  const client = new OpenAI({ baseURL: target.baseURL, apiKey: 'bench' });
  const tools: OpenAI.Chat.Completions.ChatCompletionTool[] = [{ type: 'function', function: { name: TOOL_NAME, description: TOOL_DESCRIPTION, parameters } }];
  const toOpenAI = (m: FloorMessage): OpenAI.Chat.Completions.ChatCompletionMessageParam =>
    m.role === 'tool'
      ? { role: 'tool', tool_call_id: m.call?.id ?? '', content: m.content ?? '' }
      : m.role === 'user'
        ? { role: 'user', content: m.content ?? '' }
        : { role: 'assistant', content: m.content, ...(m.call === undefined ? {} : { tool_calls: [{ id: m.call.id, type: 'function', function: { name: m.call.name, arguments: m.call.arguments } }] }) };
  return {
    async reason(messages) {
      const message = (await client.chat.completions.create({ model: target.model, messages: messages.map(toOpenAI), tools })).choices[0]?.message;
      const call = message?.tool_calls?.[0];
      if (call === undefined) return { role: 'assistant', content: message?.content ?? null };
      if (call.type !== 'function') throw new Error('the bench server sent a non-function tool call');
      return { role: 'assistant', content: null, call: { id: call.id, name: call.function.name, arguments: call.function.arguments } };
    },
    act: (call) => echo(call, counts),
  };
}

/** The same phases with the model behind actorloop's provider. */
function providerPhases(target: HttpTarget, counts: CallCounts): FloorPhases {
  const provider = openAICompatible({ baseURL: target.baseURL, apiKey: 'bench', model: target.model });
  const tools = [{ name: TOOL_NAME, description: TOOL_DESCRIPTION, parameters }];
  const toMessage = (m: FloorMessage): Message =>
    m.role === 'tool'
      ? { role: 'tool', toolCallId: m.call?.id ?? '', content: m.content ?? '' }
      : m.role === 'user'
        ? { role: 'user', content: m.content ?? '' }
        : { role: 'assistant', content: m.content, ...(m.call === undefined ? {} : { toolCalls: [m.call] }) };
  return {
    async reason(messages) {
      const completion = await provider.complete({ messages: messages.map(toMessage), tools });
      const call = completion.toolCalls[0];
      return call === undefined ? { role: 'assistant', content: completion.text } : { role: 'assistant', content: null, call };
    },
    act: (call) => echo(call, counts),
  };
}

export const bareOpenAI: HttpContender = {
  id: 'bare_openai',
  label: '(a) bare async loop on the openai client',
  create(target) {
    const counts = newCounts();
    const phases = openaiPhases(target, counts);
    return { counts, run: () => bareRun(phases, reactN(target), bareOpenAI.label) };
  },
};

export const bareProvider: HttpContender = {
  id: 'bare_provider',
  label: "(a') the same bare loop on actorloop's openAICompatible provider",
  create(target) {
    const counts = newCounts();
    const phases = providerPhases(target, counts);
    return { counts, run: () => bareRun(phases, reactN(target), bareProvider.label) };
  },
};

export const xstateFloorHttp: HttpContender = {
  id: 'xstate_http',
  label: '(b) XState floor on the openai client',
  create(target) {
    const counts = newCounts();
    const machine = createFloorMachine(reactN(target), openaiPhases(target, counts));
    return {
      counts,
      async run() {
        const actor = createActor(machine);
        actor.start();
        expectAnswer(await toPromise(actor), xstateFloorHttp.label);
      },
    };
  },
};

export const actorloopHttp: HttpContender = {
  id: 'actorloop_http',
  label: '(c) actorloop, all defaults, openAICompatible provider',
  create(target) {
    const counts = newCounts();
    const model = openAICompatible({ baseURL: target.baseURL, apiKey: 'bench', model: target.model });
    return { counts, run: runAgent({ model, tools: [echoTool(counts)], limits: { maxIterations: reactN(target) + 1 } }, actorloopHttp.label) };
  },
};
