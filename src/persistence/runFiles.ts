/**
 * The files of one run in a store, and what the run index reads from them: where they are (side
 * by side in `runs/`), and the run's metadata from its meta.json, its header and its end record.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { sep } from 'node:path';
import { LowSync, type SyncAdapter } from 'lowdb';
import { ActorloopError, describeError } from '../core/errors.ts';
import type { ErrorData } from '../core/loopEvent.ts';
import type { DocumentFile } from './documentFile.ts';
import { META_VERSION, type CorruptRun, type RunEndRecord, type RunHeaderRecord, type RunMeta } from './records.ts';

/** The files of one run. */
export interface RunPaths {
  readonly log: string;
  readonly meta: string;
  readonly lock: string;
  /** lowdb's temp file for `meta` (steno names it `.<name>.tmp` beside it). */
  readonly temp: string;
  /** `log` is a journal segment, shared with other runs. */
  readonly segment?: true;
}

export const LOG_SUFFIX = '.jsonl';
export const META_SUFFIX = '.meta.json';

/** `runsDir` is normalised (made with `join`) and a run id is a plain file name: no `join` needed. */
export function flatPaths(runsDir: string, runId: string): RunPaths {
  const base = `${runsDir}${sep}`;
  return {
    log: `${base}${runId}${LOG_SUFFIX}`,
    meta: `${base}${runId}${META_SUFFIX}`,
    lock: `${base}${runId}.lock`,
    temp: `${base}.${runId}.meta.json.tmp`,
  };
}

/** meta.json when the run has one (only a missing file is `undefined`; a bad one throws). */
export function readStoredMeta(doc: DocumentFile<RunMeta>): RunMeta | undefined {
  return existsSync(doc.file) ? doc.parse(readFileSync(doc.file, 'utf8')) : undefined;
}

export function endedMeta(meta: RunMeta, end: RunEndRecord): RunMeta {
  return {
    ...meta,
    status: end.status,
    reason: end.reason,
    updatedAt: end.at,
    ...(end.resumable === true ? { resumable: true } : {}),
    ...(end.error === undefined ? {} : { error: end.error }),
  };
}

/** A run the index lists although its files cannot be read. */
export function corruptRun(runId: string, file: string, error: unknown): CorruptRun {
  let at = 0;
  try {
    at = statSync(file).mtimeMs;
  } catch {
    // Listed all the same, as the oldest.
  }
  const data: ErrorData =
    error instanceof ActorloopError
      ? { name: error.name, code: error.code, message: error.message }
      : { name: error instanceof Error ? error.name : 'Error', code: 'unreadable', message: describeError(error) };
  return { runId, status: 'corrupt', file, error: data, createdAt: at, updatedAt: at };
}

export function metaFromHeader(header: RunHeaderRecord): RunMeta {
  const { runId, agentId, task, createdAt } = header;
  return { v: META_VERSION, runId, agentId, task, status: 'running', createdAt, updatedAt: createdAt };
}

/** The run's meta.json as a lowdb document, written synchronously (a few hundred bytes, atomically). */
export function metaDoc(doc: DocumentFile<RunMeta>): LowSync<RunMeta> {
  const adapter: SyncAdapter<RunMeta> = {
    read: () => (existsSync(doc.file) ? doc.parse(readFileSync(doc.file, 'utf8')) : null),
    write: (data) => doc.writeSync(data),
  };
  return new LowSync<RunMeta>(adapter, { v: META_VERSION, runId: '', agentId: '', task: '', status: 'running', createdAt: 0, updatedAt: 0 });
}

