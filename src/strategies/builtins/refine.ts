import { STRATEGY_DEFAULTS } from '../defaults.ts';
import type { ConfiguredStrategy, StrategyContext, StrategyDecision } from '../../core/strategy.ts';
import { clip, count, mergeOptions, usable } from './shared.ts';

/** Replies `ACCEPT` (or whatever `accept` recognises) or feedback. */
export type Critic = (draft: string, context: StrategyContext) => string | Promise<string>;

export interface RefineOptions {
  /** Rewrites after the first draft. */
  readonly maxRevisions?: number;
  readonly critique?: Critic;
  /** Default: the reply starts with ACCEPT. */
  readonly accept?: (feedback: string) => boolean;
}

export interface RefineState {
  readonly maxRevisions: number;
  readonly draft: { readonly id: string; readonly content: string } | null;
  readonly feedback: string | null;
  readonly revisions: number;
}

const CRITIC_SYSTEM = 'You are a strict reviewer. You accept only answers that are correct and complete.';

async function modelCritique(draft: string, context: StrategyContext): Promise<string> {
  return context.complete(
    `Task:\n${context.task}\n\nProposed answer:\n${draft}\n\nIf the answer fully and correctly solves the task, reply with the single word ACCEPT. Otherwise reply with specific, actionable feedback for improving it (do not rewrite it yourself).`,
    { system: CRITIC_SYSTEM, temperature: 0 },
  );
}

const startsWithAccept = (feedback: string): boolean => /^\W*accept(ed)?\b/i.test(feedback.trim());

export function refine(configured: RefineOptions = {}): ConfiguredStrategy<RefineOptions, RefineState> {
  const critique = configured.critique ?? modelCritique;
  const accept = configured.accept ?? startsWithAccept;
  const revisionsOf = (o: RefineOptions | undefined) =>
    count('refine', 'maxRevisions', (o ?? configured).maxRevisions, STRATEGY_DEFAULTS.refine.maxRevisions, 0);
  revisionsOf(configured);
  return {
    name: 'refine',
    options: configured,
    // The draft and each revision: a branch and an aggregate.
    maxRounds: (o) => 2 * (revisionsOf(o) + 1),
    init(given) {
      const o = mergeOptions('refine', configured, given, ['critique', 'accept']);
      return { maxRevisions: revisionsOf(o), draft: null, feedback: null, revisions: 0 };
    },
    step(state, context) {
      if (state.draft === null) return { kind: 'branch', branches: [{ id: 'draft', prompt: context.task, metadata: { revision: 0 } }], state };
      return {
        kind: 'branch',
        branches: [
          {
            id: `revision-${state.revisions}`,
            prompt: `Task:\n${context.task}\n\nYour previous answer:\n${state.draft.content}\n\nA reviewer's feedback:\n${state.feedback ?? ''}\n\nRewrite the answer so it addresses the feedback. Reply with the full improved answer.`,
            parentId: state.draft.id,
            metadata: { revision: state.revisions },
          },
        ],
        state,
      };
    },
    async aggregate(thoughts, state, context): Promise<StrategyDecision<RefineState>> {
      const [result] = thoughts;
      if (result === undefined || !usable(result)) {
        const why = String(result?.metadata?.error ?? 'no answer');
        if (state.draft === null) return { kind: 'error', reason: `the first draft failed: ${why}`, state };
        return { kind: 'done', answer: state.draft.content, state, detail: `revision ${state.revisions} failed (${clip(why)}); keeping ${state.draft.id}` };
      }
      const draft = { id: result.id, content: result.content };
      const feedback = await critique(draft.content, context);
      const next: RefineState = { ...state, draft, feedback };
      if (accept(feedback)) {
        return { kind: 'done', answer: draft.content, state: next, detail: `critic accepted ${draft.id} after ${state.revisions} revision${state.revisions === 1 ? '' : 's'}` };
      }
      if (state.revisions >= state.maxRevisions) {
        return { kind: 'done', answer: draft.content, state: next, detail: `max revisions (${state.maxRevisions}) reached; critic still says: ${clip(feedback)}` };
      }
      return { kind: 'revise', feedback, state: { ...next, revisions: state.revisions + 1 }, detail: `revision ${state.revisions + 1}: ${clip(feedback)}` };
    },
  };
}
