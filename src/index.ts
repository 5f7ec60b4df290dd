/**
 * actorloop — a TypeScript runtime for LLM agents on the actor model of XState v5.
 *
 * The public API, exported by name. Machines live at `actorloop/machines`, the scripted model
 * and test helpers at `actorloop/testing`.
 *
 * @example
 * ```ts
 * import { createAgent, defineTool, openAICompatible, gates } from 'actorloop';
 * const agent = createAgent({ model: openAICompatible(), tools: [add], gate: gates.permissive() });
 * const result = await agent.run('What is 6 * 7?');
 * ```
 */

// Agents
export { createAgent } from './agent/createAgent.ts';
export type { Agent, AgentConfig, AgentRun, ResumeRunOptions, RunOptions } from './agent/createAgent.ts';
export type { LoopResult } from './core/run.ts';
export {
  MaxIterationsError,
  ModelRepairExhaustedError,
  RunCancelledError,
  RunTimeoutError,
  TokenBudgetExceededError,
  StuckLoopError,
  UnexpectedRunError,
} from './agent/errors.ts';
export type { HookContext, Hydrator, MessagePreparer } from './core/hooks.ts';

// Context budget, tool profile, progress and stuck detection
export { createContextBudget, estimateTokens } from './context/index.ts';
export type { AnchoredSummaryOptions, ContextBudgetOptions, ContextStrategy, Tokenizer } from './context/index.ts';
export { applyToolProfile, explainToolProfile } from './tools/profile.ts';
export type { ToolProfile, ToolProfileReport } from './tools/profile.ts';
export { ProgressTracker, similarity } from './progress/index.ts';
export type { LimitAction, ProgressTrackerOptions, StepDecision, StepOutcome, StuckDetectionOptions } from './progress/index.ts';

// Events
export { LoopEvent, JournalEntry, Phase, TerminationReason } from './core/loopEvent.ts';
export type { LoopEventOf, LoopEventType } from './core/loopEvent.ts';
export { ofType } from './events/eventBus.ts';
export { MemoryJournal } from './events/memoryJournal.ts';

// Agent system
export { createAgentSystem, AgentNotFoundError, AgentStoppedError, AskCancelledError, AskTimeoutError } from './system/index.ts';
export type { AgentSystem, AgentSystemOptions, AskOptions, DelegateToolOptions } from './system/index.ts';

// Reasoning strategies
export { strategies, runStrategy, startStrategy, STRATEGY_DEFAULTS } from './strategies/index.ts';
export {
  StrategyCancelledError,
  StrategyFailedError,
  StrategyRoundsExceededError,
  StrategyTimeoutError,
  InvalidDecisionError,
} from './strategies/errors.ts';
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

// Knowledge, pre-hydration and built-in tools
export { createMemoryKnowledgeStore, openKnowledgeStore, createKnowledgeTools, rememberResult, resolveConventions } from './knowledge/index.ts';
export type { KnowledgeConfig, KnowledgeItem, KnowledgeStore, KnowledgeScope } from './knowledge/index.ts';
export { createPreHydrator, extractReferences } from './hydration/index.ts';
export type { PreHydratorOptions, Reference } from './hydration/index.ts';
export { webFetch, fileRead, UrlRefusedError, WebFetchError, PathRefusedError, FileReadError } from './tools/builtin/index.ts';

// Inspection and redaction
export { createInspector, createJsonlRecorder, combineInspectors, readInspectionRecording } from './inspect/index.ts';
export type { Inspector, InspectorOptions, JsonlRecorder, JsonlRecorderOptions } from './inspect/index.ts';
export { sanitize } from './security/sanitize.ts';
export type { SanitizeOptions } from './security/sanitize.ts';
export type { SecretRuleOptions } from './security/secrets.ts';

// Persistence
export { createFileStore } from './persistence/fileStore.ts';
export type { FileStoreOptions, RecoveredRun, ResumeOptions, RunStore, RunWriter } from './persistence/fileStore.ts';
export type { CorruptRun, IndexedRun, RunMeta, RunStatus } from './persistence/records.ts';
export {
  CorruptFileError,
  ReplayMismatchError,
  RunFinishedError,
  RunLockedError,
  RunNotFoundError,
  RunNotResumableError,
  UnsupportedVersionError,
} from './persistence/errors.ts';

// Tools
export { defineTool } from './tools/defineTool.ts';
export type { ToolDefinition } from './tools/defineTool.ts';
export type { Tool, ToolContext, ToolMetadata } from './tools/types.ts';
export { createToolRegistry } from './tools/registry.ts';
export type { ToolRegistry } from './tools/registry.ts';
export { ToolArgumentsError, ToolExecutionError, ToolNotFoundError, ToolTimeoutError } from './tools/errors.ts';

// Policy
export { gates } from './policy/gates.ts';
export type { GateContext, GateDecision, PolicyGate, ProposedAction } from './policy/types.ts';
export { matchesGlob } from './policy/glob.ts';

// Resilience
export { recovery } from './resilience/recovery.ts';
export type { RecoveryKind, RecoveryStrategy } from './resilience/recovery.ts';
export { createCircuitBreaker } from './resilience/circuitBreaker.ts';
export type { CircuitBreaker, BreakerOptions } from './resilience/circuitBreaker.ts';
export { createBreakerRegistry } from './resilience/breakerRegistry.ts';
export type { BreakerRegistry } from './resilience/breakerRegistry.ts';
export { CircuitOpenError } from './resilience/circuitOpenError.ts';
export type { DeadLetter } from './executor/memory.ts';

// Inference
export { openAICompatible } from './inference/openaiCompatible.ts';
export type { OpenAICompatibleOptions } from './inference/config.ts';
export { createProviderRegistry } from './inference/registry.ts';
export type { ProviderRegistry } from './inference/registry.ts';
export { UsageTracker, costOf, DEFAULT_PRICES } from './inference/usage.ts';
export type { ModelPrice, PriceTable } from './inference/usage.ts';
export type {
  Completion,
  CompletionRequest,
  FinishReason,
  InferenceProvider,
  RetryInfo,
  StreamEvent,
  StructuredOutputSpec,
  ToolChoice,
  ToolSpec,
  Usage,
} from './core/provider.ts';
export {
  AuthenticationError,
  BadRequestError,
  ContextLengthError,
  InferenceError,
  InvalidResponseError,
  MissingConfigurationError,
  NetworkError,
  ProviderTimeoutError,
  RateLimitError,
  ServerError,
  StreamInterruptedError,
  StructuredOutputError,
} from './inference/errors.ts';

// Conversation
export { Message, ToolCall } from './core/messages.ts';
export { validateConversation, ConversationError } from './conversation/validate.ts';
export { toOpenAIMessages } from './conversation/openai.ts';
export { toAnthropicMessages } from './conversation/anthropic.ts';

// Errors
export { ActorloopError, ConfigurationError, ModelBehaviorError } from './core/errors.ts';
export type { ErrorBlame } from './core/errors.ts';
export { DEFAULTS } from './core/defaults.ts';
