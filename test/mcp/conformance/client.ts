/**
 * The client the MCP conformance suite drives: `node --import tsx client.ts <server-url>`, with
 * the scenario in MCP_CONFORMANCE_SCENARIO. Every scenario goes through `connectMcpServer`, and
 * through an agent where the scenario is about what a model does (calling a tool). Exits 0 when
 * the scenario ran to its end, 1 with the reason on stderr otherwise; the suite's own checks
 * decide whether the client behaved. The OAuth scenarios pass their credentials in
 * MCP_CONFORMANCE_CONTEXT (JSON); their authorization servers approve at once, so the sign-in
 * handler follows the authorization URL's redirect and reads the code off it, as a browser would.
 */
import { createAgent } from '../../../src/agent/createAgent.ts';
import { connectMcpServer, type McpServer, type McpServerConfig } from '../../../src/mcp/connect.ts';
import type { McpOAuthOptions } from '../../../src/mcp/oauth.ts';
import { scriptedModel } from '../../../src/testing/index.ts';

const NAME = 'conformance';
const url = process.argv.at(-1) ?? '';
const scenario = process.env['MCP_CONFORMANCE_SCENARIO'] ?? '';
const context = JSON.parse(process.env['MCP_CONFORMANCE_CONTEXT'] ?? '{}') as Record<string, string | undefined>;
const REDIRECT = 'http://localhost:3000/callback';
// The address the suite's basic-cimd scenario expects as the client's metadata document.
const CLIENT_METADATA_URL = 'https://conformance-test.local/client-metadata.json';

/** The browser's part: open the authorization URL, take the code from where it redirects. */
async function authorize(url: URL): Promise<string> {
  const response = await fetch(url, { redirect: 'manual' });
  const location = response.headers.get('location');
  const code = location === null ? null : new URL(location, url).searchParams.get('code');
  if (code === null) throw new Error(`the authorization server answered ${response.status} without a redirect carrying a code`);
  return code;
}

/** The scenario's OAuth setup from its context: cross-app access, client credentials (secret or key), a pre-registered client, or registration. */
function auth(): McpOAuthOptions {
  const { client_id: clientId, client_secret: clientSecret, private_key_pem: privateKey, signing_algorithm: algorithm } = context;
  const { idp_id_token: idToken, idp_token_endpoint: idpTokenEndpoint, idp_client_id: idpClientId } = context;
  if (clientId !== undefined && idToken !== undefined && idpTokenEndpoint !== undefined && idpClientId !== undefined) {
    return { grant: 'cross_app_access', clientId, ...(clientSecret === undefined ? {} : { clientSecret }), idToken, idpTokenEndpoint, idpClientId };
  }
  if (clientId !== undefined && privateKey !== undefined) return { grant: 'client_credentials', clientId, privateKey, algorithm: algorithm ?? 'ES256' };
  if (scenario.startsWith('auth/client-credentials') && clientId !== undefined && clientSecret !== undefined) return { grant: 'client_credentials', clientId, clientSecret };
  const preRegistered = clientId === undefined ? {} : { clientId, ...(clientSecret === undefined ? {} : { clientSecret }) };
  return { ...preRegistered, clientMetadataUrl: CLIENT_METADATA_URL, redirectUrl: REDIRECT, authorize };
}

const config: McpServerConfig = scenario.startsWith('auth/') ? { name: NAME, url, auth: auth() } : { name: NAME, url };
const toolContext = { signal: new AbortController().signal, toolCallId: 'c1', idempotencyKey: 'conformance:c1', runId: 'conformance', agentId: 'conformance' };

/** Connect, list the tools, call each named one with no arguments, close. */
async function callTools(names: readonly string[]): Promise<void> {
  const server: McpServer = await connectMcpServer(config);
  try {
    const tools = await server.tools();
    for (const name of names) {
      const tool = tools.find((candidate) => candidate.name === `${NAME}_${name}`);
      if (tool === undefined) throw new Error(`the server lists no tool "${name}" (it lists ${tools.map((candidate) => candidate.name).join(', ')})`);
      await tool.execute({}, toolContext);
    }
  } finally {
    await server.close();
  }
}

/** A model that adds two numbers with the server's tool: the agent connects, offers it, calls it. */
async function agentAddsNumbers(): Promise<void> {
  const model = scriptedModel([{ toolCalls: [{ name: `${NAME}_add_numbers`, arguments: { a: 5, b: 3 } }] }, { text: 'done' }]);
  const agent = createAgent({ model, mcpServers: [config] });
  try {
    await agent.run('Add 5 and 3.');
    const finished = agent.journal.entries().find((entry) => entry.event.type === 'tool.finished');
    if (finished?.event.type !== 'tool.finished' || finished.event.status !== 'ok') throw new Error(`the add_numbers call did not succeed: ${JSON.stringify(finished?.event)}`);
  } finally {
    await agent.close();
  }
}

/** The server asks the user a question with every field defaulted: the agent's run waits, the human accepts without filling anything in. */
async function agentAnswersWithDefaults(): Promise<void> {
  const model = scriptedModel([{ toolCalls: [{ name: `${NAME}_test_client_elicitation_defaults`, arguments: {} }] }, { text: 'done' }]);
  const agent = createAgent({ model, mcpServers: [{ name: NAME, url }] });
  try {
    const run = agent.start('Answer the form.');
    run.events$.subscribe(({ event }) => {
      if (event.type === 'human.awaiting' && event.kind === 'elicitation') queueMicrotask(() => run.approve(undefined, { answer: {} }));
    });
    await run.result;
    const finished = agent.journal.entries().find((entry) => entry.event.type === 'tool.finished');
    if (finished?.event.type !== 'tool.finished' || finished.event.status !== 'ok') throw new Error(`the elicitation tool call did not succeed: ${JSON.stringify(finished?.event)}`);
  } finally {
    await agent.close();
  }
}

const scenarios: Readonly<Record<string, () => Promise<void>>> = {
  initialize: () => callTools([]),
  tools_call: agentAddsNumbers,
  'elicitation-sep1034-client-defaults': agentAnswersWithDefaults,
  'sse-retry': () => callTools(['test_reconnection']),
};

/** Scenarios without their own entry (the OAuth ones): connect, list tools, call the test tool if there is one. */
async function connectAndList(): Promise<void> {
  const server = await connectMcpServer(config);
  try {
    const tools = await server.tools();
    const test = tools.find((tool) => tool.name === `${NAME}_test-tool`);
    if (test !== undefined) await test.execute({}, toolContext);
  } finally {
    await server.close();
  }
}

try {
  await (scenarios[scenario] ?? connectAndList)();
  process.exit(0);
} catch (error) {
  process.stderr.write(`scenario ${scenario} failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
}
