export { toMermaid } from './toMermaid.ts';
export type { ToMermaidOptions } from './toMermaid.ts';
export { discoverMachines, generateVisualizations, mmdHeader, MERMAID_BUNDLE_PATH } from './generate.ts';
export type { GenerateOptions, NamedMachine, VizFile } from './generate.ts';
export { renderIndexHtml } from './indexHtml.ts';
export type { DiagramPage, IndexHtmlOptions } from './indexHtml.ts';
export { actionNames, delayName, guardName, invokeName, mermaidId, mermaidText, wrapWords } from './labels.ts';
