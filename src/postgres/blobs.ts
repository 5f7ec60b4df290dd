/**
 * Image and file bytes of durable runs live in `blobs`, once per content hash; a run's row names the
 * hashes it refers to, its journal and outcomes carry only those. A worker holds a run's bytes in
 * memory while it steps the run, because the store a run reads them from answers synchronously.
 */
import { createHash } from 'node:crypto';
import type pg from 'pg';
import type { ContentPart, ImagePart, Message } from '../core/messages.ts';
import { checkParts, type ContentLimits } from '../conversation/parts.ts';
import type { BlobStore } from '../persistence/blobs.ts';
import { DurableRunError } from './errors.ts';
import { SCHEMA } from './migrations.ts';

/** Base64 bytes by reference. */
export type Blobs = ReadonlyMap<string, string>;

/** What a worker's agents may show a model: undefined for an agent that takes no images. */
export type MediaLimits = ContentLimits & { readonly vision: true };

type Db = pg.Pool | pg.PoolClient;

function refOf(data: string): { ref: string; data: string; bytes: number } {
  const bytes = Buffer.from(data, 'base64');
  // The canonical spelling: what a worker reads back from the table.
  return { ref: `sha256-${createHash('sha256').update(bytes).digest('hex')}`, data: bytes.toString('base64'), bytes: bytes.length };
}

/** A queued run's task parts and history, their bytes swapped for references. */
export interface QueuedMedia {
  readonly content?: ContentPart[];
  readonly history?: Message[];
  /** Every reference the run names, those given as references too. */
  readonly refs: readonly string[];
  /** The bytes this queueing brings. */
  readonly blobs: Blobs;
}

export function queuedMedia(content: readonly ContentPart[] | undefined, history: readonly Message[] | undefined): QueuedMedia {
  const blobs = new Map<string, string>();
  const refs = new Set<string>();
  const keep = <T extends ContentPart>(part: T): T => {
    if (part.type === 'text') return part;
    if (part.data !== undefined) {
      const { data, ...rest } = part;
      const stored = refOf(data);
      blobs.set(stored.ref, stored.data);
      refs.add(stored.ref);
      return { ...rest, ref: stored.ref, bytes: stored.bytes } as T;
    }
    if (part.ref !== undefined) refs.add(part.ref);
    return part;
  };
  const kept = history?.map((message): Message => {
    if (message.role === 'user' && typeof message.content !== 'string') return { ...message, content: message.content.map(keep) };
    if (message.role === 'tool' && message.parts !== undefined) return { ...message, parts: message.parts.map(keep) };
    return message;
  });
  return {
    ...(content === undefined ? {} : { content: content.map(keep) }),
    ...(kept === undefined ? {} : { history: kept }),
    refs: [...refs],
    blobs,
  };
}

/**
 * Writes the bytes not there yet and names `refs` on the run's row, in the caller's transaction.
 * Rows already there are locked (key share) until it commits, so deleting the last run that named one
 * waits for it and then keeps the row. Throws `missing_blob` for a reference that has no bytes.
 */
export async function storeBlobs(client: pg.PoolClient, runId: string, refs: readonly string[], blobs: Blobs, update = false): Promise<void> {
  if (refs.length === 0) return;
  const given = [...blobs.keys()];
  const found = await client.query<{ ref: string }>(
    `WITH kept AS (SELECT ref FROM ${SCHEMA}.blobs WHERE ref = ANY($1::text[]) FOR KEY SHARE),
     added AS (
       INSERT INTO ${SCHEMA}.blobs (ref, data) SELECT ref, decode(data, 'base64') FROM unnest($2::text[], $3::text[]) AS t(ref, data)
       WHERE NOT EXISTS (SELECT 1 FROM kept WHERE kept.ref = t.ref) ON CONFLICT (ref) DO NOTHING RETURNING ref
     )
     SELECT ref FROM kept UNION SELECT ref FROM added`,
    [refs, given, given.map((ref) => blobs.get(ref))],
  );
  const there = new Set([...found.rows.map((row) => row.ref), ...given]);
  const missing = refs.find((ref) => !there.has(ref));
  if (missing !== undefined) throw missingBlob(runId, missing, 'in its task or history');
  if (update) {
    await client.query(`UPDATE ${SCHEMA}.actors SET blobs = ARRAY(SELECT DISTINCT unnest(blobs || $2::text[])) WHERE id = $1`, [runId, refs]);
  }
}

export function missingBlob(runId: string, ref: string, how: string): DurableRunError {
  return new DurableRunError(
    `Run ${runId} refers to an image or file (${ref}) ${how}, and ${SCHEMA}.blobs has no bytes for it (deleted by hand, or a partial restore?): restore the row, or delete the run.`,
    { runId, code: 'missing_blob', table: `${SCHEMA}.blobs`, row: `ref=${ref}` },
  );
}

/**
 * The bytes of the runs this worker steps, by run: a run's are read when a step rebuilds it and let go
 * when the run leaves the worker. Its `store` is what the worker's agents read parts through.
 */
export class HeldBlobs {
  readonly #byRef = new Map<string, { data: string; runs: Set<string> }>();
  readonly #byRun = new Map<string, Set<string>>();

  readonly store: BlobStore = {
    get: (ref) => this.#byRef.get(ref)?.data,
    put: (data) => {
      const { ref } = refOf(data);
      if (this.#byRef.has(ref)) return ref;
      // Bytes reach a durable run when it is queued or a call returns them, where they are stored.
      throw new DurableRunError(`An image or file reached a durable run where its bytes cannot be stored (${ref}): pass images and files with the task or its history, or return them from a tool.`);
    },
  };

  /** Reads what is not in hand already; a reference without bytes fails the step with `missing_blob`. */
  async hold(db: Db, runId: string, refs: readonly string[], made: Blobs = new Map()): Promise<void> {
    this.add(runId, made);
    const wanted = refs.filter((ref) => !this.#byRef.has(ref));
    for (const ref of refs) this.#link(runId, ref);
    if (wanted.length === 0) return;
    const found = await db.query<{ ref: string; data: Buffer }>(`SELECT ref, data FROM ${SCHEMA}.blobs WHERE ref = ANY($1::text[])`, [wanted]);
    for (const row of found.rows) this.#put(runId, row.ref, row.data.toString('base64'));
    const missing = wanted.find((ref) => !this.#byRef.has(ref));
    if (missing !== undefined) {
      this.drop(runId);
      throw missingBlob(runId, missing, 'in its row');
    }
  }

  add(runId: string, blobs: Blobs): void {
    for (const [ref, data] of blobs) this.#put(runId, ref, data);
  }

  drop(runId: string): void {
    for (const ref of this.#byRun.get(runId) ?? []) {
      const held = this.#byRef.get(ref);
      held?.runs.delete(runId);
      if (held?.runs.size === 0) this.#byRef.delete(ref);
    }
    this.#byRun.delete(runId);
  }

  #put(runId: string, ref: string, data: string): void {
    if (!this.#byRef.has(ref)) this.#byRef.set(ref, { data, runs: new Set() });
    this.#link(runId, ref);
  }

  #link(runId: string, ref: string): void {
    this.#byRef.get(ref)?.runs.add(runId);
    const named = this.#byRun.get(runId) ?? new Set<string>();
    this.#byRun.set(runId, named.add(ref));
  }
}

/**
 * The images a tool attached, as its recorded outcome keeps them: bytes the model may take become
 * references (their bytes returned to be stored); others keep their size and type, so the replay's
 * check says why each was not sent and never asks for their bytes.
 */
export function toolImages(images: readonly ImagePart[], limits: MediaLimits): { images: ImagePart[]; blobs: Blobs } {
  const blobs = new Map<string, string>();
  const kept = images.map((part): ImagePart => {
    if (part.data === undefined) return part;
    const { data, ...rest } = part;
    const stored = refOf(data);
    if (sendable(part, limits)) blobs.set(stored.ref, stored.data);
    return { ...rest, ref: stored.ref, bytes: stored.bytes };
  });
  return { images: kept, blobs };
}

function sendable(part: ImagePart, limits: MediaLimits): boolean {
  try {
    checkParts([part], limits);
    return true;
  } catch {
    return false;
  }
}
