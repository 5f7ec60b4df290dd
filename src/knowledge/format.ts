/**
 * Stored text can come from untrusted tool output, so every field is flattened to one line and cut:
 * an item can never forge a header, a line of instructions, or another item.
 */
import { DEFAULTS } from '../core/defaults.ts';
import type { KnowledgeItem } from './item.ts';

/** An ellipsis marks a cut. */
export function oneLine(text: string, maxChars: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= maxChars ? flat : `${flat.slice(0, Math.max(0, maxChars - 1))}…`;
}

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

export function formatKnowledgeItem(item: KnowledgeItem, maxItemChars: number = DEFAULTS.knowledge.maxItemChars): string {
  const triple = `${oneLine(item.subject, maxItemChars)} — ${oneLine(item.predicate, 120)} — ${oneLine(item.object, maxItemChars)}`;
  return `${triple} (${placementLabel(item)}, confidence ${item.confidence.toFixed(2)})`;
}
