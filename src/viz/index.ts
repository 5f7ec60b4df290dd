/**
 * Diagrams of actorloop's state machines: Mermaid text from a machine's state
 * node tree, and the files of `visualizations/` that `npm run viz` writes.
 *
 * @example
 * ```ts
 * import { toMermaid } from './viz/index.ts';
 * import { agentMachine } from 'actorloop/machines';
 * console.log(toMermaid(agentMachine, { direction: 'LR' }));
 * ```
 */
export { toMermaid } from './toMermaid.ts';
export type { ToMermaidOptions } from './toMermaid.ts';
export { discoverMachines, generateVisualizations, mmdHeader, MERMAID_BUNDLE_PATH } from './generate.ts';
export type { GenerateOptions, NamedMachine, VizFile } from './generate.ts';
export { renderIndexHtml } from './indexHtml.ts';
export type { DiagramPage, IndexHtmlOptions } from './indexHtml.ts';
export { actionNames, delayName, guardName, invokeName, mermaidId, mermaidText, wrapWords } from './labels.ts';
