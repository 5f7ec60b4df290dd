/** The peers, loaded by the bench only when run with `--peers` (they live in this folder's own install). */
import { aiSdk } from './aiSdk.ts';
import { aiSdkHttp, openaiAgentsHttp } from './http.ts';
import { langgraph, langgraphMemory } from './langgraph.ts';
import { openaiAgents } from './openaiAgents.ts';
import type { PeersModule } from '../scenarios/types.ts';

export const peers: PeersModule['peers'] = [aiSdk, openaiAgents, langgraph, langgraphMemory];
export const httpPeers: PeersModule['httpPeers'] = [aiSdkHttp, openaiAgentsHttp];
