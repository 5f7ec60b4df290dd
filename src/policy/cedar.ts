/**
 * A gate that decides with Cedar policies (`@cedar-policy/cedar-wasm`). Each call is a request:
 * principal `Agent::"<agent id>"`, action `Action::"call"`, resource `Tool::"<tool>"` (attributes
 * `name` and `permissions`, parents the `ToolGroup`s whose globs match it), context `arguments`,
 * `iteration`, `runId` and `tainted` (the run has read untrusted content). Policies are parsed (and validated against a schema, when given) once,
 * when the gate is built: a policy that does not parse is a configuration error naming its line
 * and column, never a deny-all at run time.
 */
import * as cedar from '@cedar-policy/cedar-wasm/nodejs';
import { randomUUID } from 'node:crypto';
import { ConfigurationError } from '../core/errors.ts';
import { ALLOW } from './decision.ts';
import { globToRegExp } from './glob.ts';
import type { GateContext, GateDecision, PolicyGate, ProposedAction } from './types.ts';

/** One entity in Cedar's JSON form (groups of groups, agent attributes, …). */
export type CedarEntity = cedar.EntityJson;

/**
 * Options of `gates.cedar`.
 *
 * @example
 * ```ts
 * const options: CedarGateOptions = {
 *   policies: 'permit(principal, action, resource in ToolGroup::"read");',
 *   groups: { read: ['read_*', 'search'] },
 * };
 * ```
 */
export interface CedarGateOptions {
  /** Cedar policy text. `@id("…")` names a policy in denials; `@reason("…")` says why, to the model. */
  readonly policies: string;
  /** Tool groups: group name → tool-name globs (`*`, `?`). A tool is `in ToolGroup::"<group>"` for each match. */
  readonly groups?: Readonly<Record<string, readonly string[]>>;
  /** More entities, in Cedar's JSON form: groups inside groups, attributes of agents. */
  readonly entities?: readonly CedarEntity[];
  /** A Cedar schema (text or JSON). Policies are validated against it when the gate is built, requests when evaluated. */
  readonly schema?: string | Record<string, unknown>;
}

/** `Type::id` of an entity uid in either of Cedar's JSON forms. */
function uidKey(uid: cedar.EntityUidJson): string {
  const { type, id } = '__entity' in uid ? uid.__entity : uid;
  return `${type}::${id}`;
}

interface NamedPolicy {
  readonly id: string;
  readonly reason?: string;
}

/** 1-based line and column of an offset in `text`. */
function position(text: string, offset: number): string {
  const before = text.slice(0, Math.max(0, offset));
  const line = before.split('\n').length;
  const column = offset - before.lastIndexOf('\n');
  return `line ${line}, column ${column}`;
}

function describeErrors(text: string, errors: readonly cedar.DetailedError[]): string {
  return errors
    .map((error) => {
      const at = error.sourceLocations?.[0];
      const where = at === undefined ? '' : ` at ${position(text, at.start)}`;
      const hint = at?.label ?? error.help;
      return `${error.message}${where}${hint === null || hint === undefined ? '' : ` (${hint})`}`;
    })
    .join('; ');
}

const ANNOTATION = (name: string) => new RegExp(`@${name}\\s*\\(\\s*"((?:[^"\\\\]|\\\\.)*)"\\s*\\)`);

/** Split the policy text into policies with stable ids: their `@id`, else `policy<N> (line L)`. */
function namePolicies(text: string): { readonly byId: Record<string, string>; readonly named: Map<string, NamedPolicy> } {
  const parsed = cedar.checkParsePolicySet({ staticPolicies: text });
  if (parsed.type === 'failure') throw new ConfigurationError(`gates.cedar: the policies do not parse: ${describeErrors(text, parsed.errors)}.`);
  const parts = cedar.policySetTextToParts(text);
  if (parts.type === 'failure') throw new ConfigurationError(`gates.cedar: the policies do not parse: ${describeErrors(text, parts.errors)}.`);
  if (parts.policy_templates.length > 0) throw new ConfigurationError('gates.cedar: policy templates are not supported; write static policies.');
  const byId: Record<string, string> = {};
  const named = new Map<string, NamedPolicy>();
  let searchFrom = 0;
  parts.policies.forEach((policy, index) => {
    const at = text.indexOf(policy.trim().slice(0, 40), searchFrom);
    if (at >= 0) searchFrom = at + 1;
    const line = at < 0 ? undefined : text.slice(0, at).split('\n').length;
    const id = ANNOTATION('id').exec(policy)?.[1] ?? `policy${index}${line === undefined ? '' : ` (line ${line})`}`;
    if (Object.hasOwn(byId, id)) throw new ConfigurationError(`gates.cedar: two policies have the id "${id}"; ids must be unique.`);
    byId[id] = policy;
    const reason = ANNOTATION('reason').exec(policy)?.[1];
    named.set(id, { id, ...(reason === undefined ? {} : { reason }) });
  });
  return { byId, named };
}

/**
 * An argument value in Cedar's JSON form: integers as Longs, other numbers as strings, arrays as
 * sets, objects as records. `null`, `undefined` and keys starting with `__` (Cedar's JSON escapes,
 * which a model could use to forge entity references) are left out.
 */
function toCedar(value: unknown, depth = 0): cedar.CedarValueJson | undefined {
  if (depth > 32) return undefined;
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value;
    case 'number':
      return Number.isSafeInteger(value) ? value : String(value);
    case 'object': {
      if (value === null) return undefined;
      if (Array.isArray(value)) return value.map((item) => toCedar(item, depth + 1)).filter((item): item is cedar.CedarValueJson => item !== undefined);
      const record: Record<string, cedar.CedarValueJson> = {};
      for (const [key, item] of Object.entries(value)) {
        if (key.startsWith('__')) continue;
        const converted = toCedar(item, depth + 1);
        if (converted !== undefined) record[key] = converted;
      }
      return record;
    }
    default:
      return undefined;
  }
}

/**
 * A gate deciding each call with Cedar. A deny tells the model which policies decided and why
 * (`@reason`); with no permit matching, it says so. Compose it with other gates for `modify`.
 *
 * @example
 * ```ts
 * const gate = gates.cedar({
 *   policies: `
 *     permit(principal, action, resource in ToolGroup::"files");
 *     @id("no-etc") @reason("System files are off limits.")
 *     forbid(principal, action, resource) when { context.arguments has path && context.arguments.path like "/etc/*" };`,
 *   groups: { files: ['file_*'] },
 * });
 * ```
 */
export function cedarGate(options: CedarGateOptions): PolicyGate {
  if (options === null || typeof options !== 'object' || typeof options.policies !== 'string') {
    throw new ConfigurationError('gates.cedar needs { policies: "<Cedar policy text>" }.');
  }
  const { byId, named } = namePolicies(options.policies);
  const setId = `actorloop-${randomUUID()}`;
  const preparsed = cedar.preparsePolicySet(setId, { staticPolicies: byId });
  if (preparsed.type === 'failure') throw new ConfigurationError(`gates.cedar: the policies do not parse: ${describeErrors(options.policies, preparsed.errors)}.`);
  let schemaName: string | undefined;
  if (options.schema !== undefined) {
    const schema = options.schema as cedar.Schema;
    const validated = cedar.validate({ schema, policies: { staticPolicies: byId }, validationSettings: { mode: 'strict' } });
    if (validated.type === 'failure') throw new ConfigurationError(`gates.cedar: the schema does not parse: ${describeErrors(typeof schema === 'string' ? schema : '', validated.errors)}.`);
    if (validated.validationErrors.length > 0) {
      const problems = validated.validationErrors.map((e) => `${e.policyId}: ${describeErrors(byId[e.policyId] ?? '', [e.error])}`).join('; ');
      throw new ConfigurationError(`gates.cedar: the policies do not match the schema: ${problems}.`);
    }
    schemaName = `${setId}-schema`;
    cedar.preparseSchema(schemaName, schema);
  }
  const groups = Object.entries(options.groups ?? {}).map(([group, globs]) => ({ group, patterns: globs.map(globToRegExp) }));
  const declared = new Set((options.entities ?? []).map((entity) => uidKey(entity.uid)));
  // Groups the caller did not declare exist as plain entities, so `in ToolGroup::"x"` resolves.
  const given = options.entities ?? [];
  const groupEntity = (group: string): CedarEntity[] =>
    declared.has(`ToolGroup::${group}`) ? [] : [{ uid: { type: 'ToolGroup', id: group }, attrs: {}, parents: [] }];

  const explain = (ids: readonly string[]): string =>
    ids.map((id) => {
      const policy = named.get(id);
      return policy?.reason === undefined ? `"${id}"` : `"${id}" (${policy.reason})`;
    }).join(', ');

  return {
    name: 'cedar',
    evaluate(action: ProposedAction, context: GateContext): GateDecision {
      const memberOf = groups.filter(({ patterns }) => patterns.some((p) => p.test(action.tool))).map(({ group }) => group);
      const tool: CedarEntity = {
        uid: { type: 'Tool', id: action.tool },
        attrs: { name: action.tool, permissions: [...action.permissions] },
        parents: memberOf.map((group) => ({ type: 'ToolGroup', id: group })),
      };
      const agent: CedarEntity[] = declared.has(`Agent::${context.agentId}`) ? [] : [{ uid: { type: 'Agent', id: context.agentId }, attrs: {}, parents: [] }];
      const answer = cedar.statefulIsAuthorized({
        principal: { type: 'Agent', id: context.agentId },
        action: { type: 'Action', id: 'call' },
        resource: { type: 'Tool', id: action.tool },
        context: { arguments: toCedar(action.arguments) ?? {}, iteration: context.iteration, runId: context.runId, tainted: context.taint !== undefined },
        preparsedPolicySetId: setId,
        ...(schemaName === undefined ? {} : { preparsedSchemaName: schemaName, validateRequest: true }),
        // Only the groups this tool is in: every entity sent is parsed again on each call.
        entities: [tool, ...agent, ...memberOf.flatMap(groupEntity), ...given],
      });
      if (answer.type === 'failure') {
        return { kind: 'deny', reason: `The Cedar request for "${action.tool}" failed, so the call is denied: ${describeErrors('', answer.errors)}.` };
      }
      const { decision, diagnostics } = answer.response;
      if (decision === 'allow') return ALLOW;
      const deciding = diagnostics.reason;
      const failed = diagnostics.errors.map((e) => `"${e.policyId}" could not be evaluated (${e.error.message})`);
      const why =
        deciding.length > 0
          ? `Cedar policy ${explain(deciding)} forbids calling "${action.tool}" with these arguments.`
          : `No Cedar policy permits calling "${action.tool}" with these arguments.`;
      return { kind: 'deny', reason: failed.length === 0 ? why : `${why} ${failed.join('; ')}.` };
    },
  };
}
