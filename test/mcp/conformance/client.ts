/**
 * The client the MCP conformance suite drives: `node --import tsx client.ts <server-url>`, with
 * the scenario in MCP_CONFORMANCE_SCENARIO. Every scenario goes through `connectMcpServer`, and
 * through an agent where the scenario is about what a model does (calling a tool). Exits 0 when
 * the scenario ran to its end, 1 with the reason on stderr otherwise; the suite's own checks
 * decide whether the client behaved.
 */
import { createAgent } from '../../../src/agent/createAgent.ts';
import { connectMcpServer, type McpServer } from '../../../src/mcp/connect.ts';
import { scriptedModel } from '../../../src/testing/index.ts';

const NAME = 'conformance';
const url = process.argv.at(-1) ?? '';
const scenario = process.env['MCP_CONFORMANCE_SCENARIO'] ?? '';
const toolContext = { signal: new AbortController().signal, toolCallId: 'c1', idempotencyKey: 'conformance:c1', runId: 'conformance', agentId: 'conformance' };

/** Connect, list the tools, call each named one with no arguments, close. */
async function callTools(names: readonly string[]): Promise<void> {
  const server: McpServer = await connectMcpServer({ name: NAME, url });
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
  const agent = createAgent({ model, mcpServers: [{ name: NAME, url }] });
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
  const server = await connectMcpServer({ name: NAME, url });
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
