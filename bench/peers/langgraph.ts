/**
 * Peers: LangGraph.js — a `StateGraph` over `MessagesAnnotation` with an agent node, a
 * `ToolNode` and `toolsCondition`, the shape its docs build a ReAct agent from — driven by the
 * react-N script through a `BaseChatModel` subclass (LangChain's custom-model interface). Once
 * without a checkpointer and once with `MemorySaver`, a fresh thread per run, deleted after it.
 */
import { BaseChatModel, type BindToolsInput } from '@langchain/core/language_models/chat_models';
import { AIMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages';
import type { ChatResult } from '@langchain/core/outputs';
import { tool } from '@langchain/core/tools';
import { END, MemorySaver, MessagesAnnotation, START, StateGraph } from '@langchain/langgraph';
import { ToolNode, toolsCondition } from '@langchain/langgraph/prebuilt';
import { z } from 'zod';
import { TASK, TOOL_DESCRIPTION, TOOL_NAME, expectAnswer, newCounts, nextStep, sleep, type CallCounts, type ReactConfig } from '../scenarios/react.ts';
import type { Contender } from '../scenarios/types.ts';

class ScriptedChatModel extends BaseChatModel {
  constructor(
    private readonly config: ReactConfig,
    private readonly counts: CallCounts,
  ) {
    super({});
  }

  _llmType(): string {
    return 'scripted-react';
  }

  override bindTools(_tools: BindToolsInput[]): this {
    return this;
  }

  async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    this.counts.model++;
    if (this.config.delayMs > 0) await sleep(this.config.delayMs);
    const last = messages.at(-1);
    const result = last instanceof ToolMessage ? (typeof last.content === 'string' ? last.content : JSON.stringify(last.content)) : undefined;
    const step = nextStep(result, this.config.n);
    const message =
      'call' in step
        ? new AIMessage({ content: '', tool_calls: [{ id: `c${step.call}`, name: TOOL_NAME, args: { i: step.call }, type: 'tool_call' }] })
        : new AIMessage({ content: step.answer });
    return { generations: [{ text: typeof message.content === 'string' ? message.content : '', message }] };
  }
}

function buildGraph(config: ReactConfig, counts: CallCounts, checkpointer?: MemorySaver) {
  const echo = tool(
    ({ i }: { i: number }) => {
      counts.tool++;
      return String(i);
    },
    { name: TOOL_NAME, description: TOOL_DESCRIPTION, schema: z.object({ i: z.number().int() }) },
  );
  const model = new ScriptedChatModel(config, counts).bindTools([echo]);
  return new StateGraph(MessagesAnnotation)
    .addNode('agent', async (state) => ({ messages: [await model.invoke(state.messages)] }))
    .addNode('tools', new ToolNode([echo]))
    .addEdge(START, 'agent')
    .addConditionalEdges('agent', toolsCondition, ['tools', END])
    .addEdge('tools', 'agent')
    .compile(checkpointer === undefined ? {} : { checkpointer });
}

const finalText = (messages: readonly BaseMessage[]): unknown => messages.at(-1)?.content;

export const langgraph: Contender = {
  id: 'langgraph',
  label: 'LangGraph.js 1.x: StateGraph + ToolNode, custom BaseChatModel',
  create(config) {
    const counts = newCounts();
    const graph = buildGraph(config, counts);
    return {
      counts,
      async run() {
        const state = await graph.invoke({ messages: [{ role: 'user', content: TASK }] }, { recursionLimit: 2 * config.n + 5 });
        expectAnswer(finalText(state.messages), langgraph.label);
      },
    };
  },
};

let threads = 0;

export const langgraphMemory: Contender = {
  id: 'langgraph_memory',
  label: 'LangGraph.js 1.x: the same graph with MemorySaver (a thread per run)',
  create(config) {
    const counts = newCounts();
    const saver = new MemorySaver();
    const graph = buildGraph(config, counts, saver);
    return {
      counts,
      async run() {
        const threadId = `t${threads++}`;
        const state = await graph.invoke({ messages: [{ role: 'user', content: TASK }] }, { recursionLimit: 2 * config.n + 5, configurable: { thread_id: threadId } });
        await saver.deleteThread(threadId);
        expectAnswer(finalText(state.messages), langgraphMemory.label);
      },
    };
  },
};
