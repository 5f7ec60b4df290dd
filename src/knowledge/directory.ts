/**
 * Directories as convention keys. They are compared as strings, never opened, so they are
 * normalised to one project-relative, forward-slash spelling: `./src\\api/` and `/src/api` both
 * become `src/api`, and every spelling of the project root (`''`, `.`, `/`, `./`) becomes `''`.
 */
import { posix } from 'node:path';

/**
 * The canonical spelling of a directory key.
 *
 * @example
 * ```ts
 * normaliseDirectory('./src\\api/handlers/'); // 'src/api/handlers'
 * normaliseDirectory('src/api/../db');        // 'src/db'
 * normaliseDirectory('/');                    // ''
 * ```
 */
export function normaliseDirectory(directory: string): string {
  const slashed = directory.trim().replace(/\\/g, '/');
  const normal = posix.normalize(slashed === '' ? '.' : slashed);
  // Leading slashes: keys are project-relative, an absolute spelling means the same key.
  const relative = normal.replace(/^\/+/, '').replace(/\/+$/, '');
  return relative === '.' ? '' : relative;
}

/**
 * A directory and each of its parents, most specific first, ending with the root `''`.
 *
 * @example
 * ```ts
 * directoryChain('src/api/handlers'); // ['src/api/handlers', 'src/api', 'src', '']
 * directoryChain('');                 // ['']
 * ```
 */
export function directoryChain(directory: string): string[] {
  const chain: string[] = [];
  let current = normaliseDirectory(directory);
  while (current !== '') {
    chain.push(current);
    const cut = current.lastIndexOf('/');
    current = cut === -1 ? '' : current.slice(0, cut);
  }
  chain.push('');
  return chain;
}
