/**
 * An MCP server's question (elicitation) as a human turn of the run: the run waits in
 * `awaitingHuman` with the server's message and form; `approve` carries the answer (checked
 * against the form, defaults filled in), `reject` declines, a cancel cancels. The fixture server
 * is real (official SDK over stdio) and notes every answer it receives.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createAgent } from '../../src/agent/createAgent.ts';
import type { AgentRun } from '../../src/agent/types.ts';
import type { LoopEvent } from '../../src/core/loopEvent.ts';
import { scriptedModel } from '../../src/testing/index.ts';
import { controlled, toolResults } from './support.ts';

const SLOW = 60_000;
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'actorloop-elicit-'));
  dirs.push(dir);
  return dir;
}
const answersIn = (file: string): unknown[] => (existsSync(file) ? readFileSync(file, 'utf8').trim().split('\n').filter(Boolean).map((line) => JSON.parse(line) as unknown) : []);

/** Resolves with the `human.awaiting` event of the run's first question. */
function question(run: AgentRun): Promise<Extract<LoopEvent, { type: 'human.awaiting' }>> {
  return new Promise((resolve) => {
    const subscription = run.events$.subscribe(({ event }) => {
      if (event.type === 'human.awaiting' && event.kind === 'elicitation') {
        queueMicrotask(() => subscription.unsubscribe());
        resolve(event);
      }
    });
  });
}

function askingAgent(marker: string) {
  // Each run asks once, then answers: several runs share the agent.
  const model = scriptedModel((request) => (request.messages.some((m) => m.role === 'tool') ? { text: 'done' } : { toolCalls: [{ name: 'ctl_ask', arguments: {} }] }));
  const agent = createAgent({ model, mcpServers: [controlled('ctl', undefined, { MARKER_FILE: marker })] });
  return { model, agent };
}

describe('elicitation', () => {
  it(
    "waits in awaitingHuman with the server's question; a bad answer is refused and the run still waits; a good one reaches the server with its defaults",
    async () => {
      const marker = join(tempDir(), 'answers');
      const { model, agent } = askingAgent(marker);
      try {
        const run = agent.start('ask me');
        const asked = await question(run);
        expect(asked.question).toEqual({ server: 'ctl', message: 'Who are you?', schema: expect.objectContaining({ required: ['name', 'age'] }) });
        expect(run.phase()).toBe('awaitingHuman');

        let refused: unknown;
        try {
          run.approve(undefined, { answer: { name: 'Ada', age: 'old' } });
        } catch (error) {
          refused = error;
        }
        expect(refused).toMatchObject({ code: 'mcp_answer_invalid' });
        expect((refused as Error).message).toMatch(/age: .*still waiting/);
        expect(run.phase()).toBe('awaitingHuman');

        run.approve(undefined, { answer: { name: 'Ada', age: 36 } });
        const result = await run.result;
        expect(result.text).toBe('done');
        const sent = { action: 'accept', content: { name: 'Ada', age: 36, team: 'blue' } };
        expect(answersIn(marker)).toEqual([sent]);
        expect(JSON.parse(toolResults(model.calls[1])[0]?.content ?? '{}')).toEqual(sent);
        const decided = agent.journal.entries(run.runId).map((entry) => entry.event).filter((event) => event.type === 'human.decided');
        expect(decided).toEqual([expect.objectContaining({ kind: 'elicitation', decision: 'approve', answer: sent.content })]);
      } finally {
        await agent.close();
      }
    },
    SLOW,
  );

  it(
    'sends decline when the human rejects, and cancel when the run is cancelled',
    async () => {
      const marker = join(tempDir(), 'answers');
      const { agent } = askingAgent(marker);
      try {
        const declined = agent.start('ask me');
        await question(declined);
        declined.reject('not telling');
        expect((await declined.settled).status).toBe('done');

        const cancelled = agent.start('ask me');
        await question(cancelled);
        cancelled.cancel('enough');
        expect((await cancelled.settled).status).toBe('cancelled');
        // The server hears of the cancel before the agent closes it.
        await expect.poll(() => answersIn(marker).length, { timeout: 10_000 }).toBe(2);
        expect(answersIn(marker)).toEqual([{ action: 'decline' }, { action: 'cancel' }]);
      } finally {
        await agent.close();
      }
    },
    SLOW,
  );

  it(
    'is withdrawn when the call that asked it times out: the server gets cancel and the run moves on',
    async () => {
      const marker = join(tempDir(), 'answers');
      const model = scriptedModel((request) => (request.messages.some((m) => m.role === 'tool') ? { text: 'gave up' } : { toolCalls: [{ name: 'ctl_ask', arguments: {} }] }));
      const agent = createAgent({ model, mcpServers: [controlled('ctl', undefined, { MARKER_FILE: marker })], resilience: { tools: { timeoutMs: 5_000 } } });
      try {
        const run = agent.start('ask me');
        await question(run);
        const result = await run.result;
        expect(result.text).toBe('gave up');
        const events = agent.journal.entries(run.runId).map((entry) => entry.event);
        const withdrawn = events.findIndex((event) => event.type === 'human.decided' && event.kind === 'elicitation');
        expect(withdrawn).toBeGreaterThan(-1);
        expect(withdrawn).toBeLessThan(events.findIndex((event) => event.type === 'observations.collected'));
        await expect.poll(() => answersIn(marker), { timeout: 10_000 }).toEqual([{ action: 'cancel' }]);
      } finally {
        await agent.close();
      }
    },
    SLOW,
  );

  it(
    'is answered after a SIGKILL and resume: the re-made call asks again and the server gets the answer once',
    () => {
      const dir = tempDir();
      const env = { ...process.env, STORE_DIR: join(dir, 'store'), RUN_ID: 'run_e', MARKER_FILE: join(dir, 'answers'), ANSWER: '{"name":"Grace","age":85}' };
      const root = resolve(import.meta.dirname, '../..');
      const fixture = join(import.meta.dirname, 'fixtures/elicitingAgent.ts');
      const child = (mode: string) => spawnSync(process.execPath, ['--import', 'tsx', fixture], { cwd: root, env: { ...env, MODE: mode }, encoding: 'utf8', timeout: 50_000 });

      const killed = child('start');
      expect(killed.signal).toBe('SIGKILL');
      expect(killed.stdout).toContain('{"awaiting":"elicitation"}');
      expect(answersIn(env.MARKER_FILE)).toEqual([]);

      const resumed = child('resume');
      const lines = resumed.stdout.split('\n').filter((line) => line.startsWith('{')).map((line) => JSON.parse(line) as Record<string, unknown>);
      // The call was not idempotent: a human approved making it again, then answered its question.
      expect(lines.map((line) => line['awaiting'] ?? line['status'])).toEqual(['escalation', 'elicitation', 'done']);
      const sent = { action: 'accept', content: { name: 'Grace', age: 85, team: 'blue' } };
      expect(answersIn(env.MARKER_FILE)).toEqual([sent]);
      expect(String(lines.at(-1)?.['text'])).toContain(JSON.stringify(sent));
      // The journal holds what the resumed run did, none of it swallowed as a replayed duplicate:
      // the question's wait and answer before the crash are the runtime's, not the machine's.
      const journal = readFileSync(join(env.STORE_DIR, 'runs/run_e.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as { kind: string; events?: { type: string; phase?: string; kind?: string }[] })
        .flatMap((record) => (record.kind === 'journal' ? (record.events ?? []) : []));
      const afterResume = journal.slice(journal.findIndex((event) => event.type === 'run.resumed'));
      expect(afterResume.filter((event) => event.type === 'phase.entered' && event.phase === 'awaitingHuman')).toHaveLength(1);
      expect(afterResume.filter((event) => event.type === 'human.awaiting').map((event) => event.kind)).toEqual(['escalation', 'elicitation']);
    },
    SLOW * 2,
  );
});
