import { STRATEGY_DEFAULTS } from '../defaults.ts';
import type { ConfiguredStrategy, StrategyContext, Thought } from '../../core/strategy.ts';
import { clip, count, mergeOptions, usable } from './shared.ts';
import { defined } from '../../core/defined.ts';

export interface ChainOptions {
  readonly steps?: number;
  /** By position; missing ones get a generic instruction. */
  readonly instructions?: readonly string[];
  /** `agent` runs each step as a sub-agent, so steps can use its tools. Default `complete`: one model call per step. */
  readonly via?: 'complete' | 'agent';
  /** System prompt of the model calls (`complete` mode). */
  readonly system?: string;
}

export interface ChainState {
  readonly steps: number;
  readonly via: 'complete' | 'agent';
  readonly instructions: readonly string[];
  readonly system?: string;
  readonly thoughts: readonly { readonly id: string; readonly content: string }[];
}

function instruction(state: ChainState, step: number): string {
  const given = state.instructions[step - 1];
  if (given !== undefined) return given;
  return step === state.steps
    ? 'Using the steps above, give the final answer to the task.'
    : `Work out step ${step} of ${state.steps}: the next piece of reasoning toward the answer. Do not give the final answer yet.`;
}

function stepPrompt(task: string, state: ChainState, step: number): string {
  const done = state.thoughts.map((t, i) => `Step ${i + 1}: ${t.content}`).join('\n\n');
  return `Task:\n${task}\n\n${done === '' ? '' : `Steps so far:\n${done}\n\n`}${instruction(state, step)}`;
}

function nextThought(state: ChainState, content: string): Thought {
  const step = state.thoughts.length + 1;
  const previous = state.thoughts.at(-1);
  return { id: `step-${step}`, content, ...(previous === undefined ? {} : { parentId: previous.id }), metadata: { step } };
}

export function chain(configured: ChainOptions = {}): ConfiguredStrategy<ChainOptions, ChainState> {
  count('chain', 'steps', configured.steps, STRATEGY_DEFAULTS.chain.steps); // fail fast on a bad option
  return {
    name: 'chain',
    options: configured,
    // complete: a continue per step, then done; agent: a branch, then an aggregate per step (the last one done).
    maxRounds: (o) => count('chain', 'steps', (o ?? configured).steps, STRATEGY_DEFAULTS.chain.steps) + 1,
    init(given) {
      const o = mergeOptions('chain', configured, given, []);
      return {
        steps: count('chain', 'steps', o.steps, STRATEGY_DEFAULTS.chain.steps),
        via: o.via ?? 'complete',
        instructions: o.instructions ?? [],
        ...defined({ system: o.system }),
        thoughts: [],
      };
    },
    async step(state, context: StrategyContext) {
      const step = state.thoughts.length + 1;
      if (step > state.steps) {
        const last = state.thoughts.at(-1);
        return { kind: 'done', answer: last?.content ?? '', state, detail: `answer from step ${state.thoughts.length}: ${clip(last?.content ?? '')}` };
      }
      const prompt = stepPrompt(context.task, state, step);
      const previous = state.thoughts.at(-1);
      if (state.via === 'agent') {
        return { kind: 'branch', branches: [{ id: `step-${step}`, prompt, ...(previous === undefined ? {} : { parentId: previous.id }), metadata: { step } }], state };
      }
      const content = await context.complete(prompt, defined({ system: state.system }));
      const thought = nextThought(state, content);
      return { kind: 'continue', thought, state: { ...state, thoughts: [...state.thoughts, { id: thought.id, content }] } };
    },
    aggregate(thoughts, state, context) {
      // Agent mode only: the one branch of this step is its thought; the next step branches from it.
      const [result] = thoughts;
      const step = state.thoughts.length + 1;
      if (result === undefined || !usable(result)) {
        return { kind: 'error', reason: `chain step ${step} failed: ${String(result?.metadata?.error ?? 'no answer')}`, state };
      }
      const next: ChainState = { ...state, thoughts: [...state.thoughts, { id: result.id, content: result.content }] };
      if (step >= state.steps) return { kind: 'done', answer: result.content, state: next, detail: `answer from step ${step}: ${clip(result.content)}` };
      return {
        kind: 'branch',
        branches: [{ id: `step-${step + 1}`, prompt: stepPrompt(context.task, next, step + 1), parentId: result.id, metadata: { step: step + 1 } }],
        state: next,
      };
    },
  };
}
