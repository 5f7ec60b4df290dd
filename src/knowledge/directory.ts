/** Directory keys are compared as strings, never opened, so they get one project-relative, forward-slash spelling. */
import { posix } from 'node:path';

export function normaliseDirectory(directory: string): string {
  const slashed = directory.trim().replace(/\\/g, '/');
  const normal = posix.normalize(slashed === '' ? '.' : slashed);
  // An absolute spelling means the same project-relative key.
  const relative = normal.replace(/^\/+/, '').replace(/\/+$/, '');
  return relative === '.' ? '' : relative;
}

/** Most specific first, ending with the root `''`. */
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
