/**
 * Confines a model-supplied path to a root folder: lexical checks on the text, then realpath, so a
 * symlink on the way out is caught. Callers read the returned real path, so what is read is what was checked.
 */
import { realpathSync, statSync } from 'node:fs';
import { realpath } from 'node:fs/promises';
import path from 'node:path';
import { ConfigurationError } from '../../core/errors.ts';
import { FileReadError, type PathRefusalReason } from './errors.ts';

export interface ConfinedRoot {
  readonly real: string;
  /** Absolute paths under either spelling of the root are accepted. */
  readonly given: string;
}

/** Symlinks in the root are followed once, so containment compares real paths with real paths. */
export function confinedRoot(root: string): ConfinedRoot {
  if (typeof root !== 'string' || root === '' || root.includes('\0')) {
    throw new ConfigurationError('fileRead needs a `root` folder path, e.g. fileRead({ root: process.cwd() }).');
  }
  const given = path.resolve(root);
  let real: string;
  try {
    real = realpathSync(given);
  } catch (error) {
    throw new ConfigurationError(`fileRead root ${JSON.stringify(root)} does not exist or cannot be resolved; create it or pass an existing folder.`, { cause: error });
  }
  if (!statSync(real).isDirectory()) throw new ConfigurationError(`fileRead root ${JSON.stringify(root)} is a file; pass the folder that contains it.`);
  return { real, given };
}

/** `path.relative`, not `startsWith`, so `/srv/root-evil` is not inside `/srv/root`. */
export function isInside(root: string, candidate: string): boolean {
  const relative = path.relative(root, candidate);
  return relative === '' || (relative !== '..' && !relative.startsWith(`..${path.sep}`) && !path.isAbsolute(relative));
}

function refuse(requested: string, reason: PathRefusalReason, detail: string): never {
  throw new FileReadError('path_refused', { path: requested, reason, detail });
}

export function lexicalPath(root: ConfinedRoot, requested: string): string {
  if (requested.trim() === '') refuse(requested, 'empty', 'the path is empty');
  if (requested.includes('\0')) refuse(requested, 'nul_byte', 'it contains a NUL byte, which truncates paths in the OS');
  if (requested.startsWith('~')) refuse(requested, 'home', '"~" (a home folder) is outside the root');
  if (/^[a-zA-Z]:/.test(requested) || requested.startsWith('\\\\') || requested.startsWith('//')) {
    refuse(requested, 'windows_path', 'Windows drive and UNC paths (C:\\, \\\\server) are not accepted');
  }
  // On POSIX "\" is a file-name character; refusing it keeps `..\..\x` from meaning two things.
  if (requested.includes('\\')) refuse(requested, 'windows_path', 'backslashes are not accepted; separate folders with "/"');
  const absolute = path.resolve(root.real, requested);
  if (!isInside(root.real, absolute) && !isInside(root.given, absolute)) {
    if (path.isAbsolute(requested)) refuse(requested, 'outside_root', 'this absolute path is outside the root folder');
    refuse(requested, 'traversal', 'it climbs out of the root folder with ".."');
  }
  return absolute;
}

export async function confinePath(root: ConfinedRoot, requested: string): Promise<string> {
  const absolute = lexicalPath(root, requested);
  let real: string;
  try {
    real = await realpath(absolute);
  } catch (error) {
    const code = typeof error === 'object' && error !== null && 'code' in error ? (error as { code: unknown }).code : undefined;
    if (code === 'ENOENT' || code === 'ENOTDIR') {
      throw new FileReadError('file_read_failed', { path: requested, reason: 'not_found', detail: 'no such file in the root folder; check the name or list the folder first' });
    }
    throw new FileReadError('file_read_failed', { path: requested, reason: 'io', detail: `the path could not be resolved (${String(code ?? 'error')})` });
  }
  if (!isInside(root.real, real)) refuse(requested, 'symlink_escape', 'it is (or passes through) a symlink that points outside the root folder');
  return real;
}
