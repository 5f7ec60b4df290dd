/**
 * The agent system: agents as actors of one XState system, messaging and
 * delegating to each other, stopped with their children, observed through one stream.
 *
 * @example
 * ```ts
 * import { createAgentSystem } from 'actorloop';
 * const system = createAgentSystem();
 * system.spawn('researcher', { model, system: 'Answer with one source.' });
 * system.spawn('writer', { model, tools: [system.delegateTool('researcher')] });
 * const { text } = await system.ask('writer', 'One paragraph on the actor model.');
 * system.stopAll();
 * ```
 */
export { createAgentSystem } from './createAgentSystem.ts';
export type {
  AgentSystem,
  AgentSystemOptions,
  AskOptions,
  DelegateToolOptions,
  MessageReceipt,
  SpawnOptions,
  SystemAgent,
  TellOptions,
} from './types.ts';
export { AgentSystemError } from './errors.ts';
export { delegateToolName } from './delegateTool.ts';
export { SYSTEM_DEFAULTS } from './defaults.ts';
