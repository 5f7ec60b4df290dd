/**
 * The bytes of images and files, kept once by content hash. A run's conversation, journal and
 * checkpoints carry a part's `ref`, never its base64: a conversation is copied into every
 * checkpoint and snapshot, and an image inline would be written again each time. The bytes
 * are read back only to build a model request, so a resumed run sends the same image again.
 */
import { createHash, randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ContentPart, FilePart, ImagePart, Message } from '../core/messages.ts';
import { ConversationError } from '../conversation/errors.ts';

export interface BlobStore {
  /** Keep base64 bytes; returns their reference (the same bytes give the same reference). */
  put(data: string): string;
  /** The base64 bytes of a reference, or `undefined` when this store does not have them. */
  get(ref: string): string | undefined;
}

const REF = /^sha256-([0-9a-f]{64})$/;

function refOf(bytes: Buffer): string {
  return `sha256-${createHash('sha256').update(bytes).digest('hex')}`;
}

/**
 * Bytes in this process's memory (an agent without a store).
 *
 * @example
 * ```ts
 * const blobs = createMemoryBlobStore();
 * blobs.get(blobs.put('iVBORw0KGgo=')); // 'iVBORw0KGgo='
 * ```
 */
export function createMemoryBlobStore(): BlobStore {
  const kept = new Map<string, string>();
  return {
    put(data) {
      const ref = refOf(Buffer.from(data, 'base64'));
      kept.set(ref, data);
      return ref;
    },
    get: (ref) => kept.get(ref),
  };
}

/**
 * Bytes as files under `dir` (`<dir>/sha256-<hex>`), written once, atomically (a temp file
 * renamed into place), so any process that opens the same store reads them.
 *
 * @example
 * ```ts
 * const blobs = createFileBlobStore(join(store.dir, 'blobs'));
 * ```
 */
export function createFileBlobStore(dir: string): BlobStore {
  let made = false;
  return {
    put(data) {
      const bytes = Buffer.from(data, 'base64');
      const ref = refOf(bytes);
      const path = join(dir, ref);
      if (existsSync(path)) return ref;
      if (!made) {
        mkdirSync(dir, { recursive: true });
        made = true;
      }
      const temp = `${path}.${randomUUID()}.tmp`;
      writeFileSync(temp, bytes);
      renameSync(temp, path);
      return ref;
    },
    get(ref) {
      if (!REF.test(ref)) return undefined;
      try {
        return readFileSync(join(dir, ref)).toString('base64');
      } catch {
        return undefined;
      }
    },
  };
}

type MediaPart = ImagePart | FilePart;

function stored(part: MediaPart, blobs: BlobStore): MediaPart {
  if (part.data === undefined) return part;
  const { data, ...rest } = part;
  return { ...rest, ref: blobs.put(data), bytes: Buffer.byteLength(data, 'base64') };
}

function loaded(part: MediaPart, blobs: BlobStore): MediaPart {
  if (part.ref === undefined) return part;
  const data = blobs.get(part.ref);
  if (data === undefined) {
    throw ConversationError.contentPart('missing_data', `The ${part.type} ${part.ref} of this conversation is not in the run's blob store (${part.type === 'file' && part.filename !== undefined ? part.filename : 'no name'}). Resume the run with the store it was started with.`);
  }
  const { ref: _ref, bytes: _bytes, ...rest } = part;
  return { ...rest, data };
}

/** Parts with their bytes moved into `blobs` (by reference). */
export function storeParts(parts: readonly ContentPart[], blobs: BlobStore): ContentPart[] {
  return parts.map((part) => (part.type === 'text' ? part : stored(part, blobs)));
}

/** Messages whose parts' bytes are moved into `blobs`; messages without parts are kept as they are. */
export function storeMessageParts(messages: readonly Message[], blobs: BlobStore): Message[] {
  return messages.map((message) => mapParts(message, (part) => stored(part, blobs)));
}

/**
 * Messages with every stored part's bytes read back, for a model request. Throws
 * ConversationError (invalid_content_part) (`missing_data`) for a reference the store does not have.
 */
export function loadMessageParts(messages: readonly Message[], blobs: BlobStore): readonly Message[] {
  // Runs once per model call: a conversation without stored parts is passed on without a copy.
  if (!messages.some(holdsStored)) return messages;
  return messages.map((message) => (holdsStored(message) ? mapParts(message, (part) => loaded(part, blobs)) : message));
}

function holdsStored(message: Message): boolean {
  if (message.role === 'user') return typeof message.content !== 'string' && message.content.some((part) => part.type !== 'text' && part.ref !== undefined);
  return message.role === 'tool' && message.parts !== undefined && message.parts.some((part) => part.ref !== undefined);
}

function mapParts(message: Message, change: (part: MediaPart) => MediaPart): Message {
  if (message.role === 'user' && typeof message.content !== 'string' && message.content.some((part) => part.type !== 'text' && (part.data ?? part.ref) !== undefined)) {
    return { ...message, content: message.content.map((part) => (part.type === 'text' ? part : change(part))) };
  }
  if (message.role === 'tool' && message.parts !== undefined && message.parts.length > 0) {
    return { ...message, parts: message.parts.map((part) => change(part) as ImagePart) };
  }
  return message;
}
