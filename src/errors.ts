/**
 * `actorloop/errors`: every error actorloop throws or reports, grouped by whose move it is to
 * fix it (`blame`). Each class has a unique literal `code`; all extend `ActorloopError`, and
 * `toJSON()` is what journals and events carry.
 *
 * @example
 * ```ts
 * import { ActorloopError, RateLimitError } from 'actorloop/errors';
 * try { await agent.run(task); }
 * catch (e) { if (e instanceof ActorloopError && e.blame === 'provider') console.log('retry later:', e.code, e.runId); }
 * ```
 */

// The hierarchy and its bases.
export { ActorloopError, describeError } from './core/errors.ts';
export type { ActorloopErrorOptions, ErrorBlame } from './core/errors.ts';
export { InferenceError } from './inference/errors.ts';
export { StrategyRunError } from './strategies/errors.ts';

// blame 'user': configuration, misuse, and what the caller asked for.
export { ConfigurationError } from './core/errors.ts';
export { AuthenticationError, BadRequestError, CancelledError, ContextLengthError, MissingConfigurationError } from './inference/errors.ts';
export { ConversationError } from './conversation/validate.ts';
export { ContentPartError } from './conversation/parts.ts';
export { PolicyGateError } from './policy/evaluateGate.ts';
export { HookFailedError, ModelCallBlockedError, ReplyTruncatedError, RunCancelledError } from './agent/errors.ts';
export { ReplayMismatchError, RunFinishedError, RunLockedError, RunNotFoundError, RunNotResumableError, UnsupportedVersionError } from './persistence/errors.ts';
export { AgentNotFoundError, AgentStoppedError, AskCancelledError } from './system/errors.ts';
export { InvalidDecisionError, StrategyCancelledError, StrategyRoundsExceededError } from './strategies/errors.ts';
export { StoreClosedError, StoreItemNotFoundError, StoreLockedError } from './persistence/storeErrors.ts';
export { InspectorStartError } from './inspect/errors.ts';
export { PromptRenderError, PromptVariablesError } from './prompts/errors.ts';
// The per-store names these errors had, kept for code that catches them by type (`code` tells the stores apart).
export {
  StoreItemNotFoundError as ExperienceNotFoundError,
  StoreClosedError as ExperienceStoreClosedError,
  StoreLockedError as ExperienceStoreLockedError,
  StoreClosedError as KnowledgeStoreClosedError,
  StoreLockedError as KnowledgeStoreLockedError,
} from './persistence/storeErrors.ts';
export {
  InvalidSessionIdError,
  InvalidSessionKeyError,
  InvalidSessionTurnError,
  InvalidSessionValueError,
  SessionClosedError,
  SessionLockedError,
  SessionRunRecordedError,
} from './sessions/errors.ts';
export { WebRequestError } from './web/errors.ts';

// blame 'model': what the model sent cannot be used.
export { ModelBehaviorError } from './core/errors.ts';
export { StructuredOutputError } from './inference/errors.ts';
export { ModelRefusedError, ModelRepairExhaustedError, StuckLoopError } from './agent/errors.ts';
export { ToolArgumentsError, ToolNotFoundError } from './tools/errors.ts';
export { SkillNotFoundError } from './skills/errors.ts';
export { InvalidExperienceAnswerError } from './experiences/errors.ts';
export { PathRefusedError, UrlRefusedError } from './tools/builtin/errors.ts';
export { StrategyFailedError } from './strategies/errors.ts';

// blame 'provider': the model endpoint failed; most are retried, and a stored run resumes.
export { InvalidResponseError, NetworkError, ProviderTimeoutError, RateLimitError, ServerError, StreamInterruptedError, UnknownProviderError } from './inference/errors.ts';

// blame 'tool': a tool failed, hung or is switched off by its breaker.
export { ToolExecutionError, ToolTimeoutError } from './tools/errors.ts';
export { FileReadError, WebFetchError } from './tools/builtin/errors.ts';
export { CircuitOpenError } from './resilience/circuitOpenError.ts';
export { McpAnswerError, McpAuthorizationError, McpConnectError, McpRequestError, McpServerClosedError, McpServerUnavailableError, McpToolError } from './mcp/errors.ts';
export { PreHydrationTimeoutError } from './hydration/errors.ts';

// blame 'runtime': a limit of the run was reached, or actorloop itself failed.
export { MaxIterationsError, RunTimeoutError, TokenBudgetExceededError, UnexpectedRunError } from './agent/errors.ts';
export { CorruptFileError } from './persistence/errors.ts';
export { AskTimeoutError } from './system/errors.ts';
export { StrategyTimeoutError } from './strategies/errors.ts';
export { InspectionRecordingError } from './inspect/errors.ts';
export { CorruptRowError, DatabaseSchemaError, DurableRunError, EffectFailedError } from './postgres/errors.ts';
