/**
 * Errors of the agent system: addressing an agent that is not there, an ask that got no answer
 * in time, and an ask whose agent was stopped or cancelled before it answered.
 */
import type { LoopResult } from '../core/run.ts';
import { ActorloopError, type ActorloopErrorOptions } from '../core/errors.ts';
import type { CodesOf } from '../core/errorCodes.ts';

interface AgentSystemErrorOptions extends ActorloopErrorOptions {
  readonly agentId: string;
  readonly known?: readonly string[];
  readonly timeoutMs?: number;
  readonly correlationId?: string;
  readonly result?: LoopResult;
}

/**
 * The agent system could not deliver or answer; `code` says why, `agentId` names the agent:
 * - `agent_not_found`: no agent with this id is live (never spawned, or already stopped);
 *   `known` lists the ids that were;
 * - `ask_timeout`: an ask (or a delegation) got no answer within its `timeoutMs`; the task was
 *   dropped from the queue if it had not started, its run cancelled if it had (then `result` is
 *   its cancelled `LoopResult`);
 * - `agent_stopped`: the asked agent was stopped (by `stop(id)` on it or an ancestor, or
 *   `stopAll()`) before it answered; its run was cancelled;
 * - `ask_cancelled`: the asked task was cancelled through its host (`agent.cancel`) before it
 *   started, so there is no run result.
 *
 * @example
 * ```ts
 * try { await system.ask('researcher', 'Find the paper', { timeoutMs: 30_000 }); }
 * catch (e) { if (e instanceof AgentSystemError && e.code === 'ask_timeout') console.log(e.agentId, e.timeoutMs, e.result?.status); }
 * ```
 */
export class AgentSystemError extends ActorloopError {
  declare readonly code: CodesOf<'AgentSystemError'>;
  readonly agentId: string;
  /** For `agent_not_found`: the ids that were live when the lookup failed. */
  readonly known: readonly string[] | undefined;
  /** For `ask_timeout`: the ask's timeout. */
  readonly timeoutMs: number | undefined;
  /** For `ask_timeout`: the ask's correlation id. */
  readonly correlationId: string | undefined;
  /** For `ask_timeout`: the cancelled run's result, when the task had started. */
  readonly result: LoopResult | undefined;

  private constructor(code: CodesOf<'AgentSystemError'>, message: string, options: AgentSystemErrorOptions) {
    super(code, message, options);
    this.agentId = options.agentId;
    this.known = options.known;
    this.timeoutMs = options.timeoutMs;
    this.correlationId = options.correlationId;
    this.result = options.result;
  }

  static notFound(agentId: string, known: readonly string[], options: ActorloopErrorOptions = {}): AgentSystemError {
    const list = known.length === 0 ? 'none' : known.map((id) => JSON.stringify(id)).join(', ');
    return new AgentSystemError(
      'agent_not_found',
      `No agent ${JSON.stringify(agentId)} in this system (live agents: ${list}). Spawn it first with system.spawn(id, config), or check the id.`,
      { ...options, agentId, known },
    );
  }

  static askTimeout(details: { agentId: string; timeoutMs: number; correlationId: string; runId: string; result?: LoopResult }): AgentSystemError {
    const what = details.result === undefined ? 'it was still queued and has been dropped' : `its run ${details.runId} was cancelled`;
    return new AgentSystemError(
      'ask_timeout',
      `Agent ${JSON.stringify(details.agentId)} did not answer within ${details.timeoutMs} ms; ${what}. ` +
        'Raise timeoutMs, give the agent a smaller task, or raise its concurrency if asks wait in its queue.',
      details,
    );
  }

  static stopped(agentId: string, options: ActorloopErrorOptions = {}): AgentSystemError {
    return new AgentSystemError(
      'agent_stopped',
      `Agent ${JSON.stringify(agentId)} was stopped before it answered; its run was cancelled. Ask before stopping it, or spawn it again.`,
      { ...options, agentId },
    );
  }

  static askCancelled(agentId: string, reason: string | undefined, options: ActorloopErrorOptions = {}): AgentSystemError {
    return new AgentSystemError(
      'ask_cancelled',
      `The ask to agent ${JSON.stringify(agentId)} was cancelled before it started${reason === undefined ? '' : ` (${reason})`}. Ask again if the answer is still needed.`,
      { ...options, agentId },
    );
  }
}
