/**
 * The package as a user gets it from npm: `npm pack` builds `dist/` (ESM, declarations, source
 * maps), the tarball installs into a fresh project, plain `node` imports every entry point and
 * runs an agent, and TypeScript with `module: nodenext` typechecks a file that uses them.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));
const typesNode = (await import('../node_modules/@types/node/package.json', { with: { type: 'json' } })).default.version;
let project: string;
let tarball: string;

function run(command: string, args: readonly string[], cwd: string): string {
  return execFileSync(command, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, npm_config_audit: 'false', npm_config_fund: 'false' } });
}

/** The compiler's report on the consumer project: empty when it typechecks. */
function typecheck(): string {
  try {
    return run(process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', '.'], project);
  } catch (error) {
    return String((error as { stdout?: unknown }).stdout ?? error);
  }
}

beforeAll(() => {
  project = mkdtempSync(path.join(tmpdir(), 'actorloop-consumer-'));
  run('npm', ['pack', '--pack-destination', project], root);
  tarball = readdirSync(project).find((name) => name.endsWith('.tgz')) ?? '';
  writeFileSync(path.join(project, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
  // The registry cache from the repository's own install serves every dependency.
  run('npm', ['install', '--prefer-offline', `./${tarball}`, `@types/node@${typesNode}`], project);
}, 240_000);
// The consumer's node_modules holds two provider SDKs of thousands of files each: removing them is slow under load.
afterAll(() => rmSync(project, { recursive: true, force: true }), 120_000);

describe('the npm package', { timeout: 120_000 }, () => {
  it('holds the built JavaScript, declarations and source maps, and no sources or tests', () => {
    const listing = run('tar', ['-tzf', tarball], project).split('\n').filter((line) => line !== '');
    expect(listing).toContain('package/dist/src/index.js');
    expect(listing).toContain('package/dist/src/index.d.ts');
    expect(listing).toContain('package/dist/src/index.js.map');
    expect(listing).toContain('package/dist/machines/index.js');
    // The live view's diagrams ship with the package.
    expect(listing).toContain('package/visualizations/agent.svg');
    expect(listing).toContain('package/dist/src/cli/main.js');
    expect(listing.filter((file) => /^package\/(src|test|bench|machines)\//.test(file))).toEqual([]);
  });

  it('imports every entry point with plain node and runs an agent', () => {
    const script = `
      const { createAgent, defineTool } = await import('actorloop');
      const { ActorloopError } = await import('actorloop/errors');
      const { agentMachine } = await import('actorloop/machines');
      const { scriptedModel } = await import('actorloop/testing');
      const { traceToMermaid } = await import('actorloop/memory');
      const { definePrompt } = await import('actorloop/prompts');
      const { traceEvents } = await import('actorloop/telemetry');
      const { createPostgresRuntime } = await import('actorloop/postgres');
      const { createAgUiHandler } = await import('actorloop/web');
      const { z } = await import('zod');
      const add = defineTool({ name: 'add', description: 'Add', input: z.object({ a: z.number(), b: z.number() }), execute: ({ a, b }) => a + b });
      const model = scriptedModel([{ toolCalls: [{ name: 'add', arguments: { a: 1, b: 2 } }] }, { text: '3' }]);
      const agent = createAgent({ model, tools: [add] });
      const result = await agent.run('1 + 2?');
      const trace = await agent.traces.get(result.runId);
      console.log(JSON.stringify({ text: result.text, steps: trace.steps.length, chart: traceToMermaid(trace).startsWith('flowchart'), machine: agentMachine.id, errors: typeof ActorloopError, prompt: typeof definePrompt, telemetry: typeof traceEvents, postgres: typeof createPostgresRuntime, web: typeof createAgUiHandler }));
    `;
    const out = JSON.parse(run(process.execPath, ['--input-type=module', '-e', script], project).trim()) as Record<string, unknown>;
    expect(out).toEqual({ text: '3', steps: 4, chart: true, machine: 'agent', errors: 'function', prompt: 'function', telemetry: 'function', postgres: 'function', web: 'function' });
  });

  it('installs the actorloop command, which runs the demo agent', () => {
    const out = run(path.join(project, 'node_modules/.bin/actorloop'), ['run', 'What is the combined population of Tokyo and Paris?', '--store', path.join(project, 'store')], project);
    expect(out).toContain('answer');
    expect(run(path.join(project, 'node_modules/.bin/actorloop'), ['runs', '--json', '--store', path.join(project, 'store')], project)).toMatch(/"status": "done"/);
  });

  it('typechecks a file that uses it under module: nodenext, declarations included', { timeout: 150_000 }, () => {
    writeFileSync(
      path.join(project, 'use.ts'),
      `import { createAgent, type AgentHooks, type LoopResult } from 'actorloop';
import { HookError } from 'actorloop/errors';
import { scriptedModel } from 'actorloop/testing';
import { loadSkills, type Trace } from 'actorloop/memory';
import { createPostgresRuntime, runWorker, type PostgresRuntime } from 'actorloop/postgres';
import { createAgUiHandler, createAiSdkHandler, toNodeListener, type WebHandler } from 'actorloop/web';
const runtime: PostgresRuntime = createPostgresRuntime({ connectionString: 'postgres://app@127.0.0.1:5432/app' });
export const durable = () => [createAgent({ id: 'durable', model: scriptedModel([{ text: 'ok' }]), runtime }), runWorker({ runtime, concurrency: 2 })];
const hooks: AgentHooks = { beforeToolCall: (call) => (call.tool === 'shell' ? { kind: 'deny', reason: 'no shell' } : undefined) };
const agent = createAgent({ model: scriptedModel([{ text: 'ok' }]), hooks, memory: { skills: await loadSkills() } });
const result: LoopResult = await agent.run('hi');
const trace: Trace | undefined = await agent.traces.get(result.runId);
const web: WebHandler = createAgUiHandler(agent, { pollIntervalMs: 500 });
export const listener = toNodeListener(web);
export const chat: WebHandler = createAiSdkHandler(agent);
export const seen = [trace?.status, HookError.failed('onError', 'x').code];
`,
    );
    writeFileSync(
      path.join(project, 'tsconfig.json'),
      JSON.stringify({ compilerOptions: { module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022', strict: true, noEmit: true, skipLibCheck: false, types: ['node'] }, files: ['use.ts'] }),
    );
    expect(typecheck()).toBe('');
    // And the compiler catches misuse: the check is real.
    writeFileSync(path.join(project, 'use.ts'), `import { createAgent } from 'actorloop';\ncreateAgent({ model: 42 });\n`);
    expect(typecheck()).toMatch(/use\.ts.*error TS2322/);
  });
});
