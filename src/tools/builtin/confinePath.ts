/**
 * Confine a model-supplied path to a root folder. Two checks: a lexical one on
 * the text (no `~`, NUL, Windows forms, `..` or absolute escapes, sibling-prefix folders), then
 * a physical one on the resolved path (realpath, so a symlinked file *or* a symlinked folder on
 * the way that points outside is caught). Callers read the returned real path — never the
 * string they were given — so what is read is what was checked.
 */
import { realpathSync, statSync } from 'node:fs';
import { realpath } from 'node:fs/promises';
import path from 'node:path';
import { ConfigurationError } from '../../core/errors.ts';
import { FileReadError, type PathRefusalReason } from './errors.ts';

/** A root folder, resolved once through its own symlinks. */
export interface ConfinedRoot {
  /** The real absolute path of the root. */
  readonly real: string;
  /** The root as given, made absolute (absolute paths under either spelling are accepted). */
  readonly given: string;
}

/**
 * Resolve the root once. It must exist and be a folder; symlinks in it are followed, so the
 * containment checks compare real paths with real paths.
 *
 * @example
 * ```ts
 * const root = confinedRoot('./workspace'); // { real: '/home/me/project/workspace', given: … }
 * ```
 */
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

/**
 * True when `candidate` is `root` or below it. `path.relative` (not `startsWith`) so that
 * `/srv/root-evil` is not inside `/srv/root`.
 *
 * @example
 * ```ts
 * isInside('/srv/root', '/srv/root/a.txt');   // true
 * isInside('/srv/root', '/srv/root-evil/a');  // false
 * ```
 */
export function isInside(root: string, candidate: string): boolean {
  const relative = path.relative(root, candidate);
  return relative === '' || (relative !== '..' && !relative.startsWith(`..${path.sep}`) && !path.isAbsolute(relative));
}

function refuse(requested: string, reason: PathRefusalReason, detail: string): never {
  throw new FileReadError('path_refused', { path: requested, reason, detail });
}

/**
 * The lexical checks: what the text of the path alone tells. Returns the absolute candidate.
 *
 * @example
 * ```ts
 * lexicalPath(root, 'src/app.ts'); // '/real/root/src/app.ts'
 * lexicalPath(root, '../x');       // throws FileReadError (path_refused) (traversal)
 * ```
 */
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

/**
 * Both checks. Resolves with the real path inside the root; rejects with
 * {@link FileReadError} (`path_refused`) for escapes and {@link FileReadError} (`not_found`, `io`) when the
 * path cannot be resolved.
 *
 * @example
 * ```ts
 * await confinePath(root, 'docs/guide.md'); // '/real/root/docs/guide.md'
 * await confinePath(root, 'link-to-etc/passwd'); // rejects: FileReadError (path_refused) (symlink_escape)
 * ```
 */
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
