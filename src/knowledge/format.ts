/**
 * How knowledge items read to the model: one line each, `subject — predicate — object`, with
 * where the item applies and how sure it is. Stored text can come from untrusted tool output
 * (the model stores what it read), so every field is flattened to one line and cut: an item can
 * never forge a header, a new line of instructions, or another item.
 */
import { DEFAULTS } from '../core/defaults.ts';
import type { KnowledgeItem } from './item.ts';

/**
 * One field on one line, at most `maxChars` characters (an ellipsis marks a cut).
 *
 * @example
 * ```ts
 * oneLine('line one\n\nline two', 12); // 'line one li…'
 * ```
 */
export function oneLine(text: string, maxChars: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= maxChars ? flat : `${flat.slice(0, Math.max(0, maxChars - 1))}…`;
}

/**
 * Where an item applies, for the model: `convention for src/api`, `typescript convention`,
 * `earlier answer`, or `fact`.
 *
 * @example
 * ```ts
 * placementLabel({ scope: 'conventions', directory: 'src/api' }); // 'convention for src/api'
 * ```
 */
export function placementLabel(item: Pick<KnowledgeItem, 'scope' | 'directory' | 'language'>): string {
  switch (item.scope) {
    case 'conventions':
      if (item.directory !== undefined) return `convention for ${item.directory === '' ? 'the project root' : oneLine(item.directory, 120)}`;
      return item.language === undefined ? 'project convention' : `${oneLine(item.language, 40)} convention`;
    case 'working':
      return 'earlier answer';
    default:
      return 'fact';
  }
}

/**
 * An item as one line.
 *
 * @example
 * ```ts
 * formatKnowledgeItem({ id: 'k_1', subject: 'Earth', predicate: 'has', object: 'one moon', confidence: 0.95, createdAt: 0 });
 * // 'Earth — has — one moon (fact, confidence 0.95)'
 * ```
 */
export function formatKnowledgeItem(item: KnowledgeItem, maxItemChars: number = DEFAULTS.knowledge.maxItemChars): string {
  const triple = `${oneLine(item.subject, maxItemChars)} — ${oneLine(item.predicate, 120)} — ${oneLine(item.object, maxItemChars)}`;
  return `${triple} (${placementLabel(item)}, confidence ${item.confidence.toFixed(2)})`;
}
