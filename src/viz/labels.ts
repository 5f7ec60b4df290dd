// Only names reach a diagram, never function bodies, inputs or context, so diagrams can be published.
import type { AnyStateNode } from 'xstate';

/** Look-alikes, not entity codes: state diagrams do not decode `#…;`, and a `;` ends a statement even in a label. */
export function mermaidText(text: string): string {
  return text
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/;/g, ',')
    .replace(/</g, '‹')
    .replace(/>/g, '›')
    .replace(/"/g, "'");
}

export function wrapWords(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/).filter((w) => w !== '')) {
    if (line !== '' && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else {
      line = line === '' ? word : `${line} ${word}`;
    }
  }
  if (line !== '') lines.push(line);
  return lines;
}

/** Other characters are hex-coded so ids stay unique; the `S` prefix keeps them clear of Mermaid keywords (`end`, `note`). */
export function mermaidId(node: AnyStateNode): string {
  const parts = node.path.map((part) => part.replace(/[^A-Za-z0-9]/g, (ch) => `x${ch.codePointAt(0)?.toString(16) ?? ''}x`));
  return ['S', ...parts].join('_');
}

export function guardName(guard: unknown): string {
  if (typeof guard === 'string') return guard;
  if (typeof guard === 'function') {
    const inner: unknown = (guard as { guards?: unknown }).guards;
    if (Array.isArray(inner) && ['and', 'or', 'not'].includes(guard.name)) {
      const names = inner.map((g: unknown) => guardName(g));
      if (guard.name === 'not') return `!${names[0] ?? 'guard'}`;
      return `(${names.join(guard.name === 'and' ? ' && ' : ' || ')})`;
    }
    return 'guard';
  }
  if (typeof guard === 'object' && guard !== null && typeof (guard as { type?: unknown }).type === 'string') {
    return (guard as { type: string }).type;
  }
  return 'guard';
}

/** Inline actions (`assign(…)`, functions) have no name a reader would recognise and are left out. */
export function actionNames(actions: readonly unknown[]): string[] {
  const names: string[] = [];
  for (const action of actions) {
    if (typeof action === 'string') names.push(action);
    else if (typeof action === 'object' && action !== null && typeof (action as { type?: unknown }).type === 'string') {
      names.push((action as { type: string }).type);
    }
  }
  return names;
}

export function delayName(delay: unknown): string {
  if (typeof delay === 'string') return delay;
  if (typeof delay === 'number') return `${delay}ms`;
  return 'delay';
}

export function invokeName(invoke: { readonly src: unknown; readonly id: string }): string {
  return typeof invoke.src === 'string' ? invoke.src : invoke.id;
}
