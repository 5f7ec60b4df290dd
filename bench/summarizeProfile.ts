/**
 * Summarise a V8 `.cpuprofile` (from `node --cpu-prof`): the functions with the most self
 * time, and the most inclusive time, as percentages of the sampled time. Paths are shown
 * relative to the repo so our code stands out from xstate/rxjs/zod.
 *
 * Usage: `npx tsx bench/summarizeProfile.ts <file.cpuprofile> [top=25] [filter]`
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  readonly id: number;
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number };
  readonly children?: readonly number[];
}
interface Profile {
  readonly nodes: readonly ProfileNode[];
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

/**
 * Self and inclusive time per function, largest first.
 *
 * @example
 * ```ts
 * const rows = summarize(JSON.parse(readFileSync('x.cpuprofile', 'utf8')) as Profile);
 * console.log(rows.self[0]);
 * ```
 */
export function summarize(profile: Profile): { total: number; self: [string, number][]; inclusive: [string, number][] } {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const label = (node: ProfileNode): string => {
    const { functionName, url, lineNumber } = node.callFrame;
    const where = url.replace(/^file:\/\//, '').replace(/^.*\/work\/main\//, '').replace(/^.*node_modules\//, 'nm:');
    return `${functionName || '(anonymous)'} ${where}:${lineNumber + 1}`;
  };
  const self = new Map<string, number>();
  const inclusive = new Map<string, number>();
  let total = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    const dt = profile.timeDeltas[i] ?? 0;
    total += dt;
    let node = byId.get(profile.samples[i] as number);
    if (node === undefined) continue;
    const leaf = label(node);
    self.set(leaf, (self.get(leaf) ?? 0) + dt);
    const seen = new Set<string>();
    while (node !== undefined) {
      const name = label(node);
      if (!seen.has(name)) {
        seen.add(name);
        inclusive.set(name, (inclusive.get(name) ?? 0) + dt);
      }
      const up = parent.get(node.id);
      node = up === undefined ? undefined : byId.get(up);
    }
  }
  const sorted = (map: Map<string, number>) => [...map.entries()].sort((a, b) => b[1] - a[1]);
  return { total, self: sorted(self), inclusive: sorted(inclusive) };
}

if (process.argv[1]?.endsWith('summarizeProfile.ts')) {
  const [file, topText, filterText] = process.argv.slice(2);
  if (file === undefined) throw new Error('Usage: tsx bench/summarizeProfile.ts <file.cpuprofile> [top] [filter]');
  const top = Number(topText ?? 25);
  const { total, self, inclusive } = summarize(JSON.parse(readFileSync(file, 'utf8')) as Profile);
  const show = (title: string, rows: [string, number][]) => {
    console.log(`\n${title}`);
    for (const [name, us] of rows.filter(([name]) => filterText === undefined || name.includes(filterText)).slice(0, top)) {
      console.log(`${((100 * us) / total).toFixed(1).padStart(5)} %  ${name}`);
    }
  };
  show('self time', self);
  show('inclusive time', inclusive);
}
