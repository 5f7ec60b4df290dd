/** Every gate is a plain `PolicyGate`, so user gates compose with these. */
import { cedarGate } from './cedar.ts';
import { ConfigurationError } from '../core/errors.ts';
import { ALLOW } from './decision.ts';
import { runGate, type EvaluateGateOptions } from './evaluateGate.ts';
import { rulesGate } from './rules.ts';
import type { GateContext, GateDecision, PolicyGate, ProposedAction } from './types.ts';

const PERMISSIVE: PolicyGate = Object.freeze({ name: 'permissive', evaluate: () => ALLOW });

/**
 * Deny beats confirm beats allow: the first deny stops the chain, a confirm is remembered while later gates still run,
 * a modify hands its arguments on. A failing member denies (fail closed); synchronous members keep the chain synchronous.
 */
function compose(...members: readonly PolicyGate[]): PolicyGate {
  return composeWith(members, {});
}

/** {@link compose} with options for its members' evaluation (e.g. `onGateError`). */
function composeWith(members: readonly PolicyGate[], options: EvaluateGateOptions): PolicyGate {
  const list = [...members];
  const name = `compose(${list.map((gate) => gate?.name ?? 'unnamed gate').join(', ')})`;

  function continueFrom(index: number, action: ProposedAction, chain: Chain, context: GateContext): GateDecision | Promise<GateDecision> {
    let current = action;
    for (let i = index; i < list.length; i += 1) {
      const decision = runGate(list[i]!, current, context, options);
      if (decision instanceof Promise) {
        return decision.then((settled) => {
          const next = apply(settled, current, chain);
          return next === undefined ? settled : continueFrom(i + 1, next, chain, context);
        });
      }
      const next = apply(decision, current, chain);
      if (next === undefined) return decision;
      current = next;
    }
    return outcome(chain, current);
  }

  return {
    name,
    evaluate: (action, context) => continueFrom(0, action, { modified: [], confirms: [], changed: false }, context),
  };
}

interface Chain {
  readonly modified: string[];
  readonly confirms: string[];
  /** Whether the arguments the next gate sees are no longer the model's. */
  changed: boolean;
}

// The action the next gate sees, or undefined when `decision` ends the chain (a deny).
function apply(decision: GateDecision, action: ProposedAction, chain: Chain): ProposedAction | undefined {
  switch (decision.kind) {
    case 'deny':
      return undefined;
    case 'allow':
      return action;
    case 'confirm':
      chain.confirms.push(decision.reason);
      if (decision.arguments === undefined) return action;
      chain.changed = true;
      return { ...action, arguments: decision.arguments };
    case 'modify':
      chain.modified.push(decision.reason);
      chain.changed = true;
      return { ...action, arguments: decision.arguments };
  }
}

function outcome(chain: Chain, action: ProposedAction): GateDecision {
  if (chain.confirms.length > 0) {
    const modified = chain.modified.length === 0 ? '' : `; the arguments were modified: ${chain.modified.join('; ')}`;
    const reason = `${chain.confirms.join('; ')}${modified}`;
    return chain.changed ? { kind: 'confirm', reason, arguments: action.arguments } : { kind: 'confirm', reason };
  }
  return chain.modified.length === 0 ? ALLOW : { kind: 'modify', arguments: action.arguments, reason: chain.modified.join('; ') };
}

/**
 * A gate from a function; `{ kind: 'confirm', reason }` makes the run wait for a human.
 * @example
 * ```ts
 * gates.fromFunction('no-deletes', (a) => (a.tool.startsWith('delete_') ? { kind: 'deny', reason: 'No deleting here.' } : { kind: 'allow' }));
 * ```
 */
function fromFunction(
  name: string,
  evaluate: (action: ProposedAction, context: GateContext) => GateDecision | Promise<GateDecision>,
): PolicyGate {
  if (typeof name !== 'string' || name === '' || typeof evaluate !== 'function') {
    throw new ConfigurationError('gates.fromFunction(name, fn) needs a non-empty name and a function.');
  }
  return { name, evaluate };
}

/**
 * @example
 * ```ts
 * createAgent({ model, tools, policy: { gate: gates.compose(gates.rules({ deny: ['shell_*'] }), myGate) } });
 * ```
 */
export const gates = {
  /** Allows every call. The default when an agent has no gate. */
  permissive: (): PolicyGate => PERMISSIVE,
  /** Allow/deny/confirm lists of tool-name and permission globs; deny wins, then confirm (see `rulesGate`). */
  rules: rulesGate,
  /** Cedar policies over agent, tool (with groups) and arguments; `@confirm` forbids ask a human (see `cedarGate`). */
  cedar: cedarGate,
  compose,
  composeWith,
  fromFunction,
} as const;
