/**
 * `actorloop/web`: agents in a web page. A Fetch-style handler (`(request) => Promise<Response>`)
 * starts a run from a front end's protocol (AG-UI, or the AI SDK's UI message stream for
 * `useChat`), streams it as server-sent events, serves a page that reconnects exactly what it
 * missed (from the journal), and takes approvals, rejections and cancellations; a run that
 * delegates to other agents, or a reasoning strategy with its branches, is streamed with those
 * runs, each event attributed to its agent;
 * `toNodeListener` mounts it on Node's `http`.
 *
 * @example
 * ```ts
 * import { createServer } from 'node:http';
 * import { createAgUiHandler, toNodeListener } from 'actorloop/web';
 * createServer(toNodeListener(createAgUiHandler(agent, { store }))).listen(3000);
 * ```
 */
export { createAgUiHandler, agUiProtocol, AG_UI_INTERRUPT } from './agUi.ts';
export { createAiSdkHandler, aiSdkProtocol } from './aiSdk.ts';
export type { AiSdkAgentPart, AiSdkRunMetadata, AiSdkChunk } from './aiSdk.ts';
export { createRunHandler } from './handler.ts';
export type { WebHandler, WebHandlerOptions } from './handler.ts';
export type { ResumeRequest, RunDetails, RunView, StartRequest, StreamEncoder, SubRun, WebProtocol } from './protocol.ts';
export type { RunAgents } from './runTree.ts';
export type { JournalReader } from './runFeed.ts';
export { createStrategyHandler } from './strategyHandler.ts';
export type { StrategyHandlerOptions, StrategyStart } from './strategyHandler.ts';
export { toNodeListener } from './node.ts';
