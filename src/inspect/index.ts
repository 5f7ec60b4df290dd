/**
 * Inspection: watch agent machines live in the Stately inspector or in a local offline page
 * (`createInspector({ page: 'local' })`), record inspection events offline as JSONL, and
 * sanitise anything that leaves the process.
 *
 * @example
 * ```ts
 * import { createInspector, createJsonlRecorder, combineInspectors } from './inspect/index.ts';
 * const inspector = await createInspector();
 * const recorder = createJsonlRecorder('run.jsonl');
 * const agent = createAgent({ model, observe: { inspect: combineInspectors(inspector.inspect, recorder.inspect) } });
 * ```
 */
export { createInspector } from './createInspector.ts';
export type { FollowedRun, Inspector, InspectorOptions } from './createInspector.ts';
export { createJsonlRecorder } from './jsonlRecorder.ts';
export type { JsonlRecorder, JsonlRecorderOptions } from './jsonlRecorder.ts';
export { combineInspectors } from './combine.ts';
export { InspectionRecord, InspectionRecordType, toInspectionRecord } from './record.ts';
export { parseInspectionRecording, readInspectionRecording } from './readRecording.ts';
export type { InspectionRecording } from './readRecording.ts';
export { sanitize, createSanitizer, SANITIZE_DEFAULTS } from '../security/sanitize.ts';
export type { JsonValue, SanitizeOptions, Sanitizer } from '../security/sanitize.ts';
export { REDACTED, DEFAULT_SECRET_KEYS, DEFAULT_SECRET_PATTERNS, compileSecretRules } from '../security/secrets.ts';
export type { SecretRules, SecretRuleOptions } from '../security/secrets.ts';
export { InspectorError } from './errors.ts';
