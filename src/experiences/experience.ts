/** A rule learned from earlier runs: when `condition` holds, do `rule`. It reaches the model only once `active`. */
import { resolve, sep } from 'node:path';
import { z } from 'zod';

/** Readers refuse newer versions. */
export const EXPERIENCES_VERSION = 1;

/** A project scope covers its subdirectories; a tool scope applies whenever that tool is available. */
export const ExperienceScope = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('global') }),
  z.object({ kind: z.literal('project'), path: z.string().min(1) }),
  z.object({ kind: z.literal('tool'), name: z.string().min(1) }),
]);
export type ExperienceScope = z.infer<typeof ExperienceScope>;

/** Only `active` experiences are retrieved; `pending` ones wait for `store.accept`. */
export const ExperienceStatus = z.enum(['pending', 'active']);
export type ExperienceStatus = z.infer<typeof ExperienceStatus>;

export type ExperienceOutcome = 'success' | 'failure';

const ExperienceFields = z.object({
  id: z.string().min(1),
  scope: ExperienceScope,
  /** Phrased to follow "When" (`the test suite times out on CI`). */
  condition: z.string().min(1),
  /** An imperative (`run vitest with --pool=forks`). */
  rule: z.string().min(1),
  evidence: z.array(z.string()),
  sourceRunIds: z.array(z.string()),
  confidence: z.number().min(0).max(1),
  /** Finished runs that were shown this experience. */
  usageCount: z.number().int().nonnegative(),
  successCount: z.number().int().nonnegative(),
  successRate: z.number().min(0).max(1),
  /** Newest last: a run that ends again (resumed after a crash, a retried durable step) is not counted twice. */
  countedRunIds: z.array(z.string()).optional(),
  status: ExperienceStatus,
  createdAt: z.number(),
  updatedAt: z.number(),
});

export const Experience = ExperienceFields.superRefine((item, ctx) => {
  if (item.successCount > item.usageCount) {
    ctx.addIssue({ code: 'custom', path: ['successCount'], message: `successCount ${item.successCount} exceeds usageCount ${item.usageCount}` });
  } else if (Math.abs(item.successRate - successRateOf(item.usageCount, item.successCount)) > 1e-9) {
    ctx.addIssue({ code: 'custom', path: ['successRate'], message: 'successRate differs from successCount / usageCount' });
  }
});
export type Experience = z.infer<typeof Experience>;

/** `scope` defaults to global; a relative project path is resolved against the working directory. */
export const NewExperience = z.object({
  condition: z.string(),
  rule: z.string(),
  evidence: z.array(z.string()).optional(),
  sourceRunIds: z.array(z.string()).optional(),
  scope: ExperienceScope.optional(),
  confidence: z.number().min(0).max(1),
});
export type NewExperience = z.infer<typeof NewExperience>;

export type ExperienceCandidate = Required<NewExperience>;

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

export function successRateOf(usageCount: number, successCount: number): number {
  return usageCount === 0 ? 0 : successCount / usageCount;
}

const collapse = (text: string): string => text.trim().replace(/\s+/g, ' ').toLowerCase();

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

/** Condition and rule (ignoring case and spacing) in the same scope: adding one that exists merges it. */
export function experienceKey(item: Pick<Experience, 'condition' | 'rule' | 'scope'>): string {
  return `${collapse(item.condition)}\u0000${collapse(item.rule)}\u0000${scopeKey(item.scope)}`;
}

export interface ExperienceContext {
  /** Resolved against the working directory. */
  readonly project?: string;
  readonly tools?: ReadonlySet<string> | readonly string[];
}

export function scopeApplies(scope: ExperienceScope, context: ExperienceContext): boolean {
  const tools = context.tools === undefined ? new Set<string>() : 'has' in context.tools ? context.tools : new Set(context.tools);
  return appliesIn(scope, context.project === undefined ? undefined : resolve(context.project), tools);
}

/** Takes a resolved project and a tool set, so nothing is resolved or copied per hit. */
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

/** Compared by whole path segments, so `/srv/application` is not inside `/srv/app`. */
function isInside(path: string, dir: string): boolean {
  if (path === dir) return true;
  return path.startsWith(dir.endsWith(sep) ? dir : `${dir}${sep}`);
}
