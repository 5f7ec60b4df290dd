/**
 * The share of comment lines among the non-blank lines of the TypeScript under the given folders
 * (default `src`), per top-level folder and in all. With `--max <percent>` it fails when the
 * whole is above it: `npm run lint` keeps comments to a line or two of why.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { parseArgs } from 'node:util';

const { values, positionals } = parseArgs({ options: { max: { type: 'string' }, quiet: { type: 'boolean' } }, allowPositionals: true });
const roots = positionals.length > 0 ? positionals : ['src'];
const COMMENT = /^\s*(\/\/|\/\*|\*)/;

const files = (dir: string): string[] =>
  !statSync(dir).isDirectory() ? [dir] : readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return files(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });

const groups = new Map<string, { comments: number; lines: number }>();
let comments = 0;
let lines = 0;
for (const root of roots) {
  for (const file of files(root)) {
    const group = file === root ? root : join(root, relative(root, file).split('/')[0] ?? '');
    const tally = groups.get(group) ?? { comments: 0, lines: 0 };
    groups.set(group, tally);
    for (const line of readFileSync(file, 'utf8').split('\n')) {
      if (line.trim() === '') continue;
      tally.lines++;
      lines++;
      if (COMMENT.test(line)) {
        tally.comments++;
        comments++;
      }
    }
  }
}
const percent = (part: number, whole: number) => (whole === 0 ? 0 : (100 * part) / whole);
if (values.quiet !== true) {
  for (const [group, tally] of [...groups].sort(([a], [b]) => a.localeCompare(b))) {
    console.log(`${group.padEnd(28)} ${String(tally.comments).padStart(5)} / ${String(tally.lines).padStart(5)}  ${percent(tally.comments, tally.lines).toFixed(1)} %`);
  }
}
const share = percent(comments, lines);
console.log(`comment lines: ${comments} of ${lines} non-blank lines, ${share.toFixed(1)} %`);
if (values.max !== undefined && share > Number(values.max)) {
  console.error(`Comments are ${share.toFixed(1)} % of the lines, above ${values.max} %: say why in a line or two, and let names and types say the rest.`);
  process.exit(1);
}
