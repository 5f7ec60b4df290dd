/**
 * How experiences read to the model: a short heading, then one line each,
 * `When <condition>, <rule> (success rate N% over K runs)`, or `(new: not tried yet)` for one no
 * run has used — a rate of 0 % would claim a failure that never happened. Stored text can come
 * from untrusted tool output (the learner reads what the run read), so every field is flattened
 * to one line and cut: an experience can never forge a heading, a new line of instructions, or
 * another experience.
 */
import { oneLine } from '../knowledge/format.ts';
import { EXPERIENCE_DEFAULTS } from './defaults.ts';
import type { Experience } from './experience.ts';

/**
 * The first line of the formatted text.
 *
 * @example
 * ```ts
 * formatExperiences(items).startsWith(EXPERIENCES_HEADING); // true when items is not empty
 * ```
 */
export const EXPERIENCES_HEADING =
  'Experience from earlier runs (rules learned from outcomes; follow them when their condition holds, and let the task and the user override them):';

type Formatted = Pick<Experience, 'condition' | 'rule' | 'usageCount' | 'successRate'>;

/**
 * The system-prompt text for `items` (the `experiences` section of `composeSystemPrompt`); `''`
 * for none.
 *
 * @example
 * ```ts
 * formatExperiences(store.relevant(task));
 * // 'Experience from earlier runs (…):\n- When the API returns 429, wait for Retry-After before retrying (success rate 80% over 5 runs)'
 * ```
 */
export function formatExperiences(items: readonly Formatted[]): string {
  if (items.length === 0) return '';
  return [EXPERIENCES_HEADING, ...items.map((item) => `- ${formatExperience(item)}`)].join('\n');
}

/**
 * One experience as one line, without the list marker.
 *
 * @example
 * ```ts
 * formatExperience({ condition: 'CI is slow', rule: 'Cache node_modules', usageCount: 0, successRate: 0 });
 * // 'When CI is slow, cache node_modules (new: not tried yet)'
 * ```
 */
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

/** "Cache the…" → "cache the…" mid-sentence; acronyms and names in capitals ("CI", "npm") stay. */
function lowerFirst(text: string): string {
  return /^\p{Lu}\p{Ll}/u.test(text) ? `${text.charAt(0).toLowerCase()}${text.slice(1)}` : text;
}
