/**
 * Every error code actorloop throws or reports, in one table: whose move it is to fix it
 * (`blame`), the class that carries it, and what it means. `ErrorCode` comes from this table, so
 * a code that is not listed here does not compile; journals and callers match on these strings,
 * so a code never changes once released.
 *
 * @example
 * ```ts
 * ERROR_CODES.run_locked.blame; // 'user'
 * ```
 */

/** Who has to act to fix an error. */
export type ErrorBlame = 'user' | 'model' | 'provider' | 'tool' | 'runtime';

/** One row of the table. */
export interface ErrorCodeInfo {
  readonly blame: ErrorBlame;
  /** The class whose instances carry this code. */
  readonly class: string;
  readonly meaning: string;
}

export const ERROR_CODES = {
  // ConfigurationError: the caller's setup or use of the API is wrong.
  configuration: { blame: 'user', class: 'ConfigurationError', meaning: 'Bad configuration or API misuse by the caller.' },
  missing_configuration: { blame: 'user', class: 'ConfigurationError', meaning: 'Neither an API key nor a base URL is configured for the model provider.' },
  usage: { blame: 'user', class: 'ConfigurationError', meaning: 'The command line was called with unknown or missing arguments (exit 2).' },
  cli: { blame: 'user', class: 'ConfigurationError', meaning: 'A command could not do what was asked: no store, unknown run, run not waiting (exit 1).' },
  invalid_decision: { blame: 'user', class: 'ConfigurationError', meaning: 'A strategy returned something that is not a decision.' },
  replay_mismatch: { blame: 'user', class: 'ConfigurationError', meaning: 'A run was resumed with another agent configuration than the one that started it.' },

  // ModelBehaviorError: the model sent something the loop cannot use.
  model_behavior: { blame: 'model', class: 'ModelBehaviorError', meaning: 'The model sent something the loop cannot use.' },
  experience_invalid_answer: { blame: 'model', class: 'ModelBehaviorError', meaning: "The experience learner's model did not answer with a list of experience candidates." },

  // RunError and its two subclasses: why a run did not end with an answer.
  model_repair_exhausted: { blame: 'model', class: 'RunError', meaning: 'The model kept sending unusable tool calls or answers after every repair turn.' },
  stuck: { blame: 'model', class: 'RunError', meaning: 'Stuck detection ended the run: the model kept repeating the same call or error.' },
  model_refused: { blame: 'model', class: 'RunError', meaning: 'The model declined to answer (a refusal in place of content).' },
  reply_truncated: { blame: 'user', class: 'RunError', meaning: "A reply hit the output-token cap and the agent's onLength policy ended the run." },
  unexpected: { blame: 'runtime', class: 'RunError', meaning: 'A run failed with something that is not one of the typed errors (a bug in a custom actor, say).' },
  max_iterations: { blame: 'runtime', class: 'RunLimitError', meaning: 'The run reached limits.maxIterations without a final answer.' },
  max_tokens: { blame: 'runtime', class: 'RunLimitError', meaning: 'The run used limits.maxTotalTokens without a final answer.' },
  run_timeout: { blame: 'runtime', class: 'RunLimitError', meaning: 'The run exceeded limits.timeoutMs of wall-clock time.' },
  run_cancelled: { blame: 'user', class: 'RunCancelledError', meaning: 'The run was cancelled by its caller.' },

  // HookError: a lifecycle hook failed or blocked a call.
  hook_failed: { blame: 'user', class: 'HookError', meaning: 'A lifecycle hook threw, timed out or returned something that is not a decision; the run failed closed.' },
  model_call_blocked: { blame: 'user', class: 'HookError', meaning: 'A beforeModelCall hook blocked the model call.' },

  // Model calls.
  authentication: { blame: 'user', class: 'AuthenticationError', meaning: 'The provider refused the credentials (401/403). Never retried.' },
  rate_limited: { blame: 'provider', class: 'RateLimitError', meaning: 'The provider is rate limiting (429); retried unless the quota is exhausted.' },
  context_length_exceeded: { blame: 'user', class: 'ContextLengthError', meaning: "The conversation does not fit the model's context window." },
  structured_output: { blame: 'model', class: 'StructuredOutputError', meaning: 'The reply does not match the requested output schema.' },
  server_error: { blame: 'provider', class: 'InferenceError', meaning: 'The provider failed (5xx, or an error event inside a stream). Retried.' },
  bad_request: { blame: 'user', class: 'InferenceError', meaning: 'The provider rejected the request (another 4xx): unknown model, unsupported parameter, bad base URL.' },
  system_message_refused: { blame: 'user', class: 'InferenceError', meaning: "The server's chat template takes one system message, first (Qwen 3.5 and later); the model's capabilities should say `systemMessages: 'first'`. Never retried." },
  provider_timeout: { blame: 'provider', class: 'InferenceError', meaning: "No complete reply within the provider's timeoutMs. Retried." },
  network: { blame: 'provider', class: 'InferenceError', meaning: 'The connection to the provider failed (refused, reset, DNS). Retried.' },
  invalid_response: { blame: 'provider', class: 'InferenceError', meaning: 'The reply is not a valid chat completion. Retried.' },
  stream_interrupted: { blame: 'provider', class: 'InferenceError', meaning: 'A reply stream ended before its finish reason; the partial reply was discarded.' },
  provider_unknown: { blame: 'provider', class: 'InferenceError', meaning: 'A model call failed in a way no other code describes. Not retried.' },
  model_call_cancelled: { blame: 'user', class: 'InferenceError', meaning: 'The model call was cancelled.' },

  // Files and stores.
  corrupt_file: { blame: 'runtime', class: 'CorruptFileError', meaning: 'A store file does not parse, or a record in it fails its schema; the file is left untouched.' },
  unsupported_version: { blame: 'user', class: 'StoreError', meaning: 'A record has a schema version this actorloop does not read.' },
  run_locked: { blame: 'user', class: 'StoreError', meaning: 'Another live writer holds the run.' },
  run_not_found: { blame: 'user', class: 'StoreError', meaning: 'No persisted run has that id.' },
  run_finished: { blame: 'user', class: 'StoreError', meaning: 'The run already ended; there is nothing to resume.' },
  run_not_resumable: { blame: 'user', class: 'StoreError', meaning: "The run's log holds its journal but not what a resume rebuilds it from." },
  knowledge_store_locked: { blame: 'user', class: 'StoreError', meaning: 'Another writer has the knowledge store file open, or took its lock over.' },
  experience_store_locked: { blame: 'user', class: 'StoreError', meaning: 'Another writer has the experience store file open, or took its lock over.' },
  knowledge_untrusted: { blame: 'user', class: 'StoreError', meaning: 'The answer of a run that read untrusted content was not stored as knowledge without `trusted: true`.' },
  knowledge_store_closed: { blame: 'user', class: 'StoreError', meaning: 'The knowledge store was closed.' },
  experience_store_closed: { blame: 'user', class: 'StoreError', meaning: 'The experience store was closed.' },
  experience_not_found: { blame: 'user', class: 'StoreError', meaning: 'No experience has that id.' },
  log_write_failed: { blame: 'runtime', class: 'StoreError', meaning: "A run log's batch could not be written whole (a full disk, an I/O error); the part that landed was cut off again." },

  // Sessions.
  session_locked: { blame: 'user', class: 'SessionError', meaning: 'Another open handle writes the session, or took its lock over.' },
  session_closed: { blame: 'user', class: 'SessionError', meaning: 'The session handle was closed.' },
  session_invalid_id: { blame: 'user', class: 'SessionError', meaning: 'A session id that cannot name a session.' },
  session_invalid_key: { blame: 'user', class: 'SessionError', meaning: 'A memory namespace or key that cannot be stored.' },
  session_invalid_value: { blame: 'user', class: 'SessionError', meaning: 'A memory value that is not JSON, or too large or deep to store.' },
  session_invalid_turn: { blame: 'user', class: 'SessionError', meaning: 'A turn that cannot be appended: a bad run id, or messages that are not conversation messages.' },
  session_run_recorded: { blame: 'user', class: 'SessionError', meaning: "The run's turn is already in the session." },

  // The PostgreSQL runtime.
  corrupt_row: { blame: 'runtime', class: 'DurableRunError', meaning: "A row of the runtime's tables does not parse or fails its schema." },
  database_schema: { blame: 'user', class: 'DurableRunError', meaning: "The database's schema is older or newer than this actorloop's, or could not be reached." },
  durable_run: { blame: 'user', class: 'DurableRunError', meaning: "A durable run's event or effect cannot be applied (its agent is not registered with this worker, say)." },
  definition_mismatch: { blame: 'user', class: 'DurableRunError', meaning: "A worker serves the run's agent with another output schema or other tools than the process that queued it." },
  effect_failed: { blame: 'tool', class: 'DurableRunError', meaning: 'A model or tool call made by another worker failed there.' },
  missing_blob: { blame: 'user', class: 'DurableRunError', meaning: "A durable run refers to an image or file whose bytes are not in the database." },

  // Strategies.
  strategy_failed: { blame: 'model', class: 'StrategyRunError', meaning: 'The strategy decided it failed, or one of its calls threw.' },
  strategy_max_rounds: { blame: 'user', class: 'StrategyRunError', meaning: 'The strategy made maxRounds decisions without finishing.' },
  strategy_timeout: { blame: 'runtime', class: 'StrategyRunError', meaning: 'The strategy ran past timeoutMs; its branches were stopped.' },
  strategy_cancelled: { blame: 'user', class: 'StrategyRunError', meaning: 'The caller cancelled the strategy run.' },

  // The agent system.
  agent_not_found: { blame: 'user', class: 'AgentSystemError', meaning: 'No agent with this id is live in the system.' },
  ask_timeout: { blame: 'runtime', class: 'AgentSystemError', meaning: 'An ask or delegation got no answer within its timeoutMs; the task was cancelled.' },
  agent_stopped: { blame: 'user', class: 'AgentSystemError', meaning: 'The asked agent was stopped before it answered.' },
  ask_cancelled: { blame: 'user', class: 'AgentSystemError', meaning: 'The asked task was cancelled through its host before it started.' },

  // Tools.
  tool_not_found: { blame: 'model', class: 'ToolError', meaning: 'The model called a tool that does not exist.' },
  invalid_tool_arguments: { blame: 'model', class: 'ToolError', meaning: "The model's tool arguments are not a JSON object or do not match the tool's schema." },
  tool_failed: { blame: 'tool', class: 'ToolError', meaning: 'A tool threw or rejected.' },
  tool_timeout: { blame: 'tool', class: 'ToolError', meaning: 'A tool call ran past its timeout and was aborted.' },
  url_refused: { blame: 'model', class: 'WebFetchError', meaning: 'web_fetch refused a URL (scheme, credentials, or an internal address).' },
  web_fetch_failed: { blame: 'tool', class: 'WebFetchError', meaning: 'A permitted fetch failed: HTTP error status, time cap, or network.' },
  path_refused: { blame: 'model', class: 'FileReadError', meaning: 'file_read refused a path that would leave its root.' },
  file_read_failed: { blame: 'tool', class: 'FileReadError', meaning: 'A path inside the root could not be read.' },
  skill_not_found: { blame: 'model', class: 'SkillNotFoundError', meaning: 'The model asked the skill tool for a name no loaded skill has.' },
  circuit_open: { blame: 'tool', class: 'CircuitOpenError', meaning: "A tool's circuit breaker is open after repeated failures; the call was not made." },
  prehydration_timeout: { blame: 'tool', class: 'PreHydrationTimeoutError', meaning: 'The pre-hydration deadline passed before a reference resolved.' },
  policy_gate_failed: { blame: 'user', class: 'PolicyGateError', meaning: 'A policy gate threw, rejected or returned no decision; the call was denied.' },

  // MCP servers.
  mcp_connect_failed: { blame: 'tool', class: 'McpError', meaning: 'An MCP server could not be started or reached, or failed its handshake.' },
  mcp_server_closed: { blame: 'tool', class: 'McpError', meaning: 'An MCP server went away while a call was in flight.' },
  mcp_tool_error: { blame: 'tool', class: 'McpError', meaning: 'An MCP server answered a tool call with isError: true.' },
  mcp_request_failed: { blame: 'tool', class: 'McpError', meaning: 'An MCP server refused or failed a request other than a tool call.' },
  mcp_authorization_required: { blame: 'user', class: 'McpError', meaning: 'An MCP server needs OAuth authorization that cannot be completed without a person.' },
  mcp_server_unavailable: { blame: 'tool', class: 'McpError', meaning: 'An HTTP MCP server could not be reached again after bounded reconnects.' },
  mcp_answer_invalid: { blame: 'user', class: 'McpError', meaning: "An answer to an MCP server's question does not fit its form." },

  // Conversations, prompts, the inspector, web handlers, the scripted model.
  invalid_conversation: { blame: 'user', class: 'ConversationError', meaning: 'Messages that do not form a valid conversation.' },
  invalid_content_part: { blame: 'user', class: 'ConversationError', meaning: 'A content part (image, file) that is unsupported, too large, or not for this model.' },
  prompt_variables_invalid: { blame: 'user', class: 'PromptError', meaning: "The values given to render do not match the prompt's schema." },
  prompt_render_failed: { blame: 'user', class: 'PromptError', meaning: 'The template failed while rendering valid values.' },
  inspector_start: { blame: 'user', class: 'InspectorError', meaning: "The inspector's local server could not start." },
  inspection_recording: { blame: 'runtime', class: 'InspectorError', meaning: 'Writing an inspection recording failed.' },
  web_request: { blame: 'user', class: 'WebRequestError', meaning: 'A request to a web handler was refused; status is the HTTP status it got.' },
  script_exhausted: { blame: 'user', class: 'ScriptedModelError', meaning: 'The scripted model was called more times than its script has steps.' },
  stream_cut: { blame: 'provider', class: 'ScriptedModelError', meaning: "A scripted step's stream was cut on purpose." },
} as const satisfies Record<string, ErrorCodeInfo>;

/** Every code an actorloop error can have. */
export type ErrorCode = keyof typeof ERROR_CODES;

/** The error classes: every class named in the table, besides the abstract base. */
export type ErrorClassName = (typeof ERROR_CODES)[ErrorCode]['class'];

/** The codes a class carries, e.g. `CodesOf<'RunLimitError'>` is `'max_iterations' | 'max_tokens' | 'run_timeout'`. */
export type CodesOf<C extends ErrorClassName> = { [K in ErrorCode]: (typeof ERROR_CODES)[K]['class'] extends C ? K : never }[ErrorCode];
