import { STRATEGY_DEFAULTS } from '../defaults.ts';
import type { ConfiguredStrategy, StrategyContext, StrategyDecision } from '../../core/strategy.ts';
import { chain } from './chain.ts';
import { firstNumber, mergeOptions } from './shared.ts';
import { tree } from './tree.ts';
import { vote } from './vote.ts';
import { defined } from '../../core/defined.ts';

type Band = 'easy' | 'medium' | 'hard';
type AnyConfigured = ConfiguredStrategy<unknown, unknown>;

export interface AdaptiveOptions {
  readonly difficulty?: (task: string, context: StrategyContext) => number | Promise<number>;
  readonly routes?: { readonly easy?: ConfiguredStrategy; readonly medium?: ConfiguredStrategy; readonly hard?: ConfiguredStrategy };
  readonly mediumFrom?: number;
  readonly hardFrom?: number;
}

export interface AdaptiveState {
  readonly band: Band;
  readonly strategy: string;
  readonly difficulty: number;
  readonly why: string;
  /** The chosen strategy's own state. */
  readonly inner: unknown;
  /** The choice is announced in the first decision's detail. */
  readonly announced: boolean;
}

async function modelDifficulty(task: string, context: StrategyContext): Promise<number> {
  const reply = await context.complete(
    `Rate the difficulty of this task from 1 (trivial: one obvious step) to 5 (hard: many steps, uncertain, needs exploring alternatives). Reply with the digit only.\n\nTask:\n${task}`,
    { temperature: 0 },
  );
  return firstNumber(reply) ?? Number.NaN;
}

export function adaptive(configured: AdaptiveOptions = {}): ConfiguredStrategy<AdaptiveOptions, AdaptiveState> {
  const routes: Record<Band, AnyConfigured> = {
    easy: (configured.routes?.easy ?? chain()) as AnyConfigured,
    medium: (configured.routes?.medium ?? vote({ samples: 3 })) as AnyConfigured,
    hard: (configured.routes?.hard ?? tree()) as AnyConfigured,
  };
  const rate = configured.difficulty;
  const routeOf = (state: AdaptiveState): AnyConfigured => routes[state.band];
  const boundOf = (s: AnyConfigured): number => {
    const own = typeof s.maxRounds === 'function' ? s.maxRounds(s.options) : s.maxRounds;
    return own ?? STRATEGY_DEFAULTS.maxRounds;
  };
  const announce = (state: AdaptiveState, decision: StrategyDecision<unknown>): StrategyDecision<AdaptiveState> => {
    const next: AdaptiveState = { ...state, inner: decision.state, announced: true };
    const detail = state.announced ? decision.detail : `${state.why}${decision.detail === undefined ? '' : `; ${decision.detail}`}`;
    return { ...decision, state: next, ...defined({ detail }) };
  };
  return {
    name: 'adaptive',
    options: configured,
    maxRounds: Math.max(boundOf(routes.easy), boundOf(routes.medium), boundOf(routes.hard)),
    async init(given, context) {
      const o = mergeOptions('adaptive', configured, given, ['difficulty', 'routes']);
      const mediumFrom = o.mediumFrom ?? STRATEGY_DEFAULTS.adaptive.mediumFrom;
      const hardFrom = o.hardFrom ?? STRATEGY_DEFAULTS.adaptive.hardFrom;
      const raw = rate === undefined ? await modelDifficulty(context.task, context) : await rate(context.task, context);
      const source = rate === undefined ? 'rated by the model' : 'from the difficulty function';
      const valid = Number.isFinite(raw);
      // An unreadable rating falls back to the middle band rather than failing the run.
      const difficulty = valid ? Math.min(5, Math.max(1, raw)) : mediumFrom;
      const band: Band = difficulty >= hardFrom ? 'hard' : difficulty >= mediumFrom ? 'medium' : 'easy';
      const route = routes[band];
      const rule = band === 'hard' ? `≥ ${hardFrom}` : band === 'medium' ? `≥ ${mediumFrom} and < ${hardFrom}` : `< ${mediumFrom}`;
      const why = valid
        ? `chose ${route.name} (${band}): difficulty ${difficulty}/5 ${source}, ${rule}`
        : `chose ${route.name} (${band}): the difficulty rating was unreadable, so the medium band`;
      const inner = await route.init(route.options, context);
      return { band, strategy: route.name, difficulty, why, inner, announced: false };
    },
    async step(state, context) {
      return announce(state, await routeOf(state).step(state.inner, context));
    },
    async aggregate(thoughts, state, context) {
      return announce(state, await routeOf(state).aggregate(thoughts, state.inner, context));
    },
  };
}
