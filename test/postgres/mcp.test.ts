/**
 * Durable (PostgreSQL) agents with MCP servers over HTTP: tokens a worker's OAuth obtains are
 * that agent's secrets, so a tool that echoes one leaves no trace of it in the database; and a
 * server's question to the user during a durable call is refused with why (a durable call cannot
 * stay open while a person answers), so the call ends with that error and the run goes on.
 */
import type pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createAgent } from '../../src/index.ts';
import { scriptedModel } from '../../src/testing/index.ts';
import type { PostgresRuntime } from '../../src/postgres/index.ts';
import { startOAuthFixture, type OAuthFixture } from '../mcp/fixtures/oauthServer.ts';
import { freshDatabase, postgresMissing } from '../support/postgres.ts';
import { inProcess, type InProcess } from './fixtures/agents.ts';

const missing = postgresMissing();
if (missing !== '') console.info(missing);

/** Every row of the runtime's and the job queue's tables, as text. */
async function everyRow(pool: pg.Pool): Promise<string> {
  const tables = await pool.query<{ schema: string; name: string }>(
    "SELECT table_schema AS schema, table_name AS name FROM information_schema.tables WHERE table_schema IN ('actorloop', 'graphile_worker') AND table_type = 'BASE TABLE'",
  );
  const texts: string[] = [];
  for (const { schema, name } of tables.rows) {
    const rows = await pool.query<{ row: string }>(`SELECT row_to_json(t)::text AS row FROM "${schema}"."${name}" t`);
    texts.push(...rows.rows.map((row) => row.row));
  }
  return texts.join('\n');
}

describe.skipIf(missing !== '')('durable agents with MCP servers', () => {
  let pool: pg.Pool;
  let runtime: PostgresRuntime;
  let setup: InProcess | undefined;
  let fixture: OAuthFixture | undefined;

  beforeAll(async () => {
    setup = await inProcess(await freshDatabase('mcp'), 4);
    ({ pool, runtime } = setup);
  }, 60_000);
  afterEach(async () => {
    await fixture?.stop();
    fixture = undefined;
  });
  afterAll(async () => {
    await setup?.close();
  });

  it('keeps an OAuth token the worker obtained out of every table, though the tool echoes it', async () => {
    fixture = await startOAuthFixture({ client: { id: 'robot', secret: 'robot-secret-1' } });
    const model = scriptedModel((request) => {
      const result = request.messages.find((message) => message.role === 'tool');
      return result === undefined ? { toolCalls: [{ id: 'w1', name: 'secure_whoami', arguments: {} }] } : { text: `saw: ${String(result.content)}` };
    }, { recordCalls: false });
    const agent = createAgent({ id: 'mcp_oauth', model, runtime, mcpServers: [{ name: 'secure', url: fixture.url, auth: { grant: 'client_credentials', clientId: 'robot', clientSecret: 'robot-secret-1' } }] });
    try {
      const result = await agent.run('Who am I?');
      expect(result.status).toBe('done');
      const token = fixture.issued[0] ?? '';
      expect(token).not.toBe('');
      // The tool did answer, redacted (the model saw it so): the search below looks at real content.
      expect(result.text).toContain('token [REDACTED]');
      const rows = await everyRow(pool);
      expect(rows).toContain(result.runId);
      expect(rows).not.toContain(token.slice(3));
      expect(rows).not.toContain('robot-secret-1');
    } finally {
      await agent.close();
    }
  }, 60_000);

  it('refuses a question the server asks during a durable call, saying why: the call ends with that error and the run goes on', async () => {
    fixture = await startOAuthFixture({ auth: false });
    const model = scriptedModel((request) => {
      const result = request.messages.find((message) => message.role === 'tool');
      return result === undefined ? { toolCalls: [{ id: 'a1', name: 'web_ask', arguments: { label: 'A' } }] } : { text: `after: ${String(result.content)}` };
    }, { recordCalls: false });
    const agent = createAgent({ id: 'mcp_ask', model, runtime, mcpServers: [{ name: 'web', url: fixture.url }] });
    try {
      const result = await agent.run('Ask me.');
      expect(result.status).toBe('done');
      expect(result.text).toMatch(/after: .*asked the user "Your name, for A\?" during a tool call of a durable \(PostgreSQL\) run, which cannot hold the call open/s);
      const journal = await runtime.journal(result.runId);
      expect(journal.filter((entry) => entry.event.type === 'human.awaiting')).toEqual([]);
    } finally {
      await agent.close();
    }
  }, 60_000);
});
