/**
 * The pre-rendered machine diagrams (`visualizations/<machine>.svg`, written by `npm run viz`)
 * as the local live page reads them: which exist, and one file's text by machine name.
 *
 * Only names made of letters, digits, `_` and `-` are accepted, and only `.svg` files directly
 * in the folder are read, so no request path can reach anything else on disk.
 */
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const DIAGRAM_NAME = /^[A-Za-z0-9_-]{1,100}$/;

/**
 * The repository's `visualizations/` folder, found from this module (it runs from `src/inspect/`
 * under tsx, or `dist/src/inspect/` once built); `undefined` when neither layout has it.
 *
 * @example
 * ```ts
 * const dir = defaultVizDir(); // '/path/to/actorloop/visualizations'
 * ```
 */
export function defaultVizDir(): string | undefined {
  for (const relative of ['../../visualizations', '../../../visualizations']) {
    const dir = fileURLToPath(new URL(relative, import.meta.url));
    if (existsSync(join(dir, 'agent.svg'))) return dir;
  }
  return undefined;
}

/**
 * The machine names that have a diagram in `dir`, sorted; empty when the folder is unreadable.
 *
 * @example
 * ```ts
 * await listDiagrams(defaultVizDir()); // ['agent', 'agentHost', 'circuitBreaker', …]
 * ```
 */
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

/**
 * The SVG text for a request path of the form `/viz/<machine>.svg`; `undefined` for any other
 * path (traversal, encoded separators, other extensions) or a missing file.
 *
 * @example
 * ```ts
 * await readDiagram(defaultVizDir(), '/viz/agent.svg'); // '<svg id="svg-agent" …'
 * await readDiagram(defaultVizDir(), '/viz/../package.json'); // undefined
 * ```
 */
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
