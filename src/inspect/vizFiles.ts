// Only plain names and `.svg` files directly in the folder are read, so no request path can reach anything else on disk.
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const DIAGRAM_NAME = /^[A-Za-z0-9_-]{1,100}$/;

/** This module runs from `src/inspect/` or, once built, `dist/src/inspect/`. */
export function defaultVizDir(): string | undefined {
  for (const relative of ['../../visualizations', '../../../visualizations']) {
    const dir = fileURLToPath(new URL(relative, import.meta.url));
    if (existsSync(join(dir, 'agent.svg'))) return dir;
  }
  return undefined;
}

export async function listDiagrams(dir: string | undefined): Promise<string[]> {
  if (dir === undefined) return [];
  try {
    const entries = await readdir(dir, { withFileTypes: true });
    return entries
      .filter((entry) => entry.isFile() && entry.name.endsWith('.svg'))
      .map((entry) => entry.name.slice(0, -'.svg'.length))
      .filter((name) => DIAGRAM_NAME.test(name))
      .sort();
  } catch {
    return [];
  }
}

export async function readDiagram(dir: string | undefined, requestPath: string): Promise<string | undefined> {
  if (dir === undefined) return undefined;
  const match = /^\/viz\/([^/]+)\.svg$/.exec(requestPath);
  const name = match?.[1];
  if (name === undefined || !DIAGRAM_NAME.test(name)) return undefined;
  try {
    return await readFile(join(dir, `${name}.svg`), 'utf8');
  } catch {
    return undefined;
  }
}
