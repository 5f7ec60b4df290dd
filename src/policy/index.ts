export type { GateContext, GateDecision, PolicyGate, ProposedAction } from './types.ts';
export { gates } from './gates.ts';
export { RulesConfig, rulesGate } from './rules.ts';
export { evaluateGate, PolicyGateError, runGate } from './evaluateGate.ts';
export type { EvaluateGateOptions } from './evaluateGate.ts';
export { ALLOW, decide, GateDecisionSchema, toGateDecision } from './decision.ts';
export { findMatchingGlob, globToRegExp, matchesGlob } from './glob.ts';
