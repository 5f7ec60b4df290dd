/**
 * Text pieces of a Mermaid state diagram: escaped text, state ids, and the names of guards,
 * actions, delays and invoked actors as they appear in a machine's definition.
 *
 * Only *names* ever reach a diagram — never function bodies, inputs or context — so a diagram
 * can be committed and published without leaking anything a machine computes at run time.
 */
import type { AnyStateNode } from 'xstate';

/**
 * Makes text safe for a Mermaid label, state description or note, in one line. Mermaid's
 * `#…;` entity codes are not decoded in state diagrams, and a `;` ends a statement even inside
 * a label, so the few characters that break the grammar or would be read as HTML are replaced
 * by look-alikes instead: `;` → `,`, `<`/`>` → `‹`/`›`, `"` → `'`.
 *
 * @example
 * ```ts
 * mermaidText('a; <b> "c"'); // "a, ‹b› 'c'"
 * ```
 */
export function mermaidText(text: string): string {
  return text
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/;/g, ',')
    .replace(/</g, '‹')
    .replace(/>/g, '›')
    .replace(/"/g, "'");
}

/**
 * Splits prose into lines of at most `width` characters at word boundaries (a longer word
 * keeps its own line), so long descriptions become narrow notes instead of wide ones.
 *
 * @example
 * ```ts
 * wrapWords('one two three', 7); // ['one two', 'three']
 * ```
 */
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

/**
 * A Mermaid identifier for a state node: `S_` and its path joined by `_`, other characters
 * than letters and digits hex-coded so that ids stay unique (`a_b` and `a.b` differ). The
 * prefix keeps ids clear of Mermaid keywords (`end`, `state`, `note`); the root is `S`.
 *
 * @example
 * ```ts
 * mermaidId(agentMachine.root.states.running.states.reason); // 'S_running_reason'
 * ```
 */
export function mermaidId(node: AnyStateNode): string {
  const parts = node.path.map((part) => part.replace(/[^A-Za-z0-9]/g, (ch) => `x${ch.codePointAt(0)?.toString(16) ?? ''}x`));
  return ['S', ...parts].join('_');
}

/**
 * The name of a guard as written in the machine: `'name'`, `{ type: 'name' }`, or the
 * higher-order `and([…])`, `or([…])`, `not(…)`; an inline function guard has no name and is
 * shown as `guard`.
 *
 * @example
 * ```ts
 * guardName('hasToolCalls'); // 'hasToolCalls'
 * guardName(not('isEmpty')); // '!isEmpty'
 * ```
 */
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

/**
 * The names of the named actions in a list (`'name'` or `{ type: 'name' }`). Inline actions
 * (`assign(…)`, `emit(…)`, functions) have no name a reader would recognise and are left out.
 *
 * @example
 * ```ts
 * actionNames(['admitProbe', assign({ n: 1 })]); // ['admitProbe']
 * ```
 */
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

/**
 * How an `after` delay reads: its name when it is a named delay (`recoveryTimeout`), the
 * milliseconds when it is a number, `delay` when it is an inline function.
 *
 * @example
 * ```ts
 * delayName('runTimeout'); // 'runTimeout'
 * delayName(500); // '500ms'
 * ```
 */
export function delayName(delay: unknown): string {
  if (typeof delay === 'string') return delay;
  if (typeof delay === 'number') return `${delay}ms`;
  return 'delay';
}

/**
 * The name of an invoked actor: its `src` when it is a registered name (the persistable
 * form), otherwise the invoke's `id`.
 *
 * @example
 * ```ts
 * invokeName({ src: 'reason', id: '0.agent.running.reason' }); // 'reason'
 * ```
 */
export function invokeName(invoke: { readonly src: unknown; readonly id: string }): string {
  return typeof invoke.src === 'string' ? invoke.src : invoke.id;
}
