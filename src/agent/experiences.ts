/** Which experiences a run was shown travels with the run, so whichever process ends it credits them (once, by run id). */
import type { Hydrator } from '../core/hooks.ts';
import { contentText, type Message, type UserMessage } from '../core/messages.ts';
import type { InferenceProvider } from '../core/provider.ts';
import type { LoopResult } from '../core/run.ts';
import { formatExperiences, learnExperiences, type Experience, type ExperienceStore } from '../experiences/index.ts';
import type { Trace } from '../traces/trace.ts';
import type { Traces } from '../traces/query.ts';
import { ConfigurationError } from '../core/errors.ts';
import { defined } from '../core/defined.ts';

export interface ExperiencesConfig {
  readonly store: ExperienceStore;
  /** Experiences shown per run. Default 5. */
  readonly topK?: number;
  /** The project the agent works in: experiences scoped to it (or to a folder above it) apply. */
  readonly project?: string;
  /** Learned experiences are active at once instead of pending until `accept(id)`. Default false. */
  readonly autoAccept?: boolean;
  /** The model `learn` asks. Default: the agent's own. */
  readonly model?: InferenceProvider;
}

/** What `agent.experiences` offers. */
export interface AgentExperiences {
  readonly store: ExperienceStore;
  /** Ask the model what a finished run teaches and add it to the store (pending unless `autoAccept`). */
  learn(run: LoopResult | string, options?: { readonly autoAccept?: boolean; readonly signal?: AbortSignal }): Promise<Experience[]>;
  accept(id: string): Promise<Experience>;
}

export interface ExperienceMemory {
  /** Runs before the agent's own hydrator. */
  readonly hydrator: Hydrator;
  /** Never rejects. */
  settle(result: LoopResult, shown: readonly string[]): Promise<void>;
  readonly api: AgentExperiences;
}

export function createExperienceMemory(
  config: ExperiencesConfig,
  agent: { readonly model: InferenceProvider; readonly modelName?: string; tools(): readonly string[]; readonly traces: Traces; redact<T>(value: T): T },
): ExperienceMemory {
  const { store } = config;
  return {
    hydrator: async ({ task }) => {
      const items = store.relevant(task, { topK: config.topK ?? 5, ...defined({ project: config.project }), tools: [...agent.tools()] });
      if (items.length === 0) return { inject: [] };
      return { inject: [{ role: 'system', content: formatExperiences(items) }], experiences: items.map((item) => item.id) };
    },
    async settle(result, shown) {
      if (shown.length === 0 || result.status === 'cancelled') return;
      try {
        await store.recordOutcome(shown, result.status === 'done' ? 'success' : 'failure', { runId: result.runId });
      } catch (error) {
        // Statistics are a side benefit: a failed write must not turn a finished run into a failed one.
        console.warn(`[actorloop] experiences: the outcome of run ${result.runId} was not recorded: ${error instanceof Error ? error.message : String(error)}`);
      }
    },
    api: {
      store,
      async learn(run, options = {}) {
        const finished = typeof run === 'string' ? await fromTrace(agent.traces, run) : { runId: run.runId, task: taskOf(run.messages), status: run.status, reason: run.reason, messages: [...run.messages] };
        const learned = await learnExperiences({
          model: config.model ?? agent.model,
          run: finished,
          existing: store.list({ status: 'active' }),
          ...defined({ project: config.project }),
          ...(config.model === undefined && agent.modelName !== undefined ? { modelName: agent.modelName } : {}),
          ...defined({ signal: options.signal }),
        });
        const status = (options.autoAccept ?? config.autoAccept) === true ? 'active' : 'pending';
        const added: Experience[] = [];
        // Redacted here too: a store opened without the agent's secret rules must not receive a secret.
        for (const candidate of learned.candidates) added.push(await store.add(agent.redact(candidate), { status }));
        return added;
      },
      accept: (id) => store.accept(id),
    },
  };
}

/** Pre-hydrated references come before the task, as untrusted user messages: they are not it. */
function taskOf(messages: readonly Message[]): string {
  const first = messages.find((message): message is UserMessage => message.role === 'user' && message.untrusted === undefined);
  return first === undefined ? '' : contentText(first.content);
}

async function fromTrace(traces: Traces, runId: string) {
  const trace = await traces.get(runId);
  if (trace === undefined) throw new ConfigurationError(`experiences.learn: no run ${runId} in this agent's store or journal. Pass the run's result instead.`);
  if (trace.status === 'running') throw new ConfigurationError(`experiences.learn: run ${runId} has not finished; learn from it once it has.`);
  return { runId, task: trace.task, status: trace.status, ...defined({ reason: trace.context.reason }), messages: transcriptOf(trace) };
}

function transcriptOf(trace: Trace): Message[] {
  const messages: Message[] = [{ role: 'user', content: trace.task }];
  for (const step of trace.steps) {
    if (step.type !== 'llm_call') continue;
    const calls = trace.steps.filter((s) => s.type === 'tool_call' && s.parentIds.includes(step.id));
    const text = typeof step.data['text'] === 'string' ? step.data['text'] : null;
    if (calls.length === 0) {
      messages.push({ role: 'assistant', content: text ?? '' });
      continue;
    }
    messages.push({ role: 'assistant', content: text, toolCalls: calls.map((call) => ({ id: String(call.data['toolCallId']), name: String(call.data['tool']), arguments: '{}' })) });
    for (const call of calls) {
      const result = trace.steps.find((s) => s.id === call.id.replace(/^call_/, 'result_'));
      const outcome = result === undefined ? `not run (${String(call.data['decision'] ?? 'blocked')}${call.data['reason'] === undefined ? '' : `: ${String(call.data['reason'])}`})` : String(result.data['status']);
      messages.push({ role: 'tool', toolCallId: String(call.data['toolCallId']), name: String(call.data['tool']), content: outcome, ...(outcome === 'ok' ? {} : { isError: true }) });
    }
  }
  return messages;
}
