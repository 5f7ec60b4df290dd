/** `actorloop/testing`: a deterministic scripted model for tests, benchmarks and the offline demo. */
export { scriptedModel } from './scriptedModel.ts';
export type { ScriptedModel, ScriptedModelOptions } from './scriptedModel.ts';
export type { Script, ScriptStep, ScriptToolCall } from './scriptStep.ts';
export { ScriptedModelError } from './errors.ts';
