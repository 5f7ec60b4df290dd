/**
 * Keep the web handler busy with short runs so `node --cpu-prof` can show where a request's
 * fixed cost goes: `tokens`-token runs over loopback HTTP, in process through the handler, or
 * via `tokens$`, one after another.
 *
 *   node_modules/.bin/esbuild bench/profileWeb.ts --bundle --platform=node --format=esm \
 *     --packages=external --outfile=bench/results/profileWeb.mjs
 *   node --cpu-prof --cpu-prof-dir=bench/results/prof bench/results/profileWeb.mjs http 1 2000
 *   npx tsx bench/summarizeProfile.ts bench/results/prof/<file>.cpuprofile 40
 *
 * Arguments: way (`http`, `inProcess`, `direct`), tokens (default 1), runs (default 2000).
 */
import { createServer } from 'node:http';
import { close, listen, readDirect, readStream, streamingAgent } from './web.ts';
import { createAgUiHandler, toNodeListener } from '../src/web/index.ts';

const way = process.argv[2] ?? 'http';
const tokens = Number(process.argv[3] ?? 1);
const runs = Number(process.argv[4] ?? 2000);
if (way !== 'http' && way !== 'inProcess' && way !== 'direct') throw new Error(`profileWeb: way must be http, inProcess or direct, not ${way}`);

const agent = streamingAgent(tokens);
const handler = createAgUiHandler(agent);
const server = createServer(toNodeListener(handler));
const url = await listen(server);
const started = performance.now();
for (let i = 0; i < runs; i++) {
  const got = way === 'direct' ? await readDirect(agent, `t${i}`, `p-${i}`) : await readStream(way === 'http' ? fetch : handler, url, 'agUi', `t${i}`, `p-${i}`);
  if (got.deltas < 1) throw new Error(`profileWeb: run ${i} streamed no text`);
}
const ms = performance.now() - started;
console.log(`${way}, ${tokens} token(s): ${runs} runs, ${((ms * 1000) / runs).toFixed(0)} µs per run`);
agent.stop();
await close(server);
