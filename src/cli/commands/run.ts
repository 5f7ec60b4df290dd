/**
 * `actorloop run`, `resume`, `approve` and `reject`: start or continue a run of the demo agent
 * in the store, and follow it to its end or to a wait for a human.
 */
import type { Agent } from '../../agent/types.ts';
import type { Inspector } from '../../inspect/index.ts';
import { CliError, onePositional, parseCommand, positiveInt, UsageError } from '../args.ts';
import { createDemoAgent, DEMO_TOOL_NAMES } from '../demoAgent.ts';
import { followRun, type FollowOptions } from '../follow.ts';
import type { ReporterMode } from '../liveView.ts';
import { openStore, requireRun } from '../store.ts';

/** What a command that ran an agent leaves: its exit code, and the cleanup to do before the process exits. */
export interface AgentCommandResult {
  readonly exitCode: number;
  /** Stop the agent and the inspector, unless the run is parked for a human (stopping would cancel it). */
  readonly cleanup: () => Promise<void>;
}

function modeFor(json: boolean): ReporterMode {
  return json ? 'json' : process.stdout.isTTY === true ? 'tty' : 'plain';
}

function announce(real: boolean, agent: Agent, json: boolean): void {
  if (json) return;
  const line = real
    ? `model "${agent.model.name}" via ${agent.model.provider.name}`
    : 'no OPENAI_API_KEY / OPENAI_BASE_URL / OPENROUTER_API_KEY / ANTHROPIC_API_KEY set: using the scripted demo model (offline)';
  process.stderr.write(`${line}\n`);
}

function cleanupFor(agent: Agent, inspector: Inspector | undefined, parked: boolean): () => Promise<void> {
  return async () => {
    // Stopping a parked run would cancel it; leaving the process ends its lease, so it can be resumed.
    if (!parked) await agent.close();
    await inspector?.stop();
  };
}

/**
 * `actorloop run "<task>"`.
 *
 * @example
 * ```ts
 * const { exitCode } = await runCommand(['What is 2 + 2?', '--json']);
 * ```
 */
export async function runCommand(args: readonly string[]): Promise<AgentCommandResult> {
  const parsed = parseCommand(args, {
    'max-iterations': { type: 'string' },
    model: { type: 'string' },
    inspect: { type: 'boolean' },
    confirm: { type: 'string' },
  });
  const task = onePositional(parsed, 'task', 'run');
  const maxText = parsed.string('max-iterations');
  const confirm = parsed.string('confirm')?.split(',').map((name) => name.trim()).filter((name) => name !== '');
  const unknownTool = confirm?.find((name) => !DEMO_TOOL_NAMES.includes(name));
  if (unknownTool !== undefined) throw new UsageError(`--confirm: no tool "${unknownTool}"; the demo agent has ${DEMO_TOOL_NAMES.join(', ')}.`);
  const { json, store: dir } = parsed.common;
  // Loaded only when asked for: the relay server and its dependencies cost every other run start-up time.
  const inspector = parsed.flag('inspect') ? await (await import('../../inspect/index.ts')).createInspector({ page: 'local' }) : undefined;
  if (inspector !== undefined) process.stderr.write(`inspector: ${inspector.url}\n`);
  const modelName = parsed.string('model');
  const { agent, real } = createDemoAgent({
    store: openStore(dir, false),
    ...(maxText === undefined ? {} : { maxIterations: positiveInt(maxText, '--max-iterations') }),
    ...(modelName === undefined ? {} : { modelName }),
    ...(confirm === undefined ? {} : { confirm }),
    ...(inspector === undefined ? {} : { inspector }),
  });
  announce(real, agent, json);
  const report = await followRun(agent.start(task), { mode: modeFor(json) });
  return { exitCode: report.exitCode, cleanup: cleanupFor(agent, inspector, report.outcome.kind === 'waiting') };
}

/**
 * `actorloop resume <runId>`, `approve <runId>` and `reject <runId> --reason …`.
 *
 * @example
 * ```ts
 * await continueCommand('approve', ['run_123']);
 * ```
 */
export async function continueCommand(command: 'resume' | 'approve' | 'reject', args: readonly string[]): Promise<AgentCommandResult> {
  const parsed = parseCommand(args, {
    model: { type: 'string' },
    ...(command === 'reject' ? { reason: { type: 'string' } } : {}),
  });
  const runId = onePositional(parsed, 'runId', command);
  const { json, store: dir } = parsed.common;
  const store = openStore(dir, true);
  const meta = await requireRun(store, runId);
  if (command !== 'resume' && meta.status !== 'awaiting_human') {
    throw new CliError(`Run ${runId} is not waiting for a human (status ${meta.status}): there is nothing to ${command}.`);
  }
  const reason = parsed.string('reason');
  const decide: FollowOptions['decide'] =
    command === 'approve' ? (run) => run.approve() : command === 'reject' ? (run) => run.reject(reason ?? 'Rejected from the command line.') : undefined;
  const modelName = parsed.string('model');
  const { agent, real } = createDemoAgent({ store, ...(modelName === undefined ? {} : { modelName }) });
  announce(real, agent, json);
  const report = await followRun(agent.resume(runId), { mode: modeFor(json), ...(decide === undefined ? {} : { decide }) });
  return { exitCode: report.exitCode, cleanup: cleanupFor(agent, undefined, report.outcome.kind === 'waiting') };
}
