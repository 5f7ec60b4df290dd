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
 * Arguments: way, tokens (default 1), runs (default 2000). Ways: `http` (the AG-UI handler over
 * loopback HTTP, read with `fetch`), `inProcess` (the handler called directly), `direct`
 * (`tokens$`), and two floors that leave the handler out: `listener` (`toNodeListener` around a
 * handler answering a recorded one-token AG-UI stream) and `node` (a bare Node http listener
 * writing the same bytes), both read with `fetch` like `http`. `page` is `http` read by a page in its
 * own process (bench/webReader.ts), so the profile is the server's alone; it starts that file, so run
 * the sources, not the bundle:
 *
 *   node --import tsx --cpu-prof --cpu-prof-dir=bench/results/prof bench/profileWeb.ts page 2000 300
 */
import { createServer, type RequestListener } from 'node:http';
import { startReader } from './webProcess.ts';
import { close, listen, readDirect, readStream, streamingAgent } from './webRuns.ts';
import { createAgUiHandler, toNodeListener } from '../src/web/index.ts';

const way = process.argv[2] ?? 'http';
const tokens = Number(process.argv[3] ?? 1);
const runs = Number(process.argv[4] ?? 2000);
const WAYS = ['http', 'inProcess', 'direct', 'listener', 'node', 'page'];
if (!WAYS.includes(way)) throw new Error(`profileWeb: way must be one of ${WAYS.join(', ')}, not ${way}`);

const agent = streamingAgent(tokens);
const handler = createAgUiHandler(agent);
/** A one-token AG-UI run's stream as the handler sends it, for the floors. */
const recorded = await (await handler(new Request('http://127.0.0.1/api/agent', { method: 'POST', body: JSON.stringify({ threadId: 't', runId: 'recorded', messages: [{ id: 'u1', role: 'user', content: 'x' }], tools: [], context: [], state: {}, forwardedProps: {} }) }))).text();
const headers = { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' };
const bare: RequestListener = (request, response) => {
  request.resume();
  request.on('end', () => {
    response.writeHead(200, headers);
    response.end(recorded);
  });
};
const listener = way === 'node' ? bare : toNodeListener(way === 'listener' ? () => Promise.resolve(new Response(recorded, { headers })) : handler);
const server = createServer(listener);
const url = await listen(server);
const page = way === 'page' ? startReader() : undefined;
const started = performance.now();
for (let i = 0; i < runs; i++) {
  const send = way === 'inProcess' ? handler : fetch;
  // The page checks the text itself.
  if (page !== undefined) await page.read({ url, protocol: 'agUi', task: `t${i}`, id: `p-${i}`, tokens });
  else {
    const got = way === 'direct' ? await readDirect(agent, `t${i}`, `p-${i}`) : await readStream(send, url, 'agUi', `t${i}`, `p-${i}`);
    if (got.deltas < 1) throw new Error(`profileWeb: run ${i} streamed no text`);
  }
}
const ms = performance.now() - started;
page?.stop();
console.log(`${way}, ${tokens} token(s): ${runs} runs, ${((ms * 1000) / runs).toFixed(0)} µs per run`);
agent.stop();
await close(server);
