/**
 * Problems are reported, not thrown, so one broken file never costs the agent its other skills. Symlinks are followed
 * only inside their skills folder: a cloned project's link to a private file would put it into the model's context.
 */
import { constants, type Dirent } from 'node:fs';
import { lstat, open, readdir, realpath, stat, type FileHandle } from 'node:fs/promises';
import { homedir } from 'node:os';
import path from 'node:path';
import { DEFAULTS } from '../core/defaults.ts';
import { ConfigurationError, describeError } from '../core/errors.ts';
import { isInside } from '../tools/builtin/confinePath.ts';
import { parseSkill, type Skill, type SkillProblem, type SkillSource } from './skill.ts';

export interface LoadSkillsOptions {
  readonly userDir?: string;
  readonly projectDir?: string;
  /** Default: the tool result limit, so a loaded skill always reaches the model whole. */
  readonly maxBytes?: number;
}

export interface LoadedSkills {
  readonly skills: Skill[];
  readonly problems: SkillProblem[];
  /** Files of user skills replaced by a project skill of the same name. */
  readonly overridden: string[];
}

// O_NOFOLLOW: a symlink swapped in after the containment check fails the open instead of being
// followed. O_NONBLOCK: opening a FIFO does not wait for a writer (it is then refused).
const OPEN_FLAGS = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0);
const SKILL_FILE = 'SKILL.md';

/**
 * On a name clash the project's skill wins and the user's file is listed in `overridden`.
 * @example
 * ```ts
 * const { skills, problems } = await loadSkills();
 * ```
 */
export async function loadSkills(options: LoadSkillsOptions = {}): Promise<LoadedSkills> {
  if (typeof options !== 'object' || options === null) throw new ConfigurationError('loadSkills takes an options object, e.g. loadSkills({ projectDir: ".actorloop/skills" }).');
  const userDir = folderOption(options.userDir, 'userDir') ?? path.join(homedir(), '.actorloop', 'skills');
  const projectDir = folderOption(options.projectDir, 'projectDir') ?? path.join(process.cwd(), '.actorloop', 'skills');
  const maxBytes = options.maxBytes ?? DEFAULTS.tools.maxResultBytes;
  if (!(Number.isSafeInteger(maxBytes) && maxBytes > 0)) {
    throw new ConfigurationError(`loadSkills: maxBytes must be a positive whole number of bytes (got ${String(maxBytes)}).`);
  }

  const project = await loadFolder(projectDir, 'project', maxBytes);
  // The same folder under both names (working in the home folder) is loaded once.
  const user = project.real !== undefined && project.real === (await realFolder(userDir)) ? undefined : await loadFolder(userDir, 'user', maxBytes);

  const byName = new Map<string, Skill>();
  const overridden: string[] = [];
  for (const skill of user?.skills ?? []) byName.set(skill.name, skill);
  for (const skill of project.skills) {
    const shadowed = byName.get(skill.name);
    if (shadowed !== undefined) overridden.push(shadowed.file);
    byName.set(skill.name, skill);
  }
  const skills = [...byName.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return { skills, problems: [...(user?.problems ?? []), ...project.problems], overridden };
}

function folderOption(value: unknown, name: string): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value === '' || value.includes('\0')) {
    throw new ConfigurationError(`loadSkills: ${name} must be a folder path (got ${typeof value === 'string' ? JSON.stringify(value) : typeof value}).`);
  }
  return path.resolve(value);
}

interface FolderResult {
  readonly real: string | undefined;
  readonly skills: Skill[];
  readonly problems: SkillProblem[];
}

function errorCode(error: unknown): string | undefined {
  const code = typeof error === 'object' && error !== null && 'code' in error ? (error as { code: unknown }).code : undefined;
  return typeof code === 'string' ? code : undefined;
}

async function realFolder(dir: string): Promise<string | undefined> {
  try {
    return await realpath(dir);
  } catch {
    return undefined;
  }
}

async function loadFolder(dir: string, source: SkillSource, maxBytes: number): Promise<FolderResult> {
  const skills: Skill[] = [];
  const problems: SkillProblem[] = [];
  let real: string;
  let entries: Dirent[];
  try {
    real = await realpath(dir);
    entries = await readdir(real, { withFileTypes: true });
  } catch (error) {
    const code = errorCode(error);
    if (code === 'ENOENT') return { real: undefined, skills, problems };
    const why = code === 'ENOTDIR' ? 'it is not a folder' : `it could not be read (${code ?? describeError(error)})`;
    return { real: undefined, skills, problems: [{ file: dir, message: `the skills folder was skipped: ${why}` }] };
  }

  const seen = new Map<string, string>();
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const entry of entries) {
    // Dot files are editor and VCS leftovers (swap files, emacs lock links), never skills.
    if (entry.name.startsWith('.')) continue;
    const relative = await skillFileOf(real, entry);
    if (relative === undefined) continue;
    const file = path.join(dir, relative);
    const read = await readSkillFile(path.join(real, relative), real, maxBytes);
    if (typeof read !== 'string') {
      problems.push({ file, message: read.problem });
      continue;
    }
    const parsed = parseSkill(read, file, source);
    if (!parsed.ok) {
      problems.push(parsed.problem);
      continue;
    }
    const first = seen.get(parsed.skill.name);
    if (first !== undefined) {
      problems.push({ file, message: `skill name "${parsed.skill.name}" is already used by ${first} in the same folder: rename one of them` });
      continue;
    }
    seen.set(parsed.skill.name, file);
    skills.push(parsed.skill);
  }
  return { real, skills, problems };
}

/** The skill file an entry stands for, relative to the folder: itself (`*.md`), its `SKILL.md` (a folder), or none. */
async function skillFileOf(real: string, entry: Dirent): Promise<string | undefined> {
  let isFolder = entry.isDirectory();
  if (entry.isSymbolicLink()) {
    // Only to tell a linked folder from a linked file; where it points is checked on reading.
    isFolder = await stat(path.join(real, entry.name)).then(
      (info) => info.isDirectory(),
      () => false,
    );
  }
  if (!isFolder) return entry.name.endsWith('.md') ? entry.name : undefined;
  const relative = path.join(entry.name, SKILL_FILE);
  // A folder without SKILL.md holds something else (scripts, notes): not a problem.
  const present = await lstat(path.join(real, relative)).then(
    () => true,
    () => false,
  );
  return present ? relative : undefined;
}

async function readSkillFile(file: string, realRoot: string, maxBytes: number): Promise<string | { problem: string }> {
  let real: string;
  try {
    real = await realpath(file);
  } catch (error) {
    const code = errorCode(error);
    if (code === 'ENOENT') return { problem: 'it does not exist (a symlink whose target is missing?)' };
    return { problem: `it could not be resolved (${code ?? describeError(error)})` };
  }
  if (!isInside(realRoot, real)) {
    return { problem: 'it is (or is inside) a symlink that points outside the skills folder: copy the skill into the folder instead' };
  }
  let handle: FileHandle;
  try {
    handle = await open(real, OPEN_FLAGS);
  } catch (error) {
    const code = errorCode(error);
    if (code === 'ELOOP') return { problem: 'it became a symlink while being opened' };
    return { problem: `it could not be opened (${code ?? describeError(error)})` };
  }
  try {
    const info = await handle.stat();
    if (!info.isFile()) return { problem: 'it is not a regular file' };
    if (info.size > maxBytes) return tooBig(info.size, maxBytes);
    // One byte more than allowed: a file that grew after the size check is caught too.
    const buffer = Buffer.alloc(Math.min(info.size, maxBytes) + 1);
    let filled = 0;
    while (filled < buffer.length) {
      const { bytesRead } = await handle.read(buffer, filled, buffer.length - filled, filled);
      if (bytesRead === 0) break;
      filled += bytesRead;
    }
    if (filled > maxBytes) return tooBig(filled, maxBytes);
    try {
      return new TextDecoder('utf-8', { fatal: true }).decode(buffer.subarray(0, filled));
    } catch {
      return { problem: 'it is not UTF-8 text' };
    }
  } catch (error) {
    return { problem: `it could not be read (${errorCode(error) ?? describeError(error)})` };
  } finally {
    await handle.close();
  }
}

function tooBig(size: number, maxBytes: number): { problem: string } {
  return { problem: `it is ${size} bytes or more, over the ${maxBytes}-byte limit for a skill: shorten it or split it into several skills` };
}
