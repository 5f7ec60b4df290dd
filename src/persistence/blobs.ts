/**
 * Image and file bytes kept once by content hash: conversations and checkpoints carry a part's `ref`,
 * since an inline image would be written again with every checkpoint and snapshot.
 */
import { createHash, randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ContentPart, FilePart, ImagePart, Message } from '../core/messages.ts';
import { ConversationError } from '../conversation/errors.ts';

export interface BlobStore {
  /** The same bytes give the same reference. */
  put(data: string): string;
  get(ref: string): string | undefined;
}

const REF = /^sha256-([0-9a-f]{64})$/;

function refOf(bytes: Buffer): string {
  return `sha256-${createHash('sha256').update(bytes).digest('hex')}`;
}

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

/** Written atomically (a temp file renamed into place), so any process opening the same store reads them. */
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

export function storeParts(parts: readonly ContentPart[], blobs: BlobStore): ContentPart[] {
  return parts.map((part) => (part.type === 'text' ? part : stored(part, blobs)));
}

export function storeMessageParts(messages: readonly Message[], blobs: BlobStore): Message[] {
  return messages.map((message) => mapParts(message, (part) => stored(part, blobs)));
}

/** Throws ConversationError (`invalid_content_part`, problem `missing_data`) for a reference the store does not have. */
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
