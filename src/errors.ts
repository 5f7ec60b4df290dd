/**
 * `actorloop/errors`: every error class actorloop throws or reports. Each error has a `code`
 * (listed, with its blame and meaning, in `ERROR_CODES`) and a `blame` saying whose move it is to
 * fix it; a class of its own exists where callers catch it by type, and one class otherwise
 * serves several codes. All extend `ActorloopError`, and `toJSON()` is what journals and events carry.
 *
 * @example
 * ```ts
 * import { ActorloopError, RateLimitError } from 'actorloop/errors';
 * try { await agent.run(task); }
 * catch (e) { if (e instanceof ActorloopError && e.blame === 'provider') console.log('retry later:', e.code, e.runId); }
 * ```
 */

// The hierarchy, and the table of every code.
export { ActorloopError, describeError } from './core/errors.ts';
export type { ActorloopErrorOptions, ErrorBlame, ErrorCode } from './core/errors.ts';
export { ERROR_CODES } from './core/errorCodes.ts';
export type { CodesOf, ErrorClassName, ErrorCodeInfo } from './core/errorCodes.ts';

// The caller's setup, input and use of the API.
export { ConfigurationError } from './core/errors.ts';
export { ConversationError } from './conversation/errors.ts';
export { PromptError } from './prompts/errors.ts';
export { PolicyGateError } from './policy/evaluateGate.ts';
export { HookError } from './agent/errors.ts';
export { InspectorError } from './inspect/errors.ts';
export { WebRequestError } from './web/errors.ts';

// Runs: why one ended without an answer.
export { RunCancelledError, RunError, RunLimitError } from './agent/errors.ts';
export { StrategyRunError } from './strategies/errors.ts';
export { AgentSystemError } from './system/errors.ts';

// What the model sent cannot be used.
export { ModelBehaviorError } from './core/errors.ts';
export { SkillNotFoundError } from './skills/errors.ts';

// Model calls: the provider, its credentials and limits.
export { AuthenticationError, ContextLengthError, InferenceError, RateLimitError, StructuredOutputError } from './inference/errors.ts';

// Tools: a call failed, hung, was refused or is switched off by its breaker.
export { ToolError } from './tools/errors.ts';
export { FileReadError, WebFetchError } from './tools/builtin/errors.ts';
export { CircuitOpenError } from './resilience/circuitOpenError.ts';
export { McpError } from './mcp/errors.ts';
export { PreHydrationTimeoutError } from './hydration/errors.ts';

// Stores: files, sessions and the PostgreSQL runtime.
export { CorruptFileError, StoreError } from './persistence/errors.ts';
export { SessionError } from './sessions/errors.ts';
export { DurableRunError } from './postgres/errors.ts';
