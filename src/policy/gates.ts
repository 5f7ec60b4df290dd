/**
 * The built-in policy gates behind one `gates` object: permissive, rules, cedar, compose and
 * fromFunction. Every gate is a plain `PolicyGate`, so user gates compose with these.
 */
import { cedarGate } from './cedar.ts';
import { ConfigurationError } from '../core/errors.ts';
import { ALLOW } from './decision.ts';
import { runGate, type EvaluateGateOptions } from './evaluateGate.ts';
import { rulesGate } from './rules.ts';
import type { GateContext, GateDecision, PolicyGate, ProposedAction } from './types.ts';

const PERMISSIVE: PolicyGate = Object.freeze({ name: 'permissive', evaluate: () => ALLOW });

/**
 * Chains gates in order. Deny beats confirm beats allow: the first deny wins and stops the chain;
 * a confirm is remembered while the rest of the chain still runs (a later deny still denies); a
 * modify hands its arguments to the next gate. The result is a confirm (its reasons joined with
 * "; ", carrying the modified arguments if any gate modified) if any gate asked, else a modify
 * carrying every modification's reason if any gate modified, else allow. Each gate runs through
 * {@link runGate}, so a failing member denies (fail closed) instead of throwing. Synchronous
 * members keep the chain synchronous.
 *
 * @example
 * ```ts
 * const gate = gates.compose(gates.rules({ deny: ['rm'] }), redactSecretsGate);
 * await evaluateGate(gate, action, context); // deny from rules, else redactSecretsGate's decision
 * ```
 */
function compose(...members: readonly PolicyGate[]): PolicyGate {
  return composeWith(members, {});
}

/**
 * {@link compose} with options for its members' evaluation (e.g. `onGateError` to journal a
 * failing member).
 *
 * @example
 * ```ts
 * const gate = gates.composeWith([rules, custom], { onGateError: (e) => journal.warn(e.toJSON()) });
 * ```
 */
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

/** What a chain has collected so far: the reasons of its modifications and of its requests to confirm. */
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
 * A gate from a function, for one-off policies. It may allow, deny, modify or ask a human
 * (`{ kind: 'confirm', reason }`: the run waits in `awaitingHuman` until approved or rejected).
 *
 * @example
 * ```ts
 * const noDeletes = gates.fromFunction('no-deletes', (action) =>
 *   action.tool.startsWith('delete_') ? { kind: 'deny', reason: 'Deleting is not allowed here.' } : { kind: 'allow' });
 * const askFirst = gates.fromFunction('ask-before-paying', (action) =>
 *   action.tool === 'pay' ? { kind: 'confirm', reason: 'Payments need a human.' } : { kind: 'allow' });
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
 * The built-in gates.
 *
 * @example
 * ```ts
 * const gate = gates.compose(
 *   gates.rules({ deny: ['shell_*'], permissions: { deny: ['net.*'] } }),
 *   gates.fromFunction('redact', (action) => ({ kind: 'modify', arguments: redact(action.arguments), reason: 'redacted secrets' })),
 * );
 * createAgent({ model, tools, policy: { gate } });
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
