/**
 * The edge of `createAgent`: check the grouped `AgentConfig` a caller wrote (plain checks, so a
 * JavaScript caller or a config read from elsewhere gets the same messages as a typed one) and
 * flatten it into the settings the agent is built from. An unknown key is refused by name, so
 * a misspelt option fails loudly instead of being ignored.
 */
import { z } from 'zod';
import { ConfigurationError } from '../core/errors.ts';
import type { InferenceProvider, ReasoningEffort } from '../core/provider.ts';
import type { RunLimits } from '../core/run.ts';
import type { ContentLimits } from '../conversation/parts.ts';
import type { AgentHooks, Hydrator } from '../core/hooks.ts';
import { HookName } from '../core/loopEvent.ts';
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
import type { RecoveryStrategy } from '../resilience/recovery.ts';
import type { SecretRuleOptions } from '../security/secrets.ts';
import type { ToolProfile } from '../tools/profile.ts';
import type { TaintOptions } from '../policy/taint.ts';
import type { Tool } from '../tools/types.ts';
import { checkMcpServerConfig, mcpSecrets, type McpServerConfig } from '../mcp/connect.ts';
import type { AgentConfig, AgentObserveConfig, AgentResilienceConfig, AgentRuntime, LengthPolicy, ModelConfig } from './types.ts';

/** What the agent is built from: the config, checked and flat (internal; not exported from the package). */
export interface AgentSettings {
  readonly id?: string;
  readonly system?: string;
  readonly provider: InferenceProvider;
  /** The model name sent with every call, when the config names one. */
  readonly modelName?: string;
  readonly temperature?: number;
  readonly maxTokens?: number;
  readonly stream: boolean;
  readonly reasoningEffort?: ReasoningEffort;
  readonly onLength?: LengthPolicy;
  /** `model.vision`: the model takes images and files. */
  readonly vision: boolean;
  /** `context.content`: size limits on images and files. */
  readonly content?: ContentLimits;
  readonly tools: readonly Tool[];
  /** The schema the final answer must match. */
  readonly output?: z.ZodType;
  readonly gate?: PolicyGate;
  readonly toolProfile?: ToolProfile;
  readonly redact?: SecretRuleOptions;
  /** `false`: taint is not tracked. */
  readonly taint?: TaintOptions | false;
  readonly breakers?: AgentResilienceConfig['breakers'];
  readonly recovery?: RecoveryStrategy;
  /** `resilience.tools`: the executor's bounds. */
  readonly executor?: AgentResilienceConfig['tools'];
  readonly stuckDetection?: StuckDetectionOptions | false;
  readonly limits?: Partial<RunLimits>;
  readonly contextBudget?: ContextBudgetOptions;
  /** `context.compactOnOverflow`; absent means on. */
  readonly compactOnOverflow?: boolean;
  readonly preHydration?: PreHydratorOptions;
  readonly hooks?: AgentHooks;
  readonly hydrator?: Hydrator;
  /** `memory.skills`, as an array (problems of a `loadSkills()` result already reported). */
  readonly skills?: readonly Skill[];
  readonly experiences?: ExperiencesConfig;
  /** `memory.sessions`: a store, or where a file store keeps them. */
  readonly sessions?: SessionStore | { readonly dir?: string };
  readonly knowledge?: KnowledgeConfig;
  readonly store?: RunStore;
  readonly inspect?: AgentObserveConfig['inspect'];
  readonly events?: AgentObserveConfig['events'];
  readonly journalCapacity?: number;
  readonly telemetry?: true | TelemetryOptions;
  readonly mcpServers: readonly McpServerConfig[];
  readonly runtime?: AgentRuntime;
}

const TOP = ['id', 'system', 'model', 'tools', 'output', 'mcpServers', 'policy', 'resilience', 'limits', 'context', 'knowledge', 'memory', 'persistence', 'observe', 'hooks', 'runtime'] as const;

const GROUPS: Readonly<Record<string, readonly string[]>> = {
  model: ['provider', 'name', 'temperature', 'maxTokens', 'stream', 'reasoningEffort', 'onLength', 'vision'],
  policy: ['gate', 'toolProfile', 'redact', 'taint'],
  resilience: ['breakers', 'recovery', 'tools', 'stuckDetection'],
  context: ['budget', 'compactOnOverflow', 'preHydration', 'experimental_hydrator', 'content'],
  memory: ['skills', 'experiences', 'sessions'],
  persistence: ['store'],
  observe: ['inspect', 'events', 'journalCapacity', 'telemetry'],
};

type Group = Readonly<Record<string, unknown>>;

const isObject = (value: unknown): value is Group => value !== null && typeof value === 'object' && !Array.isArray(value);

/** A model backend: what `complete` and `stream` are called on. */
const isProvider = (value: unknown): value is InferenceProvider =>
  isObject(value) && typeof value['complete'] === 'function' && typeof value['stream'] === 'function';

const fail = (message: string): never => {
  throw new ConfigurationError(`createAgent: ${message}`);
};

const list = (keys: readonly string[]): string => keys.map((key) => `\`${key}\``).join(', ');

/** A group, checked: an object (or absent) holding only its known keys. */
function group(config: Group, name: string): Group | undefined {
  const value = config[name];
  if (value === undefined) return undefined;
  if (!isObject(value)) return fail(`\`${name}\` must be an object with ${list(GROUPS[name] ?? [])} (got ${describe(value)}).`);
  const known = GROUPS[name] ?? [];
  const unknown = Object.keys(value).filter((key) => !known.includes(key));
  if (unknown.length > 0) fail(`unknown option${unknown.length === 1 ? '' : 's'} ${list(unknown.map((key) => `${name}.${key}`))}; \`${name}\` takes ${list(known)}.`);
  return value;
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'string' ? `the string ${JSON.stringify(value.slice(0, 40))}` : typeof value;
}

function optional<T>(value: unknown, path: string, check: (v: unknown) => boolean, what: string): T | undefined {
  if (value === undefined) return undefined;
  if (!check(value)) fail(`\`${path}\` must be ${what} (got ${describe(value)}).`);
  return value as T;
}

const isString = (v: unknown): boolean => typeof v === 'string';
const isFiniteNumber = (v: unknown): boolean => typeof v === 'number' && Number.isFinite(v);
const isPositiveInteger = (v: unknown): boolean => Number.isInteger(v) && (v as number) > 0;
const isBoolean = (v: unknown): boolean => typeof v === 'boolean';
const isObserver = (v: unknown): boolean => typeof v === 'function' || isObject(v);
const isArray = (v: unknown): boolean => Array.isArray(v);
const isFunction = (v: unknown): boolean => typeof v === 'function';

const EFFORTS: readonly string[] = ['minimal', 'low', 'medium', 'high'];
const isEffort = (v: unknown): boolean => typeof v === 'string' && EFFORTS.includes(v);
const isLengthPolicy = (v: unknown): boolean =>
  v === 'end' || (isObject(v) && Object.keys(v).length === 1 && Number.isInteger(v['continue']) && (v['continue'] as number) >= 0);

function resolveModel(
  value: unknown,
): Pick<AgentSettings, 'provider' | 'modelName' | 'temperature' | 'maxTokens' | 'stream' | 'reasoningEffort' | 'onLength' | 'vision'> {
  const needs = 'an InferenceProvider such as openAICompatible() or scriptedModel([...]), or { provider, name?, temperature?, maxTokens?, stream?, reasoningEffort?, onLength?, vision? }';
  if (value === undefined) return fail(`needs a \`model\`: ${needs}.`);
  if (isProvider(value)) return { provider: value, stream: false, vision: false };
  if (!isObject(value) || !('provider' in value)) return fail(`\`model\` must be ${needs} (got ${describe(value)}).`);
  const model = group({ model: value }, 'model') as Partial<ModelConfig>;
  if (!isProvider(model.provider)) fail(`\`model.provider\` must be an InferenceProvider such as openAICompatible() (got ${describe(model.provider)}).`);
  const name = optional<string>(model.name, 'model.name', isString, 'a string');
  const temperature = optional<number>(model.temperature, 'model.temperature', isFiniteNumber, 'a number');
  const maxTokens = optional<number>(model.maxTokens, 'model.maxTokens', isPositiveInteger, 'a positive integer');
  const stream = optional<boolean>(model.stream, 'model.stream', isBoolean, 'true or false');
  const reasoningEffort = optional<ReasoningEffort>(model.reasoningEffort, 'model.reasoningEffort', isEffort, `one of ${EFFORTS.join(', ')}`);
  const onLength = optional<LengthPolicy>(model.onLength, 'model.onLength', isLengthPolicy, "'end' or { continue: n } (n a whole number)");
  const vision = optional<boolean>(model.vision, 'model.vision', isBoolean, 'true or false');
  return {
    provider: model.provider as InferenceProvider,
    stream: stream ?? false,
    vision: vision ?? false,
    ...(name === undefined ? {} : { modelName: name }),
    ...(temperature === undefined ? {} : { temperature }),
    ...(maxTokens === undefined ? {} : { maxTokens }),
    ...(reasoningEffort === undefined ? {} : { reasoningEffort }),
    ...(onLength === undefined ? {} : { onLength }),
  };
}

/**
 * Check a config and flatten it. Throws `ConfigurationError` for a config that is not an object,
 * lacks a model, uses an unknown key (naming it), or holds a value of the wrong kind. Values are
 * checked further where they are used (breaker options, limits, budgets).
 *
 * @example
 * ```ts
 * resolveConfig({ model: { provider, name: 'gpt-4o' }, policy: { gate } }); // { provider, modelName: 'gpt-4o', gate, stream: false, … }
 * resolveConfig({ model: provider, gate }); // throws: unknown option `gate`
 * ```
 */
export function resolveConfig(config: AgentConfig): AgentSettings {
  const raw: unknown = config;
  if (!isObject(raw)) return fail(`needs a config object ({ model, … }) (got ${describe(raw)}).`);
  const unknown = Object.keys(raw).filter((key) => !(TOP as readonly string[]).includes(key));
  if (unknown.length > 0) fail(`unknown option${unknown.length === 1 ? '' : 's'} ${list(unknown)}; a config takes ${list(TOP)}.`);

  const model = resolveModel(raw['model']);
  const policy = group(raw, 'policy') ?? {};
  const resilience = group(raw, 'resilience') ?? {};
  const context = group(raw, 'context') ?? {};
  const persistence = group(raw, 'persistence') ?? {};
  const memory = group(raw, 'memory') ?? {};
  const observe = group(raw, 'observe') ?? {};
  const id = optional<string>(raw['id'], 'id', isString, 'a string');
  const system = optional<string>(raw['system'], 'system', isString, 'a string');
  const tools = optional<readonly Tool[]>(raw['tools'], 'tools', isArray, 'an array of tools') ?? [];
  const limits = optional<Partial<RunLimits>>(raw['limits'], 'limits', isObject, 'an object');
  const knowledge = optional<KnowledgeConfig>(raw['knowledge'], 'knowledge', isObject, 'an object');
  const breakers = optional<AgentResilienceConfig['breakers']>(resilience['breakers'], 'resilience.breakers', (v) => v === false || isObject(v), 'breaker options or false');
  const stuckDetection = optional<StuckDetectionOptions | false>(resilience['stuckDetection'], 'resilience.stuckDetection', (v) => v === false || isObject(v), 'stuck-detection options or false');
  const hooks = resolveHooks(raw['hooks']);
  const mcpServers = (optional<readonly unknown[]>(raw['mcpServers'], 'mcpServers', isArray, 'an array of MCP server configs') ?? []).map(checkMcpServerConfig);
  const names = mcpServers.map((server) => server.name);
  const twice = names.find((name, at) => names.indexOf(name) !== at);
  if (twice !== undefined) fail(`two MCP servers are named "${twice}"; their tools would collide. Give each a distinct \`name\`.`);
  // Values of a server's env and headers are secrets: scrubbed like API keys wherever text goes.
  const secrets = mcpServers.flatMap(mcpSecrets);
  const ownRedact = optional<SecretRuleOptions>(policy['redact'], 'policy.redact', isObject, 'secret rule options');
  const redact = secrets.length === 0 ? ownRedact : { ...ownRedact, secrets: [...(ownRedact?.secrets ?? []), ...secrets] };
  const runtime = optional<AgentRuntime>(raw['runtime'], 'runtime', (v) => isObject(v) && typeof v['bind'] === 'function', 'a runtime such as createPostgresRuntime()');
  if (runtime !== undefined) {
    // A durable run is replayed by whichever worker takes its next event: everything it depends on must live in the database.
    if (persistence['store'] !== undefined) fail('`runtime` keeps its runs itself; drop `persistence.store`.');
    if (raw['output'] !== undefined) fail('`output` is not available with `runtime` yet.');
  }
  const entries = {
    runtime,
    id,
    system,
    tools,
    limits,
    knowledge,
    hooks,
    output: optional<z.ZodType>(raw['output'], 'output', (v) => v instanceof z.ZodType, 'a zod schema (z.object({ … }))'),
    skills: resolveSkills(memory['skills']),
    experiences: optional<ExperiencesConfig>(memory['experiences'], 'memory.experiences', (v) => isObject(v) && isObject(v['store']) && typeof v['store']['relevant'] === 'function', '{ store, topK?, project?, autoAccept?, model? } with an experience store'),
    sessions: optional<SessionStore | { readonly dir?: string }>(memory['sessions'], 'memory.sessions', isObject, 'a session store (openSessionStore()) or { dir }'),
    gate: optional<PolicyGate>(policy['gate'], 'policy.gate', (v) => isObject(v) && typeof v['evaluate'] === 'function', 'a PolicyGate (see `gates`)'),
    toolProfile: optional<ToolProfile>(policy['toolProfile'], 'policy.toolProfile', isObject, 'a tool profile'),
    redact,
    taint: optional<TaintOptions | false>(policy['taint'], 'policy.taint', (v) => v === false || isObject(v), 'taint options ({ onSideEffect, allow }) or false'),
    breakers,
    recovery: optional<RecoveryStrategy>(resilience['recovery'], 'resilience.recovery', isObject, 'a RecoveryStrategy (see `recovery`)'),
    executor: optional<AgentResilienceConfig['tools']>(resilience['tools'], 'resilience.tools', isObject, 'an object'),
    stuckDetection,
    contextBudget: optional<ContextBudgetOptions>(context['budget'], 'context.budget', isObject, 'context budget options'),
    compactOnOverflow: optional<boolean>(context['compactOnOverflow'], 'context.compactOnOverflow', isBoolean, 'true or false'),
    preHydration: optional<PreHydratorOptions>(context['preHydration'], 'context.preHydration', isObject, 'pre-hydration options'),
    content: resolveContentLimits(context['content']),
    hydrator: optional<Hydrator>(context['experimental_hydrator'], 'context.experimental_hydrator', isFunction, 'a function'),
    store: optional<RunStore>(persistence['store'], 'persistence.store', isObject, 'a RunStore such as createFileStore()'),
    inspect: optional<AgentObserveConfig['inspect']>(observe['inspect'], 'observe.inspect', isObserver, 'an inspection observer or function'),
    events: optional<AgentObserveConfig['events']>(observe['events'], 'observe.events', isObserver, 'an observer or a function of each journal entry'),
    journalCapacity: optional<number>(observe['journalCapacity'], 'observe.journalCapacity', isPositiveInteger, 'a positive integer'),
    telemetry: optional<true | TelemetryOptions>(observe['telemetry'], 'observe.telemetry', (v) => v === true || isObject(v), 'true or { tracer?, agentName? }'),
  };
  // Absent options stay absent, so `settings.x === undefined` means "not configured".
  const present = Object.fromEntries(Object.entries(entries).filter(([, value]) => value !== undefined)) as Partial<typeof entries>;
  return { ...present, ...model, tools, mcpServers };
}

/** `context.content`: positive byte limits for images and files. */
function resolveContentLimits(value: unknown): ContentLimits | undefined {
  const limits = optional<Group>(value, 'context.content', isObject, '{ maxImageBytes?, maxFileBytes? }');
  if (limits === undefined) return undefined;
  const unknown = Object.keys(limits).filter((key) => key !== 'maxImageBytes' && key !== 'maxFileBytes');
  if (unknown.length > 0) fail(`unknown option${unknown.length === 1 ? '' : 's'} ${list(unknown.map((key) => `context.content.${key}`))}; \`context.content\` takes \`maxImageBytes\`, \`maxFileBytes\`.`);
  optional(limits['maxImageBytes'], 'context.content.maxImageBytes', isPositiveInteger, 'a positive integer (bytes)');
  optional(limits['maxFileBytes'], 'context.content.maxFileBytes', isPositiveInteger, 'a positive integer (bytes)');
  return limits as ContentLimits;
}

/**
 * `memory.skills`: the skills of a `loadSkills()` result (its skipped files reported once, here,
 * so a bad skill file is seen without stopping the agent) or an array of skills.
 */
function resolveSkills(value: unknown): readonly Skill[] | undefined {
  if (value === undefined) return undefined;
  const needs = 'the result of `await loadSkills()` or an array of skills';
  if (Array.isArray(value)) return value as readonly Skill[];
  if (!isObject(value) || !Array.isArray(value['skills'])) return fail(`\`memory.skills\` must be ${needs} (got ${describe(value)}).`);
  const loaded = value as unknown as LoadedSkills;
  for (const problem of loaded.problems ?? []) console.warn(`[actorloop] skill skipped: ${problem.file}${problem.line === undefined ? '' : `:${problem.line}`}: ${problem.message}`);
  return loaded.skills;
}

/** `hooks`, checked: known hook names holding functions, and an optional positive `timeoutMs`. */
function resolveHooks(value: unknown): AgentHooks | undefined {
  if (value === undefined) return undefined;
  const known: readonly string[] = [...HookName.options, 'timeoutMs'];
  if (!isObject(value)) return fail(`\`hooks\` must be an object with ${list(known)} (got ${describe(value)}).`);
  const unknown = Object.keys(value).filter((key) => !known.includes(key));
  if (unknown.length > 0) fail(`unknown hook${unknown.length === 1 ? '' : 's'} ${list(unknown.map((key) => `hooks.${key}`))}; \`hooks\` takes ${list(known)}.`);
  for (const name of HookName.options) optional(value[name], `hooks.${name}`, isFunction, 'a function');
  optional(value['timeoutMs'], 'hooks.timeoutMs', isPositiveInteger, 'a positive integer (ms)');
  return value as AgentHooks;
}

/**
 * The config with `observe.inspect` set to `inspect` when it sets none of its own: what a
 * strategy runner or an agent system hands down to the agents it builds from configs.
 *
 * @example
 * ```ts
 * createAgent(inheritInspect(config, system.inspect)); // the config's own inspector wins
 * ```
 */
export function inheritInspect(config: AgentConfig, inspect: AgentObserveConfig['inspect']): AgentConfig {
  if (inspect === undefined || !isObject(config) || config.observe?.inspect !== undefined) return config;
  return { ...config, observe: { ...config.observe, inspect } };
}
