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

export async function vizCommand(args: readonly string[]): Promise<number> {
  const parsed = parseCommand(args, { print: { type: 'string' } });
  if (parsed.positionals.length > 0) throw usageError(`actorloop viz takes no arguments; got "${parsed.positionals.join(' ')}".`);
  const machines = discoverMachines(machineExports);
  const name = parsed.string('print');
  if (name !== undefined) {
    const found = machines.find((entry) => entry.name === name);
    if (found === undefined) throw cliError(`No machine "${name}": pick one of ${machines.map((entry) => entry.name).join(', ')}.`);
    process.stdout.write(`${toMermaid(found.machine)}\n`);
    return 0;
  }
  const dir = join(packageRoot(), 'visualizations');
  if (!existsSync(dir)) {
    process.stdout.write(`No visualizations/ folder here. Print a diagram with: actorloop viz --print <${machines.map((entry) => entry.name).join('|')}>\n`);
    return 0;
  }
  const files = readdirSync(dir).filter((file) => file.endsWith('.svg') || file.endsWith('.mmd') || file.endsWith('.html'));
  process.stdout.write(`Machine diagrams in ${dir} (open index.html; regenerate with \`npm run viz\`):\n`);
  for (const file of files.sort()) process.stdout.write(`  ${file}\n`);
  return 0;
}
