/**
 * Read an inspection recording back: every line parsed through the `InspectionRecord` schema.
 * Recordings are files, so their content is untrusted input like any journal.
 */
import { readFile } from 'node:fs/promises';
import { InspectionRecord } from './record.ts';

/** A parsed recording. */
export interface InspectionRecording {
  readonly records: InspectionRecord[];
  /** 1-based numbers of lines that were not valid records (a torn last line after a crash, a future version). */
  readonly invalidLines: number[];
}

// A JSON `__proto__` key becomes an own property that later copies (`Object.assign`) would turn
// into a prototype: drop it while parsing.
const dropProtoKeys = (key: string, value: unknown): unknown => (key === '__proto__' ? undefined : value);

/**
 * Parse JSONL text into records; blank lines are ignored, bad lines listed, never thrown on.
 *
 * @example
 * ```ts
 * const { records, invalidLines } = parseInspectionRecording(text);
 * const actors = records.filter((r) => r.type === '@xstate.actor');
 * ```
 */
export function parseInspectionRecording(text: string): InspectionRecording {
  const records: InspectionRecord[] = [];
  const invalidLines: number[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = (lines[i] as string).trim();
    if (line === '') continue;
    let json: unknown;
    try {
      json = JSON.parse(line, dropProtoKeys);
    } catch {
      invalidLines.push(i + 1);
      continue;
    }
    const parsed = InspectionRecord.safeParse(json);
    if (parsed.success) records.push(parsed.data);
    else invalidLines.push(i + 1);
  }
  return { records, invalidLines };
}

/**
 * Read and parse the recording at `filePath` (see {@link parseInspectionRecording}).
 *
 * @example
 * ```ts
 * const { records } = await readInspectionRecording('runs/inspect.jsonl');
 * ```
 */
export async function readInspectionRecording(filePath: string): Promise<InspectionRecording> {
  return parseInspectionRecording(await readFile(filePath, 'utf8'));
}
