import { randomBytes } from 'node:crypto';
import { closeSync, fstatSync, linkSync, openSync, readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { z } from 'zod';
import { safeJsonParse } from './safeJson.ts';
import { defined } from '../core/defined.ts';

export interface LockOwner {
  readonly pid: number;
  readonly host?: string;
  /** Tells this process from an earlier one that had its pid. */
  readonly startedAt?: number;
}

const OwnerFields = { pid: z.number().int().positive(), host: z.string().optional(), startedAt: z.number().optional() };
export const LockContent = z.object({ ...OwnerFields, gen: z.number().int().positive(), nonce: z.string().min(1) });
export type LockContent = z.infer<typeof LockContent>;

export interface LockState {
  /** Its nonce, or for a file without one, its inode and mtime. */
  readonly id: string;
  readonly owner: LockOwner | undefined;
  readonly gen: number;
  readonly nonce: string | undefined;
  readonly heartbeatAt: number;
}

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

/** Content and mtime through one descriptor, so they belong together. */
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
  return { pid, ...defined({ host, startedAt }) };
}

/** Hard-linked into place, which unlike rename never replaces: complete from the moment it is visible. */
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

/** Moved aside first, so of two processes removing it, one does. */
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

