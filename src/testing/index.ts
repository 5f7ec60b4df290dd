/**
 * `actorloop/testing`: a deterministic scripted model for tests, benchmarks and the offline
 * demo.
 *
 * @example
 * ```ts
 * import { scriptedModel } from 'actorloop/testing';
 * const model = scriptedModel([{ toolCalls: [{ name: 'add', arguments: { a: 1, b: 2 } }] }, { text: '3' }]);
 * ```
 */
export { scriptedModel } from './scriptedModel.ts';
export type { ScriptedModel, ScriptedModelOptions } from './scriptedModel.ts';
export type { Script, ScriptStep, ScriptToolCall } from './scriptStep.ts';
export { ScriptedModelError } from './errors.ts';
