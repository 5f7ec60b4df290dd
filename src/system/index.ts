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
