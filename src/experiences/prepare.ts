/** Every string is redacted first, so a secret the run saw never reaches the file. */
import { resolve } from 'node:path';
import { ConfigurationError } from '../core/errors.ts';
import { oneLine } from '../knowledge/format.ts';
import { EXPERIENCE_DEFAULTS } from './defaults.ts';
import { Experience, NewExperience, type ExperienceScope, type ExperienceStatus } from './experience.ts';

export type Redact = (text: string) => string;

/** Throws a ConfigurationError naming each problem. */
export function cleanCandidate(candidate: NewExperience, redact: Redact, now: number, id: string, status: ExperienceStatus): Experience {
  const parsed = NewExperience.safeParse(candidate);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join('.') || '(experience)'}: ${i.message}`).join('; ');
    throw new ConfigurationError(
      `Invalid experience (${issues}). Give a condition, a rule and a confidence between 0 and 1; ` +
        "a scope is { kind: 'global' }, { kind: 'project', path } or { kind: 'tool', name }.",
    );
  }
  const { evidence = [], sourceRunIds = [], scope, confidence } = parsed.data;
  const clean = (text: string): string => redacted(redact, text).trim();
  const condition = conditionText(clean(parsed.data.condition));
  const rule = clean(parsed.data.rule);
  checkText('condition', condition, EXPERIENCE_DEFAULTS.maxConditionChars);
  checkText('rule', rule, EXPERIENCE_DEFAULTS.maxRuleChars);
  const item: Experience = {
    id,
    scope: normaliseScope(scope ?? { kind: 'global' }, redact),
    condition,
    rule,
    evidence: newest(evidence.map((e) => oneLine(redacted(redact, e), EXPERIENCE_DEFAULTS.maxEvidenceChars)), EXPERIENCE_DEFAULTS.maxEvidence),
    sourceRunIds: newest(sourceRunIds.map(clean), EXPERIENCE_DEFAULTS.maxSourceRunIds),
    confidence,
    usageCount: 0,
    successCount: 0,
    successRate: 0,
    status,
    createdAt: now,
    updatedAt: now,
  };
  return Experience.parse(item);
}

/** A project path is resolved, so "inside" is a plain path comparison later. */
export function normaliseScope(scope: ExperienceScope, redact: Redact): ExperienceScope {
  switch (scope.kind) {
    case 'global':
      return { kind: 'global' };
    case 'project': {
      const path = redacted(redact, scope.path).trim();
      if (path === '') throw new ConfigurationError('Invalid experience scope: a project scope needs a non-empty path.');
      return { kind: 'project', path: resolve(path) };
    }
    case 'tool': {
      const name = redacted(redact, scope.name).trim();
      if (name === '') throw new ConfigurationError('Invalid experience scope: a tool scope needs a non-empty tool name.');
      return { kind: 'tool', name };
    }
  }
}

/** "When CI is slow." and "CI is slow" are the same experience and format alike. */
function conditionText(text: string): string {
  return text.replace(/^when\b[\s,:]*/i, '').replace(/[\s.,;:]+$/, '');
}

function checkText(field: 'condition' | 'rule', text: string, max: number): void {
  if (text === '') throw new ConfigurationError(`Invalid experience: the ${field} is empty. Say ${field === 'condition' ? 'when the rule applies' : 'what to do'}.`);
  if (text.length > max) {
    throw new ConfigurationError(`Invalid experience: the ${field} has ${text.length} characters, more than ${max}. State it in one or two sentences.`);
  }
}

/** Keeps the newest (last) `max`. */
function newest(entries: readonly string[], max: number): string[] {
  const distinct = [...new Set(entries.filter((e) => e !== ''))];
  return distinct.slice(Math.max(0, distinct.length - max));
}

function redacted(redact: Redact, text: string): string {
  const out: unknown = redact(text);
  if (typeof out !== 'string') throw new ConfigurationError(`The experience store's redact function returned ${typeof out}, not a string. Return the text with secrets replaced.`);
  return out;
}
