/**
 * `actorloop approve <runId> --answer '{…}'`: a run of a user's agent whose MCP server asked the
 * user a question stops there, showing the question; approve with an answer resumes it in a new
 * process (the interrupted call is approved again, the server asks again) and answers it.
 */
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, tempDir } from './runCli.ts';

const AGENTS = fileURLToPath(new URL('./fixtures/askingAgents.ts', import.meta.url));
const TIMEOUT = 200_000;

let temp: ReturnType<typeof tempDir>;
beforeAll(() => {
  temp = tempDir();
});
afterAll(() => temp.remove());

describe('actorloop approve --answer', { timeout: TIMEOUT }, () => {
  it("shows an MCP server's question, refuses an answer that is not a JSON object, and answers it with one that is", async () => {
    const started = await runCli(['run', '--agents', AGENTS, 'ask me'], temp.dir);
    expect(started.code).toBe(0);
    expect(started.stdout).toContain('MCP server ctl asks: Who are you? — answer with: {"type":"object"');
    const runId = /run (\S+) is waiting for a human/.exec(started.stdout)?.[1];
    expect(runId).toBeDefined();

    const notJson = await runCli(['approve', runId!, '--agents', AGENTS, '--answer', '[1]'], temp.dir);
    expect(notJson.code).toBe(1);
    expect(notJson.stderr).toContain('--answer must be a JSON object');

    const answered = await runCli(['approve', runId!, '--agents', AGENTS, '--answer', '{"name":"Ada","age":36}'], temp.dir);
    expect(answered.code).toBe(0);
    expect(answered.stdout).toContain('human answered: {"name":"Ada","age":36,"team":"blue"}');
    expect(answered.stdout).toContain('answer: told:');
    expect(answered.stdout).toContain('"action":"accept"');
  }, TIMEOUT);
});
