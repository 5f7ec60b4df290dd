import { DEFAULTS } from '../core/defaults.ts';
import { ConversationError } from './errors.ts';
import type { ContentPart, FilePart, ImagePart } from '../core/messages.ts';
import { defined } from '../core/defined.ts';

export type { ContentPartProblem } from './errors.ts';

/** Limits on the parts a run accepts; the defaults are in `DEFAULTS.content`. */
export interface ContentLimits {
  readonly maxImageBytes?: number;
  readonly maxFileBytes?: number;
}

/** What a run takes as its task: text, or text and parts in reading order (a string is a text part). */
export type TaskInput = string | readonly (string | ContentPart)[];

export type PartData = Uint8Array | string;

// Magic numbers of the media types parts take, to name bytes given without a type.
const SIGNATURES: ReadonlyArray<readonly [string, readonly number[]]> = [
  ['image/png', [0x89, 0x50, 0x4e, 0x47]],
  ['image/jpeg', [0xff, 0xd8, 0xff]],
  ['image/gif', [0x47, 0x49, 0x46, 0x38]],
  ['application/pdf', [0x25, 0x50, 0x44, 0x46]],
];

function sniff(bytes: Uint8Array): string | undefined {
  const found = SIGNATURES.find(([, magic]) => magic.every((byte, index) => bytes[index] === byte))?.[0];
  if (found !== undefined) return found;
  // RIFF....WEBP
  const ascii = (from: number, to: number) => String.fromCharCode(...bytes.subarray(from, to));
  return bytes.length >= 12 && ascii(0, 4) === 'RIFF' && ascii(8, 12) === 'WEBP' ? 'image/webp' : undefined;
}

const toBase64 = (data: PartData): string => (typeof data === 'string' ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('base64'));

/**
 * An image part from a URL, or bytes whose media type is sniffed when not given (PNG, JPEG, GIF, WebP).
 * @example
 * ```ts
 * await agent.run(['What is in this picture?', image(await readFile('dog.jpg'))]);
 * ```
 */
export function image(source: string | URL | PartData, options: { readonly mediaType?: string } = {}): ImagePart {
  if (source instanceof URL) return { type: 'image', url: source.href };
  if (typeof source === 'string' && /^(https?:|data:)/i.test(source)) {
    const inline = parseDataUrl(source);
    if (inline !== undefined) return { type: 'image', data: inline.data, mediaType: options.mediaType ?? inline.mediaType };
    return { type: 'image', url: source };
  }
  const mediaType = options.mediaType ?? sniff(typeof source === 'string' ? Buffer.from(source.slice(0, 24), 'base64') : source);
  if (mediaType === undefined) {
    throw ConversationError.contentPart('unsupported', `image(): cannot tell the media type of these bytes. Pass it: image(bytes, { mediaType: 'image/png' }) (one of ${DEFAULTS.content.imageMediaTypes.join(', ')}).`);
  }
  return { type: 'image', data: toBase64(source), mediaType };
}

/**
 * A file part (a PDF document).
 * @example
 * ```ts
 * await agent.run(['Summarise this report', file(await readFile('report.pdf'), { filename: 'report.pdf' })]);
 * ```
 */
export function file(data: PartData, options: { readonly mediaType?: string; readonly filename?: string } = {}): FilePart {
  return {
    type: 'file',
    data: toBase64(data),
    mediaType: options.mediaType ?? 'application/pdf',
    ...defined({ filename: options.filename }),
  };
}

/** `data:<type>;base64,<data>` → its parts; `undefined` for any other URL. */
export function parseDataUrl(url: string): { mediaType: string; data: string } | undefined {
  const match = /^data:([^;,]+);base64,(.*)$/is.exec(url);
  return match === null ? undefined : { mediaType: (match[1] as string).toLowerCase(), data: match[2] as string };
}

/** Decoded size of base64 data, without decoding it. */
export function base64Bytes(data: string): number {
  const padding = data.endsWith('==') ? 2 : data.endsWith('=') ? 1 : 0;
  return Math.max(0, Math.floor((data.length * 3) / 4) - padding);
}

/** Throws ConversationError (`invalid_content_part`) for a value that is not a part. */
export function taskContent(task: TaskInput): string | ContentPart[] {
  if (typeof task === 'string') return task;
  return task.map((part, index) => {
    if (typeof part === 'string') return { type: 'text', text: part };
    if (part === null || typeof part !== 'object' || !['text', 'image', 'file'].includes((part as { type?: unknown }).type as string)) {
      throw ConversationError.contentPart('unsupported', `Part ${index} of the task is not text, an image or a file. Build parts with image(...) and file(...), or pass strings.`);
    }
    // A data URL is bytes: checked and stored like them.
    const inline = part.type === 'image' && part.url !== undefined ? parseDataUrl(part.url) : undefined;
    return inline === undefined ? part : { type: 'image', data: inline.data, mediaType: inline.mediaType };
  });
}

/** Checked before a run starts, so a part the chat formats or the model cannot take fails early, saying what to change. */
export function checkParts(parts: readonly ContentPart[], options: ContentLimits & { readonly vision: boolean }): void {
  for (const [index, part] of parts.entries()) {
    if (part.type === 'text') continue;
    const what = part.type === 'image' ? 'an image' : 'a file';
    if (!options.vision) {
      throw ConversationError.contentPart('no_vision', `Part ${index} is ${what}, but the model is not declared to take images or files. If it does, set createAgent({ model: { provider, name, vision: true } }); otherwise send text only.`);
    }
    const types = part.type === 'image' ? DEFAULTS.content.imageMediaTypes : DEFAULTS.content.fileMediaTypes;
    if (part.type === 'image' && part.url !== undefined) {
      if (!/^https?:\/\//i.test(part.url)) throw ConversationError.contentPart('unsupported', `Part ${index} is an image at "${part.url.slice(0, 40)}": only http(s) URLs and bytes (or a base64 data: URL) are sent. Pass the bytes with image(bytes).`);
      continue;
    }
    const mediaType = part.mediaType?.toLowerCase();
    if (mediaType === undefined || !types.includes(mediaType)) {
      throw ConversationError.contentPart('unsupported', `Part ${index} is ${what} of type ${mediaType ?? 'unknown'}; the chat formats take ${types.join(', ')}. Convert it first.`);
    }
    const bytes = part.data === undefined ? (part.bytes ?? 0) : base64Bytes(part.data);
    const limit = part.type === 'image' ? (options.maxImageBytes ?? DEFAULTS.content.maxImageBytes) : (options.maxFileBytes ?? DEFAULTS.content.maxFileBytes);
    if (bytes > limit) {
      const key = part.type === 'image' ? 'maxImageBytes' : 'maxFileBytes';
      throw ConversationError.contentPart('too_large', `Part ${index} is ${what} of ${bytes} bytes, over the limit of ${limit}. Shrink it, or raise context.content.${key} if the model takes it.`);
    }
  }
}
