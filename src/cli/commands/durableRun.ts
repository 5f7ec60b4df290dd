// Workers advance durable runs: a decision only goes to the runtime, while `resume` follows the run
// through its agent (from the module the workers load), which wakes a run left behind.
import { isFinalStatus } from '../../persistence/records.ts';
import { cliError, usageError, type ParsedCommand } from '../args.ts';
import { defineAndPick, loadAgentsModule } from '../agentsModule.ts';
import { openRuntime, requireDurableRun } from '../durable.ts';
import { followRun, modeFor, type AgentCommandResult } from '../follow.ts';

export async function continueDurable(command: 'resume' | 'approve' | 'reject', parsed: ParsedCommand, runId: string, url: string): Promise<AgentCommandResult> {
  if (parsed.string('model') !== undefined) throw usageError('--model configures the demo agent; a durable run goes on with its own agent.');
  const { json } = parsed.common;
  const runtime = openRuntime(url);
  const close = () => runtime.close();
  try {
    const info = await requireDurableRun(runtime, runId);
    if (command !== 'resume') {
      if (info.status !== 'awaiting_human') throw cliError(`Run ${runId} is not waiting for a human (status ${info.status}): there is nothing to ${command}.`);
      const reason = parsed.string('reason') ?? 'Rejected from the command line.';
      if (command === 'approve') await runtime.approve(runId);
      else await runtime.reject(runId, reason);
      const decision = command === 'approve' ? 'approved' : 'rejected';
      if (json) process.stdout.write(`${JSON.stringify({ runId, decision, ...(command === 'reject' ? { reason } : {}) })}\n`);
      else process.stdout.write(`${decision} the calls run ${runId} waits on; the workers take it on from here. Follow it with: actorloop replay ${runId} --follow --database-url …\n`);
      return { exitCode: 0, cleanup: close };
    }
    if (isFinalStatus(info.status)) throw cliError(`Run ${runId} already ended (${info.status}); start a new run instead.`);
    const path = parsed.string('agents');
    if (path === undefined) {
      throw usageError(`actorloop resume of a durable run needs --agents MODULE: the module your workers load, which defines agent "${info.agentId}".`);
    }
    const define = await loadAgentsModule(path);
    const agent = await defineAndPick(define, path, runtime, { runtime }, parsed.string('agent') ?? info.agentId);
    if (!json) process.stderr.write(`run ${runId} goes on in your workers (actorloop worker --agents ${path}); following it here until it ends or waits for a human.\n`);
    const report = await followRun(agent.resume(runId), { mode: modeFor(json) });
    // Closing the runtime leaves the run to the workers, whether it ended or waits.
    return { exitCode: report.exitCode, cleanup: close };
  } catch (error) {
    await close();
    throw error;
  }
}
