import { existsSync, readFileSync, statSync } from 'node:fs';
import { sep } from 'node:path';
import { LowSync, type SyncAdapter } from 'lowdb';
import { ActorloopError, describeError } from '../core/errors.ts';
import type { ErrorData } from '../core/loopEvent.ts';
import type { DocumentFile } from './documentFile.ts';
import { META_VERSION, type CorruptRun, type RunEndRecord, type RunHeaderRecord, type RunMeta } from './records.ts';
import { defined } from '../core/defined.ts';

export interface RunPaths {
  readonly log: string;
  readonly meta: string;
  readonly lock: string;
  /** steno names it `.<name>.tmp` beside `meta`. */
  readonly temp: string;
  readonly segment?: true;
}

export const LOG_SUFFIX = '.jsonl';
export const META_SUFFIX = '.meta.json';

/** `runsDir` is normalised and a run id is a plain file name: no `join` needed. */
export function flatPaths(runsDir: string, runId: string): RunPaths {
  const base = `${runsDir}${sep}`;
  return {
    log: `${base}${runId}${LOG_SUFFIX}`,
    meta: `${base}${runId}${META_SUFFIX}`,
    lock: `${base}${runId}.lock`,
    temp: `${base}.${runId}.meta.json.tmp`,
  };
}

/** Only a missing file is `undefined`; a bad one throws. */
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
    ...defined({ error: end.error, iterations: end.iterations, costUsd: end.costUsd }),
  };
}

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
  return { v: META_VERSION, runId, agentId, task, status: 'running', createdAt, updatedAt: createdAt, ...(header.journalOnly === true ? { journalOnly: true as const } : {}) };
}

export function metaDoc(doc: DocumentFile<RunMeta>): LowSync<RunMeta> {
  const adapter: SyncAdapter<RunMeta> = {
    read: () => (existsSync(doc.file) ? doc.parse(readFileSync(doc.file, 'utf8')) : null),
    write: (data) => doc.writeSync(data),
  };
  return new LowSync<RunMeta>(adapter, { v: META_VERSION, runId: '', agentId: '', task: '', status: 'running', createdAt: 0, updatedAt: 0 });
}

