import type { Agent, AgentRun } from '../../agent/types.ts';
import type { Inspector } from '../../inspect/index.ts';
import type { RunStore } from '../../persistence/fileStore.ts';
import { cliError, onePositional, parseCommand, positiveInt, usageError, type ParsedCommand } from '../args.ts';
import { defineAndPick, loadAgentsModule } from '../agentsModule.ts';
import { createDemoAgent, DEMO_TOOL_NAMES, isDemoAgentId } from '../demoAgent.ts';
import { DATABASE_FLAG, durableUrl } from '../durable.ts';
import { followRun, modeFor, type AgentCommandResult, type FollowOptions } from '../follow.ts';
import { openStore, requireRun } from '../store.ts';
import { continueDurable } from './durableRun.ts';
import { defined } from '../../core/defined.ts';

export type { AgentCommandResult } from '../follow.ts';

const MODULE_FLAGS = { agents: { type: 'string' }, agent: { type: 'string' } } as const;

function announce(real: boolean, agent: Agent, json: boolean): void {
  if (json) return;
  const line = real
    ? `model "${agent.model.name}" via ${agent.model.provider.name}`
    : 'no OPENAI_API_KEY / OPENAI_BASE_URL / OPENROUTER_API_KEY / ANTHROPIC_API_KEY set: using the scripted demo model (offline)';
  process.stderr.write(`${line}\n`);
}

function announceModule(agent: Agent, path: string, json: boolean): void {
  if (!json) process.stderr.write(`agent "${agent.id}" from ${path}: model "${agent.model.name}" via ${agent.model.provider.name}\n`);
}

function cleanupFor(agent: Agent, inspector: Inspector | undefined, parked: boolean): () => Promise<void> {
  return async () => {
    // Stopping a parked run would cancel it; leaving the process ends its lease, so it can be resumed.
    if (!parked) await agent.close();
    await inspector?.stop();
  };
}

/** With `--agents`, the demo agent's own flags mean nothing: say where those settings go instead. */
function refuseDemoFlags(parsed: ParsedCommand, flags: readonly string[]): void {
  const given = flags.find((flag) => parsed.string(flag) !== undefined || parsed.flag(flag));
  if (given !== undefined) throw usageError(`--${given} configures the demo agent; with --agents MODULE, set it in your module's createAgent config.`);
}

async function moduleAgent(path: string, store: RunStore, name: string | undefined): Promise<Agent> {
  return defineAndPick(await loadAgentsModule(path), path, undefined, { persistence: { store } }, name);
}

export async function runCommand(args: readonly string[]): Promise<AgentCommandResult> {
  const parsed = parseCommand(args, {
    'max-iterations': { type: 'string' },
    model: { type: 'string' },
    inspect: { type: 'boolean' },
    confirm: { type: 'string' },
    ...MODULE_FLAGS,
  });
  const task = onePositional(parsed, 'task', 'run');
  const modulePath = parsed.string('agents');
  if (modulePath !== undefined) return runModuleAgent(parsed, modulePath, task);
  if (parsed.string('agent') !== undefined) throw usageError('--agent NAME picks an agent of --agents MODULE: give the module too.');
  const maxText = parsed.string('max-iterations');
  const confirm = parsed.string('confirm')?.split(',').map((name) => name.trim()).filter((name) => name !== '');
  const unknownTool = confirm?.find((name) => !DEMO_TOOL_NAMES.includes(name));
  if (unknownTool !== undefined) throw usageError(`--confirm: no tool "${unknownTool}"; the demo agent has ${DEMO_TOOL_NAMES.join(', ')}.`);
  const { json, store: dir } = parsed.common;
  // Loaded only when asked for, so other runs do not load the relay server and its dependencies.
  const inspector = parsed.flag('inspect') ? await (await import('../../inspect/index.ts')).createInspector({ page: 'local' }) : undefined;
  if (inspector !== undefined) process.stderr.write(`inspector: ${inspector.url}\n`);
  const modelName = parsed.string('model');
  const { agent, real } = createDemoAgent({
    store: openStore(dir, false),
    ...(maxText === undefined ? {} : { maxIterations: positiveInt(maxText, '--max-iterations') }),
    ...defined({ modelName, confirm, inspector }),
  });
  announce(real, agent, json);
  const run = agent.start(task);
  inspector?.follow(run);
  const report = await followRun(run, { mode: modeFor(json) });
  return { exitCode: report.exitCode, cleanup: cleanupFor(agent, inspector, report.outcome.kind === 'waiting') };
}

async function runModuleAgent(parsed: ParsedCommand, path: string, task: string): Promise<AgentCommandResult> {
  refuseDemoFlags(parsed, ['max-iterations', 'model', 'confirm', 'inspect']);
  const { json, store: dir } = parsed.common;
  const store = openStore(dir, false);
  const agent = await moduleAgent(path, store, parsed.string('agent'));
  announceModule(agent, path, json);
  const run = agent.start(task);
  const report = await followRun(run, { mode: modeFor(json) });
  // A module that ignores the store it is given keeps its runs elsewhere (or nowhere): runs, replay and resume would not find this one.
  if ((await store.getRun(run.runId)) === null) {
    process.stderr.write(`run ${run.runId} is not in ${store.dir}: spread the second argument of your module's function into createAgent's config to keep its runs there.\n`);
  }
  return { exitCode: report.exitCode, cleanup: cleanupFor(agent, undefined, report.outcome.kind === 'waiting') };
}

export async function continueCommand(command: 'resume' | 'approve' | 'reject', args: readonly string[]): Promise<AgentCommandResult> {
  const parsed = parseCommand(args, {
    model: { type: 'string' },
    ...MODULE_FLAGS,
    ...DATABASE_FLAG,
    ...(command === 'reject' ? { reason: { type: 'string' } } : {}),
    ...(command === 'approve' ? { answer: { type: 'string' } } : {}),
  });
  const runId = onePositional(parsed, 'runId', command);
  const url = durableUrl(parsed);
  if (url !== undefined && parsed.string('answer') !== undefined) {
    throw cliError("--answer is for runs in the file store: a durable run's MCP servers run in its workers, which do not take questions to a human.");
  }
  if (url !== undefined) return continueDurable(command, parsed, runId, url);
  const { json, store: dir } = parsed.common;
  const store = openStore(dir, true);
  const meta = await requireRun(store, runId);
  if (command !== 'resume' && meta.status !== 'awaiting_human') {
    throw cliError(`Run ${runId} is not waiting for a human (status ${meta.status}): there is nothing to ${command}.`);
  }
  const reason = parsed.string('reason');
  const answerText = parsed.string('answer');
  const answer = answerText === undefined ? undefined : parseAnswer(answerText);
  const decide: FollowOptions['decide'] =
    command === 'approve'
      ? answerApproval(answer)
      : command === 'reject'
        ? (run) => run.reject(reason ?? 'Rejected from the command line.')
        : undefined;
  const modulePath = parsed.string('agents');
  let agent: Agent;
  if (modulePath !== undefined) {
    refuseDemoFlags(parsed, ['model']);
    agent = await moduleAgent(modulePath, store, parsed.string('agent') ?? meta.agentId);
    announceModule(agent, modulePath, json);
  } else {
    // The demo agent's tools are not the ones a user's agent called: continuing its run with them would go wrong.
    if (!isDemoAgentId(meta.agentId)) throw cliError(`Run ${runId} was made by agent "${meta.agentId}", not the demo agent: give the module that defines it with --agents MODULE.`);
    const modelName = parsed.string('model');
    const demo = createDemoAgent({ store, ...defined({ modelName }) });
    agent = demo.agent;
    announce(demo.real, agent, json);
  }
  const report = await followRun(agent.resume(runId), { mode: modeFor(json), ...defined({ decide }) });
  return { exitCode: report.exitCode, cleanup: cleanupFor(agent, undefined, report.outcome.kind === 'waiting') };
}

/** Anything but an object is refused before the run is touched. */
function parseAnswer(text: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw cliError(`--answer is not JSON (${error instanceof Error ? error.message : String(error)}): give the answer as an object, e.g. --answer '{"name":"Ada"}'.`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw cliError(`--answer must be a JSON object of the form's fields, e.g. --answer '{"name":"Ada"}'.`);
  return value as Record<string, unknown>;
}

function waitKind(run: AgentRun): string | undefined {
  let kind: string | undefined;
  // events$ replays the journal synchronously on subscribe.
  run.events$
    .subscribe(({ event }) => {
      if (event.type === 'human.awaiting') kind = event.kind;
      else if (event.type === 'human.decided') kind = undefined;
    })
    .unsubscribe();
  return kind;
}

/** With an answer, a resumed run may first wait for the interrupted call that asked the question to be approved again. */
function answerApproval(answer: Record<string, unknown> | undefined): FollowOptions['decide'] {
  if (answer === undefined) return (run) => run.approve();
  return (run) => {
    if (waitKind(run) === 'elicitation') {
      run.approve(undefined, { answer });
      return undefined;
    }
    run.approve();
    return 'again';
  };
}
