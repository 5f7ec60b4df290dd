/**
 * Policy gates: every proposed tool call is allowed, denied, modified or left to a human before it runs.
 *
 * @example
 * ```ts
 * import { gates, evaluateGate } from './policy/index.ts';
 * const gate = gates.compose(gates.rules({ allow: ['read_*', 'search'], permissions: { deny: ['net.*'] } }), myGate);
 * const decision = await evaluateGate(gate, action, context); // never throws: failures deny
 * ```
 */
export type { GateContext, GateDecision, PolicyGate, ProposedAction } from './types.ts';
// Gates
export { gates } from './gates.ts';
export { RulesConfig, rulesGate } from './rules.ts';
// Evaluation (fail closed)
export { evaluateGate, PolicyGateError, runGate } from './evaluateGate.ts';
export type { EvaluateGateOptions } from './evaluateGate.ts';
// Decisions
export { ALLOW, decide, GateDecisionSchema, toGateDecision } from './decision.ts';
// Globs (shared with the tool profile)
export { findMatchingGlob, globToRegExp, matchesGlob } from './glob.ts';
