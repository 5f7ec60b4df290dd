/**
 * The built-in policy gates behind one `gates` object: permissive, rules, compose and
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
 * Chains gates in order. The first deny wins and stops the chain; a modify hands its arguments
 * to the next gate; the result is a modify carrying every modification's reason (joined with
 * "; ") if any gate modified, else allow. Each gate runs through {@link runGate}, so a failing
 * member denies (fail closed) instead of throwing. Synchronous members keep the chain synchronous.
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

  function continueFrom(index: number, action: ProposedAction, reasons: string[], context: GateContext): GateDecision | Promise<GateDecision> {
    let current = action;
    for (let i = index; i < list.length; i += 1) {
      const decision = runGate(list[i]!, current, context, options);
      if (decision instanceof Promise) {
        return decision.then((settled) => {
          const next = apply(settled, current, reasons);
          return next === undefined ? settled : continueFrom(i + 1, next, reasons, context);
        });
      }
      const next = apply(decision, current, reasons);
      if (next === undefined) return decision;
      current = next;
    }
    return reasons.length === 0 ? ALLOW : { kind: 'modify', arguments: current.arguments, reason: reasons.join('; ') };
  }

  return {
    name,
    evaluate: (action, context) => continueFrom(0, action, [], context),
  };
}

// The action the next gate sees, or undefined when `decision` ends the chain (a deny).
function apply(decision: GateDecision, action: ProposedAction, reasons: string[]): ProposedAction | undefined {
  if (decision.kind === 'deny') return undefined;
  if (decision.kind === 'allow') return action;
  reasons.push(decision.reason);
  return { ...action, arguments: decision.arguments };
}

/**
 * A gate from a function, for one-off policies.
 *
 * @example
 * ```ts
 * const noDeletes = gates.fromFunction('no-deletes', (action) =>
 *   action.tool.startsWith('delete_') ? { kind: 'deny', reason: 'Deleting is not allowed here.' } : { kind: 'allow' });
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
  /** Allow/deny lists of tool-name and permission globs; deny wins (see `rulesGate`). */
  rules: rulesGate,
  /** Cedar policies over agent, tool (with groups) and arguments (see `cedarGate`). */
  cedar: cedarGate,
  compose,
  composeWith,
  fromFunction,
} as const;
