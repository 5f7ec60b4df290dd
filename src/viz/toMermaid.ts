// States and transitions follow the machine's document order, so a committed diagram can be checked for staleness.
import type { AnyStateMachine, AnyStateNode } from 'xstate';
import { actionNames, delayName, guardName, invokeName, mermaidId, mermaidText, wrapWords } from './labels.ts';

export interface ToMermaidOptions {
  readonly direction?: 'TB' | 'LR';
  /** Default `'inline'`: Mermaid places the notes of nested states far from the state they describe. */
  readonly descriptions?: 'inline' | 'notes' | 'none';
  /** Characters per line of inline descriptions (default 32). */
  readonly wrap?: number;
}

interface Edge {
  readonly from: string;
  readonly to: string;
  readonly labels: string[];
  /** The state whose block the edge is written in: Mermaid puts undeclared ends in that block. */
  readonly container: AnyStateNode | undefined;
}

interface Walk {
  readonly ids: ReadonlyMap<AnyStateNode, string>;
  readonly edges: readonly Edge[];
  readonly options: ToMermaidOptions;
  readonly lines: string[];
  readonly notes: string[];
}

export function toMermaid(machine: AnyStateMachine, options: ToMermaidOptions = {}): string {
  const root = machine.root;
  const ids = assignIds(root);
  const walk: Walk = { ids, edges: collectEdges(root, ids), options, lines: [], notes: [] };
  walk.lines.push('stateDiagram-v2', `  direction ${options.direction ?? 'TB'}`);
  if (root.transitions.size > 0 || (root.always?.length ?? 0) > 0 || root.invoke.length > 0) {
    walk.lines.push('  classDef anyState fill:#fff,stroke-dasharray:4 4');
    writeState(root, 1, walk, machine.id, ['any state']);
    walk.lines.push(`  class ${idOf(walk, root)} anyState`);
  }
  writeChildren(root, 1, walk);
  writeEdges(
    walk.edges.filter((e) => e.container === undefined),
    1,
    walk.lines,
  );
  walk.lines.push(...walk.notes);
  return `${walk.lines.join('\n')}\n`;
}

/** A clash (possible only with odd state keys) gets a numeric suffix. */
function assignIds(root: AnyStateNode): Map<AnyStateNode, string> {
  const ids = new Map<AnyStateNode, string>();
  const taken = new Set<string>();
  const visit = (node: AnyStateNode): void => {
    const base = mermaidId(node);
    let id = base;
    for (let n = 2; taken.has(id); n++) id = `${base}_${n}`;
    taken.add(id);
    ids.set(node, id);
    for (const child of Object.values(node.states)) visit(child);
  };
  visit(root);
  return ids;
}

function idOf(walk: Pick<Walk, 'ids'>, node: AnyStateNode): string {
  return walk.ids.get(node) ?? mermaidId(node);
}

function writeChildren(node: AnyStateNode, depth: number, walk: Walk): void {
  const pad = '  '.repeat(depth);
  const children = Object.values(node.states);
  if (node.type !== 'parallel') {
    for (const target of node.initial?.target ?? []) walk.lines.push(`${pad}[*] --> ${idOf(walk, target)}`);
  }
  children.forEach((child, i) => {
    if (node.type === 'parallel' && i > 0) walk.lines.push(`${pad}--`);
    writeState(child, depth, walk);
  });
  writeEdges(
    walk.edges.filter((e) => e.container === node),
    depth,
    walk.lines,
  );
  for (const child of children) if (child.type === 'final') walk.lines.push(`${pad}${idOf(walk, child)} --> [*]`);
}

function writeState(node: AnyStateNode, depth: number, walk: Walk, label = node.key, extra: readonly string[] = []): void {
  const pad = '  '.repeat(depth);
  const id = idOf(walk, node);
  const name = node.type === 'history' ? (node.history === 'deep' ? 'H*' : 'H') : label;
  const invokes = node.invoke.map((inv) => `invoke ${invokeName(inv)}`);
  const mode = walk.options.descriptions ?? 'inline';
  // The machine's own description belongs to the page around the diagram, not its "any state" box.
  const description = mode === 'none' || node.parent === undefined ? undefined : node.description;
  const composite = node.parent !== undefined && (node.type === 'compound' || node.type === 'parallel');
  const noteText = [...(composite ? invokes : []), ...(composite || mode === 'notes' ? [description ?? ''] : [])];
  if (noteText.some((t) => t !== '')) {
    // One line per note: Mermaid wraps notes itself. A line starting "end note" would end it.
    const text = mermaidText(noteText.filter((t) => t !== '').join('. ')).replace(/^end note/i, '(end) note');
    walk.notes.push(`  note right of ${id}`, `    ${text}`, '  end note');
  }
  walk.lines.push(`${pad}state "${mermaidText(name)}" as ${id}${composite ? ' {' : ''}`);
  if (composite) {
    writeChildren(node, depth + 1, walk);
    walk.lines.push(`${pad}}`);
    return;
  }
  // `id : text` lines show inside the state's box, under its name, one line each.
  const inline = mode === 'inline' && description !== undefined ? wrapWords(description, walk.options.wrap ?? 32) : [];
  for (const text of [...extra, ...invokes, ...inline]) walk.lines.push(`${pad}${id} : ${mermaidText(text)}`);
}

function writeEdges(edges: readonly Edge[], depth: number, lines: string[]): void {
  const pad = '  '.repeat(depth);
  for (const edge of edges) lines.push(`${pad}${edge.from} --> ${edge.to} : ${edge.labels.join('<br/>')}`);
}

function collectEdges(root: AnyStateNode, ids: ReadonlyMap<AnyStateNode, string>): Edge[] {
  const edges = new Map<string, Edge>();
  const visit = (node: AnyStateNode): void => {
    const transitions = [...[...node.transitions.values()].flat(), ...(node.always ?? [])];
    for (const t of transitions) {
      const label = transitionLabel(node, t.eventType, t.guard, t.actions);
      const targets: readonly AnyStateNode[] = t.target === undefined || t.target.length === 0 ? [node] : t.target;
      for (const target of targets) {
        const from = idOf({ ids }, node);
        const to = idOf({ ids }, target);
        const key = `${from} ${to}`;
        const edge = edges.get(key);
        if (edge === undefined) edges.set(key, { from, to, labels: [label], container: containerOf(node, target) });
        else if (!edge.labels.includes(label)) edge.labels.push(label);
      }
    }
    for (const child of Object.values(node.states)) visit(child);
  };
  visit(root);
  return [...edges.values()];
}

/** Mermaid puts an edge's undeclared ends in the block it is written in; `undefined` means the top level. */
function containerOf(source: AnyStateNode, target: AnyStateNode): AnyStateNode | undefined {
  const ancestors = new Set<AnyStateNode>();
  for (let n = source.parent; n !== undefined; n = n.parent) ancestors.add(n);
  for (let n = target.parent; n !== undefined; n = n.parent) if (ancestors.has(n)) return n.parent === undefined ? undefined : n;
  return source.parent?.parent === undefined ? undefined : source.parent;
}

function transitionLabel(node: AnyStateNode, eventType: string, guard: unknown, actions: readonly unknown[]): string {
  const guardText = guard === undefined ? '' : ` [${guardName(guard)}]`;
  const names = actionNames(actions);
  const actionText = names.length === 0 ? '' : ` / ${names.join(', ')}`;
  return mermaidText(`${triggerName(node, eventType)}${guardText}${actionText}`);
}

/** The trigger as the machine's author wrote it, not XState's internal event type. */
function triggerName(node: AnyStateNode, eventType: string): string {
  if (eventType === '') return 'always';
  const delayed = node.after.find((t) => t.eventType === eventType);
  if (delayed !== undefined) return `after ${delayName(delayed.delay)}`;
  for (const [prefix, word] of [
    ['xstate.done.actor.', 'onDone'],
    ['xstate.error.actor.', 'onError'],
    ['xstate.snapshot.', 'onSnapshot'],
  ] as const) {
    const invoke = node.invoke.find((inv) => eventType === `${prefix}${inv.id}`);
    if (invoke !== undefined) return node.invoke.length > 1 ? `${word} ${invokeName(invoke)}` : word;
  }
  if (eventType === `xstate.done.state.${node.id}`) return 'onDone';
  return eventType;
}
