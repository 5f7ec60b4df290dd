import { constants } from 'node:fs';
import { open, readlink, type FileHandle } from 'node:fs/promises';
import { z } from 'zod';
import { DEFAULTS } from '../../core/defaults.ts';
import { ConfigurationError } from '../../core/errors.ts';
import { defineTool } from '../defineTool.ts';
import { truncationMarker } from '../result.ts';
import type { Tool } from '../types.ts';
import { confinedRoot, confinePath, isInside, type ConfinedRoot } from './confinePath.ts';
import { textOrDescription } from './decode.ts';
import { FileReadError } from './errors.ts';

export interface FileReadOptions {
  /** Symlinks inside may not point outside it. */
  readonly root: string;
  /** Longer files are cut with a marker. Default 256 KiB. */
  readonly maxBytes?: number;
}

const Input = z.object({
  path: z.string().min(1).max(4096).describe('Path of a file inside the root folder, relative to it (e.g. "src/app.ts")'),
});

function errorCode(error: unknown): unknown {
  return typeof error === 'object' && error !== null && 'code' in error ? (error as { code: unknown }).code : undefined;
}

// O_NOFOLLOW: a symlink swapped in after the realpath check fails the open instead of being
// followed. O_NONBLOCK: opening a FIFO does not wait for a writer (it is then refused below).
const OPEN_FLAGS = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0);

async function openChecked(real: string, requested: string): Promise<FileHandle> {
  try {
    return await open(real, OPEN_FLAGS);
  } catch (error) {
    const code = errorCode(error);
    if (code === 'ELOOP') {
      throw new FileReadError('path_refused', { path: requested, reason: 'symlink_escape', detail: 'it became a symlink while being opened' }, { cause: error });
    }
    if (code === 'ENOENT') throw new FileReadError('file_read_failed', { path: requested, reason: 'not_found', detail: 'no such file in the root folder' }, { cause: error });
    throw new FileReadError('file_read_failed', { path: requested, reason: 'io', detail: `it could not be opened (${String(code ?? 'error')})` }, { cause: error });
  }
}

/**
 * O_NOFOLLOW guards only the last name: a folder on the way swapped for a symlink after the check is
 * followed. Where the kernel says the open file is settles it (Linux; elsewhere there is no /proc to ask).
 */
async function checkOpened(handle: FileHandle, root: ConfinedRoot, requested: string): Promise<void> {
  let opened: string;
  try {
    opened = await readlink(`/proc/self/fd/${handle.fd}`);
  } catch {
    return;
  }
  if (!isInside(root.real, opened)) {
    throw new FileReadError('path_refused', { path: requested, reason: 'symlink_escape', detail: 'a folder on its path became a symlink to outside the root folder while it was being opened' });
  }
}

async function readHead(handle: FileHandle, size: number, maxBytes: number, signal: AbortSignal): Promise<Buffer> {
  const buffer = Buffer.alloc(Math.min(size, maxBytes));
  let filled = 0;
  while (filled < buffer.length) {
    signal.throwIfAborted();
    const { bytesRead } = await handle.read(buffer, filled, buffer.length - filled, filled);
    if (bytesRead === 0) break;
    filled += bytesRead;
  }
  return buffer.subarray(0, filled);
}

/**
 * The `file_read` tool; refusals and missing files throw typed errors the model sees as observations.
 *
 * @example
 * ```ts
 * const agent = createAgent({ model, tools: [fileRead({ root: process.cwd() })] });
 * ```
 */
export function fileRead(options: FileReadOptions): Tool<z.infer<typeof Input>, string> {
  if (typeof options !== 'object' || options === null) throw new ConfigurationError('fileRead needs options: fileRead({ root: "./workspace" }).');
  const maxBytes = options.maxBytes ?? DEFAULTS.hydration.fileRead.maxBytes;
  if (!(Number.isSafeInteger(maxBytes) && maxBytes > 0)) {
    throw new ConfigurationError(`fileRead: maxBytes must be a positive whole number (got ${String(maxBytes)}); the default is ${DEFAULTS.hydration.fileRead.maxBytes}.`);
  }
  const root = confinedRoot(options.root);
  return defineTool({
    name: 'file_read',
    description: `Read a text file inside the project's root folder by its relative path (at most ${maxBytes} bytes). Paths outside the root are refused.`,
    input: Input,
    permissions: ['fs.read'],
    execute: async ({ path: requested }, { signal }) => {
      signal.throwIfAborted();
      const real = await confinePath(root, requested);
      const handle = await openChecked(real, requested);
      try {
        await checkOpened(handle, root, requested);
        const stat = await handle.stat();
        if (!stat.isFile()) {
          const what = stat.isDirectory() ? 'a folder; read a file inside it' : 'not a regular file (a device, socket or pipe)';
          throw new FileReadError('file_read_failed', { path: requested, reason: 'not_a_file', detail: `it is ${what}` });
        }
        const bytes = await readHead(handle, stat.size, maxBytes, signal);
        const truncated = stat.size > bytes.length;
        const text = textOrDescription(bytes, truncated);
        return truncated ? text + truncationMarker(bytes.length, stat.size) : text;
      } finally {
        await handle.close();
      }
    },
  });
}
