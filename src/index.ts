/** actorloop, the front door: building, running, watching and persisting agents. Errors are at `actorloop/errors`, test helpers at `actorloop/testing`. */

export { createAgent } from './agent/createAgent.ts';
export type { Agent, AgentConfig, AgentRun, ModelConfig, RunOptions } from './agent/createAgent.ts';
export type { LoopResult, RunResult } from './core/run.ts';
export type { AgentHooks, HookContext, ToolCallProposal } from './core/hooks.ts';

export { openAICompatible } from './inference/openaiCompatible.ts';
export type { OpenAICompatibleOptions } from './inference/config.ts';
export { anthropic } from './inference/anthropic.ts';
export type { AnthropicOptions } from './inference/anthropicConfig.ts';
export { createProviderRegistry } from './inference/registry.ts';
export type { Completion, CompletionRequest, InferenceProvider, StreamEvent, Usage } from './core/provider.ts';
export { Message, ToolCall, ContentPart } from './core/messages.ts';
export { image, file } from './conversation/parts.ts';

export { defineTool } from './tools/defineTool.ts';
export type { ToolDefinition } from './tools/defineTool.ts';
export type { Tool, ToolContext } from './tools/types.ts';
export type { ToolProfile } from './tools/profile.ts';
export { webFetch, fileRead } from './tools/builtin/index.ts';
export { connectMcpServer } from './mcp/connect.ts';
export type { McpServer, McpServerConfig } from './mcp/connect.ts';

export { gates } from './policy/gates.ts';
export type { GateContext, GateDecision, PolicyGate, ProposedAction } from './policy/types.ts';
export { recovery } from './resilience/recovery.ts';
export type { RecoveryStrategy } from './resilience/recovery.ts';
export type { BreakerOptions } from './resilience/circuitBreaker.ts';
export { ProgressTracker } from './progress/index.ts';
export type { StuckDetectionOptions } from './progress/index.ts';
export type { ContextBudgetOptions } from './context/index.ts';

export { LoopEvent, JournalEntry, TerminationReason } from './core/loopEvent.ts';
export type { LoopEventOf } from './core/loopEvent.ts';
export { ofType } from './events/eventBus.ts';

export { createFileStore } from './persistence/fileStore.ts';
export type { FileStoreOptions, RunStore } from './persistence/fileStore.ts';

export { createInspector, createJsonlRecorder, readInspectionRecording } from './inspect/index.ts';
export type { Inspector, InspectorOptions } from './inspect/index.ts';
export { sanitize } from './security/sanitize.ts';
export type { SecretRuleOptions } from './security/secrets.ts';

export { strategies, runStrategy, startStrategy } from './strategies/index.ts';
export type {
  Branch,
  ConfiguredStrategy,
  ReasoningStrategy,
  RunStrategyOptions,
  StrategyContext,
  StrategyDecision,
  StrategyResult,
  StrategyRun,
  Thought,
} from './strategies/index.ts';

export { createAgentSystem } from './system/index.ts';
export type { AgentSystem, AgentSystemOptions, AskOptions } from './system/index.ts';
