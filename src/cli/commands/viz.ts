// `--print NAME` works without the visualizations/ folder, as in an installed package.
import { existsSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as machineExports from '../../../machines/index.ts';
import { discoverMachines, toMermaid } from '../../viz/index.ts';
import { cliError, parseCommand, usageError } from '../args.ts';

/** The nearest folder above this file with a package.json: the same from src/ and dist/. */
function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json')) && dirname(dir) !== dir) dir = dirname(dir);
  return dir;
}

const isDiagram = (file: string): boolean => file.endsWith('.svg') || file.endsWith('.mmd') || file.endsWith('.html');

export async function vizCommand(args: readonly string[]): Promise<number> {
  const parsed = parseCommand(args, { print: { type: 'string' } });
  if (parsed.positionals.length > 0) throw usageError(`actorloop viz takes no arguments; got "${parsed.positionals.join(' ')}".`);
  const machines = discoverMachines(machineExports);
  const name = parsed.string('print');
  if (name !== undefined) {
    const found = machines.find((entry) => entry.name === name);
    if (found === undefined) throw cliError(`No machine "${name}": pick one of ${machines.map((entry) => entry.name).join(', ')}.`);
    const mermaid = toMermaid(found.machine);
    process.stdout.write(parsed.common.json ? `${JSON.stringify({ name, mermaid })}\n` : `${mermaid}\n`);
    return 0;
  }
  const dir = join(packageRoot(), 'visualizations');
  if (parsed.common.json) {
    const files = existsSync(dir) ? readdirSync(dir).filter(isDiagram).sort() : [];
    process.stdout.write(`${JSON.stringify({ machines: machines.map((entry) => entry.name), folder: existsSync(dir) ? dir : null, files })}\n`);
    return 0;
  }
  if (!existsSync(dir)) {
    process.stdout.write(`No visualizations/ folder here. Print a diagram with: actorloop viz --print <${machines.map((entry) => entry.name).join('|')}>\n`);
    return 0;
  }
  const files = readdirSync(dir).filter(isDiagram);
  process.stdout.write(`Machine diagrams in ${dir} (open index.html; regenerate with \`npm run viz\`):\n`);
  for (const file of files.sort()) process.stdout.write(`  ${file}\n`);
  return 0;
}
