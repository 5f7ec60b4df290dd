/**
 * The files of the run lock: what a lock or claim file holds, read together with its mtime (the
 * lease's heartbeat), and how one is put in place whole and taken away again.
 */
import { randomBytes } from 'node:crypto';
import { closeSync, fstatSync, linkSync, openSync, readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { z } from 'zod';
import { safeJsonParse } from './safeJson.ts';

/** A process that writes (or wrote) a run. */
export interface LockOwner {
  readonly pid: number;
  readonly host?: string;
  /** When the process started (ms since epoch): tells this process from an earlier one that had its pid. */
  readonly startedAt?: number;
}

const OwnerFields = { pid: z.number().int().positive(), host: z.string().optional(), startedAt: z.number().optional() };
export const LockContent = z.object({ ...OwnerFields, gen: z.number().int().positive(), nonce: z.string().min(1) });
export type LockContent = z.infer<typeof LockContent>;

/** A lock (or claim) file as read. */
export interface LockState {
  /** Tells this version of the file from any other: its nonce, or for a file without one, its inode and mtime. */
  readonly id: string;
  /** `undefined` when the content does not parse. */
  readonly owner: LockOwner | undefined;
  /** 0 for an unreadable file. */
  readonly gen: number;
  readonly nonce: string | undefined;
  readonly heartbeatAt: number;
}

/** Read a lock or claim file; `undefined` if there is none. */
export function readLockFile(file: string): LockState | undefined {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch (error) {
    if (isErrno(error, 'ENOENT')) return undefined;
    throw error;
  }
  try {
    return readOpen(fd);
  } finally {
    closeSync(fd);
  }
}

/** The content and mtime of one file, read through one descriptor so they belong together. */
export function readOpen(fd: number): LockState {
  const stat = fstatSync(fd);
  const parsed = safeJsonParse(readFileSync(fd, 'utf8'));
  // Nobody renews a file without a nonce, so its mtime tells it from a new file on a reused inode.
  const fileId = `file:${stat.dev}:${stat.ino}:${stat.mtimeMs}`;
  const current = parsed.ok ? LockContent.safeParse(parsed.value) : undefined;
  if (current?.success === true) {
    const { gen, nonce } = current.data;
    return { id: `nonce:${nonce}`, owner: ownerOf(current.data), gen, nonce, heartbeatAt: stat.mtimeMs };
  }
  return { id: fileId, owner: undefined, gen: 0, nonce: undefined, heartbeatAt: stat.mtimeMs };
}

function ownerOf({ pid, host, startedAt }: LockOwner): LockOwner {
  return { pid, ...(host === undefined ? {} : { host }), ...(startedAt === undefined ? {} : { startedAt }) };
}

/**
 * Put `record` at `target`, complete from the moment it is visible, unless `target` exists:
 * written to a unique name beside it, then hard-linked (which, unlike rename, never replaces).
 */
export function placeComplete(target: string, record: LockContent): boolean {
  const temp = `${target}.${uniqueSuffix()}.tmp`;
  writeFileSync(temp, JSON.stringify(record), { flag: 'wx' });
  try {
    linkSync(temp, target);
    return true;
  } catch (error) {
    if (isErrno(error, 'EEXIST')) return false;
    throw error;
  } finally {
    removeQuietly(temp);
  }
}

/** Remove a stale claim: moved aside first, so of two processes removing it, one does. */
export function discard(file: string): void {
  const aside = `${file}.${uniqueSuffix()}.stale`;
  try {
    renameSync(file, aside);
  } catch (error) {
    if (isErrno(error, 'ENOENT')) return;
    throw error;
  }
  removeQuietly(aside);
}

const uniqueSuffix = (): string => `${process.pid}-${randomBytes(6).toString('hex')}`;

export function removeQuietly(file: string): void {
  try {
    unlinkSync(file);
  } catch (error) {
    if (!isErrno(error, 'ENOENT')) throw error;
  }
}

export function isErrno(error: unknown, code?: string): error is NodeJS.ErrnoException {
  if (!(error instanceof Error) || typeof (error as NodeJS.ErrnoException).code !== 'string') return false;
  return code === undefined || (error as NodeJS.ErrnoException).code === code;
}

