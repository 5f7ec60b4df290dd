import { STRATEGY_DEFAULTS } from '../defaults.ts';
import type { ConfiguredStrategy, StrategyDecision, Thought } from '../../core/strategy.ts';
import { clip, count, mergeOptions, normalizeAnswer, scoreAll, usable, type Scorer } from './shared.ts';

export interface VoteOptions {
  readonly samples?: number;
  /** Each sample weighs its score. Default: one sample, one vote. */
  readonly scorer?: Scorer | 'model';
  /** What makes two answers the same (default {@link normalizeAnswer}). */
  readonly normalize?: (answer: string) => string;
  /** The prompt of every sample (default: the task). */
  readonly prompt?: string;
}

export interface VoteState {
  readonly samples: number;
  readonly prompt: string | null;
}

interface Tally {
  readonly key: string;
  readonly first: Thought;
  weight: number;
  votes: number;
}

export function vote(configured: VoteOptions = {}): ConfiguredStrategy<VoteOptions, VoteState> {
  const normalize = configured.normalize ?? normalizeAnswer;
  const scorer = configured.scorer;
  count('vote', 'samples', configured.samples, STRATEGY_DEFAULTS.vote.samples);
  return {
    name: 'vote',
    options: configured,
    maxRounds: 2,
    init(given) {
      const o = mergeOptions('vote', configured, given, ['scorer', 'normalize']);
      return { samples: count('vote', 'samples', o.samples, STRATEGY_DEFAULTS.vote.samples), prompt: o.prompt ?? null };
    },
    step(state, context) {
      const prompt = state.prompt ?? context.task;
      const branches = Array.from({ length: state.samples }, (_, i) => ({ id: `s${i}`, prompt, metadata: { sample: i } }));
      return { kind: 'branch', branches, state, detail: `${state.samples} independent samples` };
    },
    async aggregate(thoughts, state, context): Promise<StrategyDecision<VoteState>> {
      const ok = thoughts.filter(usable);
      const failed = thoughts.length - ok.length;
      if (ok.length === 0) return { kind: 'error', reason: `every sample failed (${thoughts.length})`, state };
      const weights = scorer === undefined ? ok.map(() => 1) : (await scoreAll(ok, scorer, context)).map((t) => t.score);
      const tallies = new Map<string, Tally>();
      ok.forEach((thought, i) => {
        const key = normalize(thought.content);
        const tally = tallies.get(key) ?? { key, first: thought, weight: 0, votes: 0 };
        tally.weight += weights[i] ?? 0;
        tally.votes += 1;
        tallies.set(key, tally);
      });
      // Map keeps insertion order, so a strict comparison leaves ties to the answer seen first.
      let winner: Tally | undefined;
      for (const tally of tallies.values()) if (winner === undefined || tally.weight > winner.weight) winner = tally;
      const win = winner as Tally;
      const failures = failed === 0 ? '' : ` (${failed} failed)`;
      const detail =
        scorer === undefined
          ? `${win.votes}/${ok.length} votes for "${clip(win.key, 40)}"${failures}`
          : `"${clip(win.key, 40)}" won with score ${win.weight.toFixed(2)} of ${weights.reduce((a, b) => a + b, 0).toFixed(2)} (${win.votes}/${ok.length} samples)${failures}`;
      return { kind: 'done', answer: win.first.content, state, detail };
    },
  };
}
