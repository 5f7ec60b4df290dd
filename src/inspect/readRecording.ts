// Recordings are files, so their content is untrusted input like any journal.
import { readFile } from 'node:fs/promises';
import { InspectionRecord } from './record.ts';

export interface InspectionRecording {
  readonly records: InspectionRecord[];
  /** 1-based numbers of lines that were not valid records (a torn last line after a crash, a future version). */
  readonly invalidLines: number[];
}

// A JSON `__proto__` key becomes an own property that later copies (`Object.assign`) would turn
// into a prototype: drop it while parsing.
const dropProtoKeys = (key: string, value: unknown): unknown => (key === '__proto__' ? undefined : value);

/** Bad lines are listed, never thrown on. */
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

/** @example `const { records, invalidLines } = await readInspectionRecording('runs/inspect.jsonl');` */
export async function readInspectionRecording(filePath: string): Promise<InspectionRecording> {
  return parseInspectionRecording(await readFile(filePath, 'utf8'));
}
