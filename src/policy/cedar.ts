/**
 * Each call is a Cedar request: principal `Agent::"<id>"`, action `Action::"call"`, resource `Tool::"<tool>"` (in the
 * `ToolGroup`s its globs match), context `arguments`, `iteration`, `runId`, `tainted`. Policies are parsed once, when
 * the gate is built, so a bad one is a configuration error naming its place, never a deny-all at run time.
 */
import * as cedar from '@cedar-policy/cedar-wasm/nodejs';
import { randomUUID } from 'node:crypto';
import { ConfigurationError } from '../core/errors.ts';
import { ALLOW } from './decision.ts';
import { globToRegExp } from './glob.ts';
import type { GateContext, GateDecision, PolicyGate, ProposedAction } from './types.ts';
import { defined } from '../core/defined.ts';

export type CedarEntity = cedar.EntityJson;

export interface CedarGateOptions {
  /**
 * `@id` names a policy in denials, `@reason` says why to the model. `@confirm("…")` on a forbid asks a human instead
 * of denying; never on a permit, since it cannot permit anything by itself.
 */
  readonly policies: string;
  /** Tool groups: group name → tool-name globs (`*`, `?`). A tool is `in ToolGroup::"<group>"` for each match. */
  readonly groups?: Readonly<Record<string, readonly string[]>>;
  readonly entities?: readonly CedarEntity[];
  /** A Cedar schema (text or JSON). Policies are validated against it when the gate is built, requests when evaluated. */
  readonly schema?: string | Record<string, unknown>;
}

/** Tools whose groups, entities and policies are kept between calls; the least recently used is dropped. */
const TOOL_CACHE_LIMIT = 256;
/** Policy sets made for a subset of the policies, per gate, and the calls a tool takes to get one. */
const SLICE_LIMIT = 32;
const SLICE_AFTER_CALLS = 32;
/** Calls a set must go unused before its slot is given to another. */
const SLICE_IDLE_CALLS = 1_000;

function sameStrings(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

// Policy sets in the wasm module outlive the gate that made them unless emptied.
const released = new FinalizationRegistry<readonly string[]>((ids) => {
  for (const id of ids) cedar.preparsePolicySet(id, { staticPolicies: {} });
});

/** A key for an entity uid in either of Cedar's JSON forms (types have no `"`, so it is unambiguous). */
function uidKey(uid: cedar.EntityUidJson): string {
  const { type, id } = '__entity' in uid ? uid.__entity : uid;
  return `${type}::"${id}"`;
}

function ancestors(start: string, parents: readonly string[], parentsOf: ReadonlyMap<string, readonly string[]>): Set<string> {
  const seen = new Set([start]);
  const queue = [...parents];
  for (let key = queue.pop(); key !== undefined; key = queue.pop()) {
    if (seen.has(key)) continue;
    seen.add(key);
    queue.push(...(parentsOf.get(key) ?? []));
  }
  return seen;
}

function inScope(constraint: cedar.ResourceConstraint | undefined, self: string, type: string, within: ReadonlySet<string>): boolean {
  if (constraint === undefined) return true;
  const under = (target: cedar.PrincipalOrResourceInConstraint): boolean => !('entity' in target) || within.has(uidKey(target.entity));
  switch (constraint.op) {
    case '==':
      return !('entity' in constraint) || uidKey(constraint.entity) === self;
    case 'in':
      return under(constraint);
    case 'is':
      return constraint.entity_type === type && (constraint.in === undefined || under(constraint.in));
    default:
      return true;
  }
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

function nameCompared(attr: unknown, value: unknown): string | undefined {
  const dot = isRecord(attr) ? attr['.'] : undefined;
  const isName = isRecord(dot) && dot.attr === 'name' && isRecord(dot.left) && dot.left.Var === 'resource';
  return isName && isRecord(value) && typeof value.Value === 'string' ? value.Value : undefined;
}

/** A policy, with what can rule it out for a tool: its resource scope and the tool name it first tests. */
interface Reach {
  readonly id: string;
  readonly text: string;
  readonly resource?: cedar.ResourceConstraint;
  readonly name?: string;
}

/** Neither the scope nor a leading `resource.name == "…"` can error, so a policy they rule out is neither satisfied nor in error: leaving it out changes no decision. */
function reachOf(text: string): Omit<Reach, 'id' | 'text'> {
  const parsed = cedar.policyToJson(text);
  if (parsed.type === 'failure') return {};
  const first = parsed.json.conditions[0];
  let expr: unknown = first?.kind === 'when' ? first.body : undefined;
  while (isRecord(expr) && isRecord(expr['&&'])) expr = expr['&&'].left;
  const equal = isRecord(expr) ? expr['=='] : undefined;
  const name = isRecord(equal) ? (nameCompared(equal.left, equal.right) ?? nameCompared(equal.right, equal.left)) : undefined;
  return { resource: parsed.json.resource, ...defined({ name }) };
}

interface NamedPolicy {
  readonly id: string;
  readonly reason?: string;
  /** Set on a `@confirm` forbid: the question for the human (empty when the annotation has no text). */
  readonly confirm?: string;
  readonly forbid: boolean;
}

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
    const { confirm, forbid } = effectOf(id, policy);
    named.set(id, { id, forbid, ...defined({ reason, confirm }) });
  });
  return { byId, named };
}

/** Whether a policy forbids, and its `@confirm` annotation (read from Cedar's own parse, not the text), checked to be on a forbid. */
function effectOf(id: string, policy: string): { readonly forbid: boolean; readonly confirm?: string } {
  const parsed = cedar.policyToJson(policy);
  if (parsed.type === 'failure') throw new ConfigurationError(`gates.cedar: policy "${id}" does not parse: ${describeErrors(policy, parsed.errors)}.`);
  const { annotations, effect } = parsed.json;
  const forbid = effect === 'forbid';
  if (annotations === undefined || !Object.hasOwn(annotations, 'confirm')) return { forbid };
  if (effect !== 'forbid') {
    throw new ConfigurationError(
      `gates.cedar: policy "${id}" is a permit annotated @confirm; put @confirm on a forbid policy, which then asks a human instead of denying (a permit cannot ask).`,
    );
  }
  return { forbid, confirm: annotations.confirm ?? '' };
}

/** Keys starting with `__` (Cedar's JSON escapes, which a model could use to forge entity references) are left out. */
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
 * A deny tells the model which policies decided and why (`@reason`). A call a permit allows and only `@confirm`
 * forbids stop is a `confirm`, asking the `@confirm` texts.
 * @example
 * ```ts
 * gates.cedar({ policies: 'permit(principal, action, resource in ToolGroup::"files");', groups: { files: ['file_*'] } });
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
  // The policies without the `@confirm` forbids: whether a permit holds once those are set aside.
  const asking = [...named.values()].filter((policy) => policy.confirm !== undefined).map(({ id }) => id);
  let unasked: string | undefined;
  if (asking.length > 0) {
    unasked = `${setId}-unasked`;
    const rest = Object.fromEntries(Object.entries(byId).filter(([id]) => !asking.includes(id)));
    const prepared = cedar.preparsePolicySet(unasked, { staticPolicies: rest });
    if (prepared.type === 'failure') throw new ConfigurationError(`gates.cedar: the policies do not parse: ${describeErrors(options.policies, prepared.errors)}.`);
  }
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
  const given = options.entities ?? [];
  const declared = new Set(given.map((entity) => uidKey(entity.uid)));
  const parentsOf = new Map(given.map((entity) => [uidKey(entity.uid), entity.parents.map(uidKey)]));
  // Groups the caller did not declare exist as plain entities, so `in ToolGroup::"x"` resolves.
  const groupEntity = (group: string): CedarEntity[] =>
    declared.has(uidKey({ type: 'ToolGroup', id: group })) ? [] : [{ uid: { type: 'ToolGroup', id: group }, attrs: {}, parents: [] }];

  const question = (ids: readonly string[], tool: string): string =>
    ids
      .map((id) => {
        const policy = named.get(id);
        return policy?.confirm || policy?.reason || `Cedar policy "${id}" asks a human to approve calling "${tool}".`;
      })
      .join('; ');

  const explain = (ids: readonly string[]): string =>
    ids.map((id) => {
      const policy = named.get(id);
      return policy?.reason === undefined ? `"${id}"` : `"${id}" (${policy.reason})`;
    }).join(', ');

  // Per tool: its groups (one glob test per group), the entities of its last request (reused while
  // the permissions and the agent stay the same) and its policies. Bounded: tool names come from the model.
  interface OwnPolicies {
    readonly policies: Record<string, string>;
    readonly key: string;
  }
  interface ToolState {
    readonly parents: readonly cedar.EntityUidJson[];
    readonly groupEntities: readonly CedarEntity[];
    calls: number;
    /** The policies that can apply to the tool and their key, once it is called often enough; `null`: all of them. */
    own?: OwnPolicies | null;
    last?: { readonly permissions: readonly string[]; readonly agentId: string; readonly entities: CedarEntity[] };
  }
  const tools = new Map<string, ToolState>();
  const toolState = (name: string): ToolState => {
    let state = tools.get(name);
    if (state !== undefined) {
      tools.delete(name);
    } else {
      const memberOf = groups.filter(({ patterns }) => patterns.some((p) => p.test(name))).map(({ group }) => group);
      state = { parents: memberOf.map((group) => ({ type: 'ToolGroup', id: group })), groupEntities: memberOf.flatMap(groupEntity), calls: 0 };
      if (tools.size >= TOOL_CACHE_LIMIT) tools.delete(tools.keys().next().value as string);
    }
    tools.set(name, state);
    return state;
  };
  const entitiesFor = (state: ToolState, name: string, permissions: readonly string[], agentId: string): CedarEntity[] => {
    const last = state.last;
    if (last !== undefined && last.agentId === agentId && sameStrings(last.permissions, permissions)) return last.entities;
    const tool: CedarEntity = { uid: { type: 'Tool', id: name }, attrs: { name, permissions: [...permissions] }, parents: [...state.parents] };
    const agent: CedarEntity[] = declared.has(uidKey({ type: 'Agent', id: agentId })) ? [] : [{ uid: { type: 'Agent', id: agentId }, attrs: {}, parents: [] }];
    // Only the groups this tool is in: every entity sent is parsed again on each call.
    const entities = [tool, ...agent, ...state.groupEntities, ...given];
    state.last = { permissions: [...permissions], agentId, entities };
    return entities;
  };

  // Cedar evaluates every policy of a set on each call, so a tool called often gets a set of only the policies that
  // can apply to it (shared by tools with the same ones); a slot is taken only from an idle set.
  let reaches: readonly Reach[] | undefined;
  const ownPolicies = (name: string, state: ToolState): OwnPolicies | null => {
    reaches ??= Object.entries(byId).map(([id, text]) => ({ id, text, ...reachOf(text) }));
    const self = uidKey({ type: 'Tool', id: name });
    const within = ancestors(self, state.parents.map(uidKey), parentsOf);
    const kept = reaches.filter((reach) => inScope(reach.resource, self, 'Tool', within) && (reach.name === undefined || reach.name === name));
    if (kept.length === reaches.length) return null;
    return { policies: Object.fromEntries(kept.map(({ id, text }) => [id, text])), key: kept.map(({ id }) => id).join('\n') };
  };
  const slices = new Map<string, { readonly setId: string; lastUsed: number }>();
  const owned = [setId];
  let calls = 0;
  const setFor = (name: string, state: ToolState): string => {
    calls += 1;
    state.calls += 1;
    if (state.calls < SLICE_AFTER_CALLS) return setId;
    const own = state.own ?? ownPolicies(name, state);
    state.own = own;
    if (own === null) return setId;
    let slice = slices.get(own.key);
    if (slice === undefined) {
      let slot: string;
      if (owned.length <= SLICE_LIMIT) {
        slot = `${setId}-${owned.length}`;
        owned.push(slot);
      } else {
        let idlest: [string, { readonly setId: string; lastUsed: number }] | undefined;
        for (const entry of slices) if (idlest === undefined || entry[1].lastUsed < idlest[1].lastUsed) idlest = entry;
        if (idlest === undefined || calls - idlest[1].lastUsed < SLICE_IDLE_CALLS) return setId;
        slices.delete(idlest[0]);
        slot = idlest[1].setId;
      }
      if (cedar.preparsePolicySet(slot, { staticPolicies: own.policies }).type === 'failure') return setId;
      slice = { setId: slot, lastUsed: calls };
      slices.set(own.key, slice);
    }
    slice.lastUsed = calls;
    return slice.setId;
  };
  // A gate dropped by its owner empties its policy sets, which live in the wasm module.
  released.register(tools, owned);
  if (unasked !== undefined) released.register(tools, [unasked]);

  return {
    name: 'cedar',
    evaluate(action: ProposedAction, context: GateContext): GateDecision {
      const state = toolState(action.tool);
      const request: cedar.StatefulAuthorizationCall = {
        principal: { type: 'Agent', id: context.agentId },
        action: { type: 'Action', id: 'call' },
        resource: { type: 'Tool', id: action.tool },
        context: { arguments: toCedar(action.arguments) ?? {}, iteration: context.iteration, runId: context.runId, tainted: context.taint !== undefined },
        preparsedPolicySetId: setFor(action.tool, state),
        ...(schemaName === undefined ? {} : { preparsedSchemaName: schemaName, validateRequest: true }),
        entities: entitiesFor(state, action.tool, action.permissions, context.agentId),
      };
      let answer = cedar.statefulIsAuthorized(request);
      if (answer.type === 'success' && answer.response.decision === 'deny' && unasked !== undefined) {
        const forbidding = answer.response.diagnostics.reason;
        // Only `@confirm` forbids stand in the way: a human decides if a permit holds without them.
        if (forbidding.length > 0 && forbidding.every((id) => named.get(id)?.confirm !== undefined)) {
          const without = cedar.statefulIsAuthorized({ ...request, preparsedPolicySetId: unasked });
          const checked = without.type === 'success' && without.response.diagnostics.errors.every((e) => named.get(e.policyId)?.forbid !== true);
          if (without.type === 'success' && without.response.decision === 'allow' && checked) return { kind: 'confirm', reason: question(forbidding, action.tool) };
          answer = without;
        }
      }
      if (answer.type === 'failure') {
        return { kind: 'deny', reason: `The Cedar request for "${action.tool}" failed, so the call is denied: ${describeErrors('', answer.errors)}.` };
      }
      const { decision, diagnostics } = answer.response;
      // Cedar skips a policy that errors; for a forbid that would let a model's argument types (a
      // fraction where the policy compares whole numbers) switch the forbid off, so it denies instead.
      const unchecked = diagnostics.errors.filter((e) => named.get(e.policyId)?.forbid === true);
      if (decision === 'allow' && unchecked.length > 0) {
        const failed = unchecked.map((e) => `"${e.policyId}" could not be evaluated (${e.error.message})`).join('; ');
        return { kind: 'deny', reason: `Cedar policy ${failed}, and a forbid that cannot be checked denies calling "${action.tool}" with these arguments.` };
      }
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
