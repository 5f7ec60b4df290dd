/** Only a missing file reads as `null`; corrupt, future-version or polluting content is a typed error. */
import type { Adapter } from 'lowdb';
import { TextFile, TextFileSync } from 'lowdb/node';
import type { z } from 'zod';
import { CorruptFileError, StoreError } from './errors.ts';
import { safeJsonParse } from './safeJson.ts';

export class DocumentFile<T extends { v: number }> implements Adapter<T> {
  /** Made on first use: most documents are only ever handled synchronously. */
  #textFile: TextFile | undefined;

  constructor(
    readonly file: string,
    readonly schema: z.ZodType<T>,
    readonly version: number,
  ) {}

  get #text(): TextFile {
    return (this.#textFile ??= new TextFile(this.file));
  }

  async read(): Promise<T | null> {
    const text = await this.#text.read();
    return text === null ? null : this.parse(text);
  }

  parse(text: string): T {
    if (text.trim() === '' || text.includes('\u0000')) {
      throw new CorruptFileError(`${this.file} is empty or NUL-filled. It was left untouched; remove it to start fresh.`, { file: this.file });
    }
    const json = safeJsonParse(text);
    if (!json.ok) {
      throw new CorruptFileError(`${this.file} does not parse (${json.reason}). It was left untouched.`, { file: this.file });
    }
    const version = (json.value as { v?: unknown } | null)?.v;
    if (typeof version === 'number' && version > this.version) {
      throw new StoreError('unsupported_version',
        `${this.file} has schema version ${version}; this actorloop reads version ${this.version}. Upgrade actorloop.`,
        { file: this.file },
      );
    }
    const parsed = this.schema.safeParse(json.value);
    if (!parsed.success) {
      const issues = parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ');
      throw new CorruptFileError(`${this.file} fails its schema (${issues}). It was left untouched.`, { file: this.file });
    }
    return parsed.data;
  }

  write(data: T): Promise<void> {
    return this.#text.write(JSON.stringify(data));
  }

  writeSync(data: T): void {
    new TextFileSync(this.file).write(JSON.stringify(data));
  }
}
