import type { InspectionEvent, Observer } from 'xstate';
import { z } from 'zod';
import { DEFAULTS } from '../core/defaults.ts';
import { ConfigurationError } from '../core/errors.ts';
import type { InferenceProvider } from '../core/provider.ts';
import type { RunLimits } from '../core/run.ts';
import type { AgentHooks, Hydrator } from '../core/hooks.ts';
import type { HookName, JournalEntry } from '../core/loopEvent.ts';
import type { LoadedSkills, Skill } from '../skills/index.ts';
import type { SessionStore } from '../sessions/index.ts';
import type { ExperiencesConfig } from './experiences.ts';
import type { TelemetryOptions } from '../telemetry/index.ts';
import type { ContextBudgetOptions } from '../context/index.ts';
import type { PreHydratorOptions } from '../hydration/index.ts';
import type { KnowledgeConfig } from '../knowledge/wiring.ts';
import type { RunStore } from '../persistence/fileStore.ts';
import type { PolicyGate } from '../policy/types.ts';
import type { StuckDetectionOptions } from '../progress/doomLoop.ts';
import type { BreakerOptions } from '../resilience/circuitBreaker.ts';
import type { RecoveryStrategy } from '../resilience/recovery.ts';
import type { SecretRuleOptions } from '../security/secrets.ts';
import type { ToolProfile } from '../tools/profile.ts';
import type { TaintOptions } from '../policy/taint.ts';
import type { Tool } from '../tools/types.ts';
import { checkMcpServerConfig, mcpSecrets, type McpServerConfig } from '../mcp/connect.ts';
import type { AgentRuntime } from './types.ts';
import { defined } from '../core/defined.ts';

type Fields = Readonly<Record<string, unknown>>;
const isObject = (value: unknown): value is Fields => value !== null && typeof value === 'object' && !Array.isArray(value);
const isFunction = (value: unknown): boolean => typeof value === 'function';
const isProvider = (value: unknown): value is InferenceProvider => isObject(value) && isFunction(value['complete']) && isFunction(value['stream']);

/** A value zod cannot look into (a function, a store, a provider): the type says what, `what` says it to a person. */
const opaque = <T>(check: (value: unknown) => boolean, what: string) => z.custom<T>(check, { error: what });
const orFalse = <T>(what: string) => opaque<T | false>((value) => value === false || isObject(value), what);
const positiveInt = (unit = '') => z.int({ error: `a positive integer${unit}` }).positive({ error: `a positive integer${unit}` });
const flag = () => z.boolean({ error: 'true or false' });

const provider = opaque<InferenceProvider>(isProvider, 'an InferenceProvider such as openAICompatible()');
const lengthPolicy = opaque<'end' | { readonly continue: number }>(
  (value) => value === 'end' || (isObject(value) && Object.keys(value).length === 1 && Number.isInteger(value['continue']) && (value['continue'] as number) >= 0),
  "'end' or { continue: n } (n a whole number)",
);
export type LengthPolicy = z.infer<typeof lengthPolicy>;

const modelSchema = z.strictObject({
  provider,
  /** Model name for every call. Default: the provider's `defaultModel`. */
  name: z.string({ error: 'a string' }).optional(),
  temperature: z.number({ error: 'a number' }).optional(),
  maxTokens: positiveInt().optional(),
  /** Stream replies (token deltas on `tokens$`). */
  stream: flag().default(false),
  /** How hard a reasoning model thinks; sent only to models that accept it. */
  reasoningEffort: z.enum(['minimal', 'low', 'medium', 'high'], { error: 'one of minimal, low, medium, high' }).optional(),
  /** A reply cut at the token cap: `'end'` fails the run (a `RunError`, code `reply_truncated`); `{ continue: n }` asks the model to go on, n times at most. */
  onLength: lengthPolicy.optional(),
  /** The model takes images and PDFs: tasks may hold them, MCP tools' images reach it. Otherwise such a task is refused. */
  vision: flag().default(false),
});
export type ModelConfig = z.input<typeof modelSchema>;

const policySchema = z.strictObject({
  /** Decides every proposed tool call: allow, deny, or ask a human. Default: `gates.permissive()`. */
  gate: opaque<PolicyGate>((value) => isObject(value) && isFunction(value['evaluate']), 'a PolicyGate (see `gates`)').optional(),
  /** A gate that has not decided a call within this long denies it (a human's approval is not timed). */
  gateTimeoutMs: positiveInt(' (ms)').default(DEFAULTS.policy.gateTimeoutMs),
  /** Filter the tools the model sees: include/exclude globs, requireVerified, maxTools. */
  toolProfile: opaque<ToolProfile>(isObject, 'a tool profile').optional(),
  /** After untrusted content a side-effect call waits for a human. On unless `false`. */
  taint: orFalse<TaintOptions>('taint options ({ onSideEffect, allow }) or false').optional(),
  /** Secrets to scrub from events, journals and snapshots, on top of the defaults (API-key shapes, env keys). */
  redact: opaque<SecretRuleOptions>(isObject, 'secret rule options').optional(),
});

type BreakersConfig = Partial<BreakerOptions> & { readonly perTool?: Readonly<Record<string, Partial<BreakerOptions>>> };
const resilienceSchema = z.strictObject({
  /** Breaker settings for every tool, with per-tool overrides; `false` turns breakers off. */
  breakers: orFalse<BreakersConfig>('breaker options or false').optional(),
  /** Recovery for tools that declare none. Default: the error goes back to the model. */
  recovery: opaque<RecoveryStrategy>(isObject, 'a RecoveryStrategy (see `recovery`)').optional(),
  /** Bounds on tool execution: calls at once, time per call, size of a result the model sees. */
  tools: opaque<{ readonly maxConcurrency?: number; readonly timeoutMs?: number; readonly maxResultBytes?: number }>(isObject, 'an object').optional(),
  /** End runs that repeat one call or one error `maxRepeats` times in a row. On unless `false`. */
  stuckDetection: orFalse<StuckDetectionOptions>('stuck-detection options or false').optional(),
});

const contextSchema = z.strictObject({
  /** Keep what the model sees within a token budget (sliding window, observation masking, summary). */
  budget: opaque<ContextBudgetOptions>(isObject, 'context budget options').optional(),
  /** On a context-length error, compact the request under the reported window and send it once more. */
  compactOnOverflow: flag().default(true),
  /** Resolve references in the task (URLs, paths, `#42`) before the first model call. */
  preHydration: opaque<PreHydratorOptions>(isObject, 'pre-hydration options').optional(),
  /** Unstable: what `hydrate` does before the first model call (replaces `preHydration`). */
  experimental_hydrator: opaque<Hydrator>(isFunction, 'a function').optional(),
  /** Size limits on images and files in a task. */
  content: z
    .strictObject({
      maxImageBytes: positiveInt(' (bytes)').default(DEFAULTS.content.maxImageBytes),
      maxFileBytes: positiveInt(' (bytes)').default(DEFAULTS.content.maxFileBytes),
    })
    .optional(),
});

const skillsSchema = z
  .union([opaque<readonly Skill[]>(Array.isArray, 'an array of skills'), opaque<LoadedSkills>((value) => isObject(value) && Array.isArray(value['skills']), 'a loadSkills() result')], {
    error: 'the result of `await loadSkills()` or an array of skills',
  })
  .transform(skillsOf);

const memorySchema = z.strictObject({
  /** Skills (`await loadSkills()`): listed in the system prompt, loaded on demand with the `skill` tool. */
  skills: skillsSchema.optional(),
  /** Experiences: relevant ones go in before each run; outcomes update their success rates. */
  experiences: opaque<ExperiencesConfig>(
    (value) => isObject(value) && isObject(value['store']) && isFunction(value['store']['relevant']),
    '{ store, topK?, project?, autoAccept?, model? } with an experience store',
  ).optional(),
  /** Where `agent.session(id)` keeps conversations: `{ dir }` for files, or a store. Default: in memory. */
  sessions: opaque<SessionStore | { readonly dir?: string }>(isObject, 'a session store (openSessionStore()) or { dir }').optional(),
});

const observer = <T>(what: string) => opaque<Partial<Observer<T>> | ((value: T) => void)>((value) => isFunction(value) || isObject(value), what);
const observeSchema = z.strictObject({
  /** XState inspection observer for every run's actor (e.g. the Stately inspector). */
  inspect: observer<InspectionEvent>('an inspection observer or function').optional(),
  /** Every journal entry of every run, from creation on; a throwing handler is reported, never fatal. */
  events: observer<JournalEntry>('an observer or a function of each journal entry').optional(),
  /** Capacity of the in-memory journal (entries across runs): ended runs are dropped first, then the oldest entries of the live run holding most. */
  journalCapacity: positiveInt().optional(),
  /** OpenTelemetry spans for every run: `true` for the registered tracer provider, or a tracer. */
  telemetry: opaque<true | TelemetryOptions>((value) => value === true || isObject(value), 'true or { tracer?, agentName? }').optional(),
});
export type AgentObserveConfig = z.input<typeof observeSchema>;

const hook = <K extends HookName>() => opaque<NonNullable<AgentHooks[K]>>(isFunction, 'a function').optional();
const hooksSchema = z.strictObject({
  beforeModelCall: hook<'beforeModelCall'>(),
  afterModelCall: hook<'afterModelCall'>(),
  beforeToolCall: hook<'beforeToolCall'>(),
  afterToolCall: hook<'afterToolCall'>(),
  onTurnStart: hook<'onTurnStart'>(),
  onTurnEnd: hook<'onTurnEnd'>(),
  onError: hook<'onError'>(),
  timeoutMs: positiveInt(' (ms)').optional(),
} satisfies Record<HookName | 'timeoutMs', unknown>);

const limitsSchema = opaque<Partial<RunLimits>>(isObject, '{ maxIterations?, maxTotalTokens?, timeoutMs?, maxRepairTurns? }')
  .optional()
  .transform((given): RunLimits => ({
    maxIterations: given?.maxIterations ?? DEFAULTS.loop.maxIterations,
    maxTotalTokens: given?.maxTotalTokens ?? DEFAULTS.loop.maxTotalTokens,
    timeoutMs: given?.timeoutMs ?? DEFAULTS.loop.timeoutMs,
    maxRepairTurns: given?.maxRepairTurns ?? DEFAULTS.loop.maxRepairTurns,
  }));

const hasControlCharacter = (text: string): boolean => {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x20 || code === 0x7f) return true;
  }
  return false;
};

const agentConfigSchema = z.strictObject({
  /** Stable id for journals and the agent system. Default: a random `agent_…` id. */
  id: z
    .string({ error: 'a string' })
    // It names runs in journals, file stores and PostgreSQL rows, which hold no NUL.
    .refine((id) => id.length >= 1 && id.length <= 200 && !hasControlCharacter(id), { error: '1 to 200 characters, none of them a control character' })
    .optional(),
  /** The system prompt of every run (redacted like everything else). */
  system: z.string({ error: 'a string' }).optional(),
  /** The model backend and how each call is made; a bare provider is shorthand for `{ provider }`. */
  model: z.union([provider.transform((bare) => modelSchema.parse({ provider: bare })), modelSchema], {
    error: 'an InferenceProvider such as openAICompatible() or scriptedModel([...]), or { provider, name?, temperature?, maxTokens?, stream?, reasoningEffort?, onLength?, vision? }',
  }),
  tools: opaque<readonly Tool[]>(Array.isArray, 'an array of tools').default(() => []),
  /** A schema the final answer must match: `result.output` is the validated answer; a mismatch goes back to the model to repair. */
  output: opaque<z.ZodType>((value) => value instanceof z.ZodType, 'a zod schema (z.object({ … }))').optional(),
  /** MCP servers whose tools the agent also gets (`<server>_<tool>`), connected on first use. */
  mcpServers: opaque<readonly McpServerConfig[]>(Array.isArray, 'an array of MCP server configs').default(() => []),
  /** What the model may do: which calls run, which tools it sees, what is scrubbed from logs. */
  policy: policySchema.prefault({}),
  /** How tool failures, slow tools and loops are contained. */
  resilience: resilienceSchema.prefault({}),
  /** Per-run budgets (iterations, tokens, wall clock, repair turns); a run's own limits override these. */
  limits: limitsSchema,
  /** What the model sees on each reason step, beyond the conversation itself. */
  context: contextSchema.prefault({}),
  /** The knowledge bridge: context before each reason step, recall/store tools, working memory. */
  knowledge: opaque<KnowledgeConfig>(isObject, 'an object').optional(),
  /** What the agent carries across runs: skills, experiences, sessions. */
  memory: memorySchema.prefault({}),
  /** Where runs are kept, so they can be listed, replayed and resumed. In memory only by default. */
  persistence: z.strictObject({
    /** Persist each run's log so runs can be listed, replayed and resumed (`createFileStore()`). */
    store: opaque<RunStore>(isObject, 'a RunStore such as createFileStore()').optional(),
  }).prefault({}),
  /** Watching the agent: XState inspection, every journal entry, telemetry. */
  observe: observeSchema.prefault({}),
  /** Lifecycle hooks into every run: see or change model requests, tool calls and results. See `AgentHooks`. */
  hooks: hooksSchema.optional(),
  /** Where runs execute when they must outlive a process (`createPostgresRuntime()`). In process by default. */
  runtime: opaque<AgentRuntime>((value) => isObject(value) && isFunction(value['bind']), 'a runtime such as createPostgresRuntime()').optional(),
});

/**
 * What `createAgent` takes. Only `model` is required; an unknown key is refused by name.
 *
 * @example
 * ```ts
 * createAgent({ model: { provider: openAICompatible(), name: 'gpt-4o-mini' }, tools: [add], limits: { maxIterations: 10 } });
 * ```
 */
export interface AgentConfig<TOutput = unknown> extends Omit<z.input<typeof agentConfigSchema>, 'output'> {
  /** A schema the final answer must match: `result.output` is the validated answer, typed from it. */
  readonly output?: z.ZodType<TOutput>;
}

/** The config checked, its defaults filled in (internal). */
export type AgentSettings = z.output<typeof agentConfigSchema>;

/** Checks a config and fills in its defaults; a bad one throws ConfigurationError naming the key and what it should be. */
export function resolveConfig(config: AgentConfig): AgentSettings {
  const parsed = agentConfigSchema.safeParse(config);
  if (!parsed.success) throw new ConfigurationError(`createAgent: ${explain(parsed.error.issues, config)}`);
  const settings = parsed.data;
  const mcpServers = settings.mcpServers.map((server: unknown) => checkMcpServerConfig(server));
  const names = mcpServers.map((server) => server.name);
  const twice = names.find((name, at) => names.indexOf(name) !== at);
  if (twice !== undefined) throw new ConfigurationError(`createAgent: two MCP servers are named "${twice}"; their tools would collide. Give each a distinct \`name\`.`);
  if (settings.runtime !== undefined) {
    // A durable run is replayed by whichever worker takes its next event: all it needs must live in the database.
    if (settings.persistence.store !== undefined) throw new ConfigurationError('createAgent: `runtime` keeps its runs itself; drop `persistence.store`.');
  }
  // Values of a server's env and headers are secrets: scrubbed like API keys.
  const secrets = mcpServers.flatMap(mcpSecrets);
  const own = settings.policy.redact;
  const redact = secrets.length === 0 ? own : { ...own, secrets: [...(own?.secrets ?? []), ...secrets] };
  return { ...settings, mcpServers, policy: { ...settings.policy, ...defined({ redact }) } };
}

/** A `loadSkills()` result's skipped files are reported once, here, so a bad skill file never stops the agent. */
function skillsOf(value: readonly Skill[] | LoadedSkills): readonly Skill[] {
  if (Array.isArray(value)) return value;
  const loaded = value as LoadedSkills;
  for (const problem of loaded.problems ?? []) console.warn(`[actorloop] skill skipped: ${problem.file}${problem.line === undefined ? '' : `:${problem.line}`}: ${problem.message}`);
  return loaded.skills;
}

const list = (keys: readonly PropertyKey[]): string => keys.map((key) => `\`${String(key)}\``).join(', ');

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return typeof value === 'string' ? `the string ${JSON.stringify(value.slice(0, 40))}` : typeof value;
}

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  return path.reduce<unknown>((value, key) => (isObject(value) ? value[key as string] : undefined), root);
}

/** The keys the object schema at `path` takes, read from the schema so they cannot drift. */
function keysAt(path: readonly PropertyKey[]): string[] {
  let schema: z.core.$ZodType | undefined = agentConfigSchema;
  for (const key of [...path, undefined]) {
    while (schema !== undefined && !(schema instanceof z.ZodObject)) {
      if (schema instanceof z.ZodOptional || schema instanceof z.ZodDefault || schema instanceof z.ZodPrefault) schema = schema.unwrap();
      else if (schema instanceof z.ZodUnion) schema = schema.options.find((option) => option instanceof z.ZodObject);
      else schema = undefined;
    }
    if (key === undefined || schema === undefined) break;
    schema = schema.shape[key as string];
  }
  return schema instanceof z.ZodObject ? Object.keys(schema.shape) : [];
}

/** The first problem of a config, as a sentence naming the key and what it should be. */
function explain(issues: readonly z.core.$ZodIssue[], config: unknown, base: readonly PropertyKey[] = []): string {
  // Unknown keys first: a misspelt key often explains the other problems.
  const issue = issues.find((each) => each.code === 'unrecognized_keys') ?? issues[0];
  if (issue === undefined) return 'the config is invalid.';
  const path = [...base, ...issue.path];
  const name = path.join('.');
  const value = valueAt(config, path);
  if (issue.code === 'unrecognized_keys') {
    const word = path[0] === 'hooks' ? 'hook' : 'option';
    const owner = path.length === 0 ? 'a config takes' : `\`${name}\` takes`;
    return `unknown ${word}${issue.keys.length === 1 ? '' : 's'} ${list(issue.keys.map((key) => [...path, key].join('.')))}; ${owner} ${list(keysAt(path))}.`;
  }
  if (path.length === 0) return `needs a config object ({ model, … }) (got ${describe(value)}).`;
  if (issue.code === 'invalid_union' && isObject(value)) {
    // An object meant as the object form: its own first problem says more than "not one of these".
    const inner = issue.errors.find((branch) => branch.some((each) => each.path.length > 0 || each.code === 'unrecognized_keys'));
    if (inner !== undefined) return explain(inner, config, path);
  }
  const what = issue.code === 'invalid_type' && issue.expected === 'object' ? `an object with ${list(keysAt(path))}` : issue.message;
  return value === undefined ? `needs a \`${name}\`: ${what}.` : `\`${name}\` must be ${what} (got ${describe(value)}).`;
}

/**
 * The config with `observe.inspect` set to `inspect` when it sets none of its own: what a
 * strategy runner or an agent system hands down to the agents it builds.
 */
export function inheritInspect(config: AgentConfig, inspect: AgentObserveConfig['inspect']): AgentConfig {
  if (inspect === undefined || !isObject(config) || config.observe?.inspect !== undefined) return config;
  return { ...config, observe: { ...config.observe, inspect } };
}
