/**
 * An unused experience reads `(new: not tried yet)`: a rate of 0 % would claim a failure. Stored text can
 * come from untrusted tool output, so each field is flattened to one line and cut.
 */
import { oneLine } from '../knowledge/format.ts';
import { EXPERIENCE_DEFAULTS } from './defaults.ts';
import type { Experience } from './experience.ts';

export const EXPERIENCES_HEADING =
  'Experience from earlier runs (rules learned from outcomes; follow them when their condition holds, and let the task and the user override them):';

type Formatted = Pick<Experience, 'condition' | 'rule' | 'usageCount' | 'successRate'>;

/**
 * `''` for none.
 * @example
 * formatExperiences(store.relevant(task)); // 'Experience from earlier runs (…):\n- When …'
 */
export function formatExperiences(items: readonly Formatted[]): string {
  if (items.length === 0) return '';
  return [EXPERIENCES_HEADING, ...items.map((item) => `- ${formatExperience(item)}`)].join('\n');
}

export function formatExperience(item: Formatted): string {
  const condition = lowerFirst(oneLine(item.condition, EXPERIENCE_DEFAULTS.maxConditionChars));
  const rule = lowerFirst(oneLine(item.rule, EXPERIENCE_DEFAULTS.maxRuleChars)).replace(/\.$/, '');
  return `When ${condition}, ${rule} (${record(item)})`;
}

function record(item: Formatted): string {
  if (item.usageCount === 0) return 'new: not tried yet';
  const runs = `${item.usageCount} run${item.usageCount === 1 ? '' : 's'}`;
  return `success rate ${Math.round(item.successRate * 100)}% over ${runs}`;
}

/** Acronyms and names in capitals ("CI", "npm") stay. */
function lowerFirst(text: string): string {
  return /^\p{Lu}\p{Ll}/u.test(text) ? `${text.charAt(0).toLowerCase()}${text.slice(1)}` : text;
}
