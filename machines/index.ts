/**
 * `actorloop/machines`: the statecharts, pure and provide-able.
 *
 * @example
 * ```ts
 * import { agentMachine } from 'actorloop/machines';
 * const machine = agentMachine.provide({ actors: { phases: phaseRunner({ reason, gate, act }) } });
 * const actor = createActor(machine, { input, inspect });
 * ```
 */
export { agentMachine } from './agent.machine.ts';
export type { AgentMachine } from './agent.machine.ts';
export { phase, phaseRunner } from './phaseRunner.ts';
export type {
  Phase,
  PhaseArgs,
  PhaseImplementations,
  PhaseJob,
  PhaseName,
  PhaseReply,
  PhaseRequest,
  PhaseRunnerLogic,
  PhaseRunnerOptions,
  PhaseRunnerSnapshot,
} from './phaseRunner.ts';
export type { AgentContext, AgentEvent, AgentMachineInput, AgentOutput } from './agent.types.ts';
export type { ActCall, ActInput, ActOutput, GateInput, GateOutput, HydrateInput, HydrateOutput, PendingHuman, PlannedCall, ReasonInput, ReasonOutput, RunLimits, Termination, ToolOutcome } from '../src/core/run.ts';
export { circuitBreakerMachine } from './circuitBreaker.machine.ts';
export { agentHostMachine, agentSystemMachine } from './agentHost.machine.ts';
export { strategyMachine, type StrategyMachine } from './strategy.machine.ts';
export { subAgentMachine, type SubAgentAttach, type SubAgentConclude, type SubAgentPrepared, type SubAgentRequest } from './subAgent.machine.ts';
