/**
 * An experience: a rule an agent learned from earlier runs — when `condition` holds, do `rule` —
 * with the evidence and runs it came from, where it applies (`scope`), and how it has fared since
 * (`usageCount`, `successCount`, `successRate`). Learned experiences start `pending` and reach the
 * model only once `active`. The schema and the type share a name; the store document carries a
 * schema version like every persisted record.
 */
import { resolve, sep } from 'node:path';
import { z } from 'zod';

/**
 * Version of the experiences document; readers refuse newer ones.
 *
 * @example
 * ```ts
 * const empty: ExperienceDocument = { v: EXPERIENCES_VERSION, items: [] };
 * ```
 */
export const EXPERIENCES_VERSION = 1;

/**
 * Where an experience applies: everywhere, inside one project directory (and its
 * subdirectories), or whenever one tool is available.
 *
 * @example
 * ```ts
 * ExperienceScope.parse({ kind: 'tool', name: 'run_tests' }); // { kind: 'tool', name: 'run_tests' }
 * ```
 */
export const ExperienceScope = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('global') }),
  z.object({ kind: z.literal('project'), path: z.string().min(1) }),
  z.object({ kind: z.literal('tool'), name: z.string().min(1) }),
]);
export type ExperienceScope = z.infer<typeof ExperienceScope>;

/**
 * `pending` experiences wait for review (`store.accept`); only `active` ones are retrieved.
 *
 * @example
 * ```ts
 * ExperienceStatus.parse('active'); // 'active'
 * ```
 */
export const ExperienceStatus = z.enum(['pending', 'active']);
export type ExperienceStatus = z.infer<typeof ExperienceStatus>;

/**
 * Whether an experience has helped: a run that used it ended in `success` or `failure`.
 *
 * @example
 * ```ts
 * await store.recordOutcome(usedIds, result.status === 'done' ? 'success' : 'failure');
 * ```
 */
export type ExperienceOutcome = 'success' | 'failure';

const ExperienceFields = z.object({
  id: z.string().min(1),
  scope: ExperienceScope,
  /** The situation, phrased to follow "When" (`the test suite times out on CI`). */
  condition: z.string().min(1),
  /** What to do then, as an imperative (`run vitest with --pool=forks`). */
  rule: z.string().min(1),
  /** Short facts or quotes from the source runs supporting the rule. */
  evidence: z.array(z.string()),
  sourceRunIds: z.array(z.string()),
  confidence: z.number().min(0).max(1),
  /** Finished runs that were shown this experience. */
  usageCount: z.number().int().nonnegative(),
  /** Of those, the runs that succeeded. */
  successCount: z.number().int().nonnegative(),
  /** successCount / usageCount; 0 while unused. */
  successRate: z.number().min(0).max(1),
  /**
   * The latest runs counted in `usageCount` (newest last), when outcomes were recorded with a run
   * id: a run that ends again (resumed after a crash, a retried durable step) is not counted twice.
   */
  countedRunIds: z.array(z.string()).optional(),
  status: ExperienceStatus,
  /** Milliseconds since the epoch. */
  createdAt: z.number(),
  updatedAt: z.number(),
});

/**
 * One stored experience.
 *
 * @example
 * ```ts
 * const experience: Experience = {
 *   id: 'exp_1', scope: { kind: 'global' }, condition: 'the test suite times out on CI', rule: 'run vitest with --pool=forks',
 *   evidence: ['3 runs timed out with threads'], sourceRunIds: ['run_1'], confidence: 0.8,
 *   usageCount: 0, successCount: 0, successRate: 0, status: 'pending', createdAt: Date.now(), updatedAt: Date.now(),
 * };
 * ```
 */
export const Experience = ExperienceFields.superRefine((item, ctx) => {
  if (item.successCount > item.usageCount) {
    ctx.addIssue({ code: 'custom', path: ['successCount'], message: `successCount ${item.successCount} exceeds usageCount ${item.usageCount}` });
  } else if (Math.abs(item.successRate - successRateOf(item.usageCount, item.successCount)) > 1e-9) {
    ctx.addIssue({ code: 'custom', path: ['successRate'], message: 'successRate differs from successCount / usageCount' });
  }
});
export type Experience = z.infer<typeof Experience>;

/**
 * What `store.add` takes: the learned content, without the fields the store assigns. `scope`
 * defaults to global; a relative project path is resolved against the working directory.
 *
 * @example
 * ```ts
 * await store.add({ condition: 'npm install fails with ERESOLVE', rule: 'retry with --legacy-peer-deps', confidence: 0.7,
 *   scope: { kind: 'project', path: '/srv/app' }, evidence: ['run_9: ERESOLVE unable to resolve dependency tree'] });
 * ```
 */
export const NewExperience = z.object({
  condition: z.string(),
  rule: z.string(),
  evidence: z.array(z.string()).optional(),
  sourceRunIds: z.array(z.string()).optional(),
  scope: ExperienceScope.optional(),
  confidence: z.number().min(0).max(1),
});
export type NewExperience = z.infer<typeof NewExperience>;

/**
 * A learned candidate, every field given: what `learnExperiences` returns and `store.add` takes.
 *
 * @example
 * ```ts
 * const { candidates } = await learnExperiences({ model, run });
 * for (const candidate of candidates) await store.add(candidate);
 * ```
 */
export type ExperienceCandidate = Required<NewExperience>;

/**
 * The whole store file: `{ v, items }`.
 *
 * @example
 * ```ts
 * ExperienceDocument.parse({ v: 1, items: [] });
 * ```
 */
export const ExperienceDocument = z.object({
  v: z.literal(EXPERIENCES_VERSION),
  items: z.array(Experience).superRefine((items, ctx) => {
    const seen = new Set<string>();
    for (const [i, item] of items.entries()) {
      if (seen.has(item.id)) ctx.addIssue({ code: 'custom', path: [i, 'id'], message: `duplicate id ${item.id}` });
      seen.add(item.id);
    }
  }),
});
export type ExperienceDocument = z.infer<typeof ExperienceDocument>;

/**
 * The share of successful runs among those that used an experience; 0 while unused.
 *
 * @example
 * ```ts
 * successRateOf(4, 3); // 0.75
 * successRateOf(0, 0); // 0
 * ```
 */
export function successRateOf(usageCount: number, successCount: number): number {
  return usageCount === 0 ? 0 : successCount / usageCount;
}

const collapse = (text: string): string => text.trim().replace(/\s+/g, ' ').toLowerCase();

/**
 * A scope as one comparable string.
 *
 * @example
 * ```ts
 * scopeKey({ kind: 'tool', name: 'git' }); // 'tool:git'
 * ```
 */
export function scopeKey(scope: ExperienceScope): string {
  switch (scope.kind) {
    case 'global':
      return 'global';
    case 'project':
      return `project:${scope.path}`;
    case 'tool':
      return `tool:${scope.name}`;
  }
}

/**
 * What makes two experiences the same: condition and rule (ignoring case and spacing) in the same
 * scope. Adding one that exists merges it instead.
 *
 * @example
 * ```ts
 * experienceKey({ condition: 'CI  fails', rule: 'retry', scope: { kind: 'global' } }) ===
 *   experienceKey({ condition: 'ci fails', rule: 'Retry', scope: { kind: 'global' } }); // true
 * ```
 */
export function experienceKey(item: Pick<Experience, 'condition' | 'rule' | 'scope'>): string {
  return `${collapse(item.condition)}\u0000${collapse(item.rule)}\u0000${scopeKey(item.scope)}`;
}

/** Where a run happens, as `relevant()` and `scopeApplies` read it. */
export interface ExperienceContext {
  /** The run's project directory (resolved against the working directory). */
  readonly project?: string;
  /** Names of the tools the run has. */
  readonly tools?: ReadonlySet<string> | readonly string[];
}

/**
 * True when an experience of `scope` applies to a run in `context`: global always, a project
 * scope when the run's project is that directory or inside it, a tool scope when the run has the
 * tool.
 *
 * @example
 * ```ts
 * scopeApplies({ kind: 'project', path: '/srv/app' }, { project: '/srv/app/packages/api' }); // true
 * scopeApplies({ kind: 'project', path: '/srv/app' }, { project: '/srv/application' });      // false
 * ```
 */
export function scopeApplies(scope: ExperienceScope, context: ExperienceContext): boolean {
  const tools = context.tools === undefined ? new Set<string>() : 'has' in context.tools ? context.tools : new Set(context.tools);
  return appliesIn(scope, context.project === undefined ? undefined : resolve(context.project), tools);
}

/**
 * `scopeApplies` for a project path already resolved and a tool set: what `relevant()` checks
 * for every hit, so nothing is resolved or copied per experience.
 *
 * @example
 * ```ts
 * const project = resolve(options.project);
 * hits.filter((e) => appliesIn(e.scope, project, new Set(options.tools)));
 * ```
 */
export function appliesIn(scope: ExperienceScope, resolvedProject: string | undefined, tools: ReadonlySet<string>): boolean {
  switch (scope.kind) {
    case 'global':
      return true;
    case 'project':
      return resolvedProject !== undefined && isInside(resolvedProject, scope.path);
    case 'tool':
      return tools.has(scope.name);
  }
}

/**
 * `path` is `dir` or below it; both resolved. Compared by whole path segments, so
 * `/srv/application` is not inside `/srv/app`.
 */
function isInside(path: string, dir: string): boolean {
  if (path === dir) return true;
  return path.startsWith(dir.endsWith(sep) ? dir : `${dir}${sep}`);
}
