/**
 * Errors of the agent system: addressing an agent that is not there, an ask that got no answer
 * in time, and an ask whose agent was stopped before it answered.
 */
import type { LoopResult } from '../core/run.ts';
import { ActorloopError, type ActorloopErrorOptions } from '../core/errors.ts';

/**
 * No agent with this id is live in the system (never spawned, or already stopped).
 *
 * @example
 * ```ts
 * try { system.tell('writer', 'Draft the intro'); }
 * catch (e) { if (e instanceof AgentNotFoundError) console.log(e.agentId, e.known); }
 * ```
 */
export class AgentNotFoundError extends ActorloopError {
  readonly code = 'agent_not_found' as const;
  readonly blame = 'user' as const;
  readonly agentId: string;
  /** The ids that were live when the lookup failed. */
  readonly known: readonly string[];

  constructor(agentId: string, known: readonly string[], options?: ActorloopErrorOptions) {
    const list = known.length === 0 ? 'none' : known.map((id) => JSON.stringify(id)).join(', ');
    super(`No agent ${JSON.stringify(agentId)} in this system (live agents: ${list}). Spawn it first with system.spawn(id, config), or check the id.`, options);
    this.agentId = agentId;
    this.known = known;
  }
}

/**
 * An ask (or a delegation) got no answer within its `timeoutMs`. The asked task was cancelled:
 * dropped from the queue if it had not started, its run cancelled (in-flight model and tool calls
 * aborted) if it had. When the run had started, `result` is its cancelled `LoopResult`.
 *
 * @example
 * ```ts
 * try { await system.ask('researcher', 'Find the paper', { timeoutMs: 30_000 }); }
 * catch (e) { if (e instanceof AskTimeoutError) console.log(e.agentId, e.timeoutMs, e.result?.status); }
 * ```
 */
export class AskTimeoutError extends ActorloopError {
  readonly code = 'ask_timeout' as const;
  readonly blame = 'runtime' as const;
  readonly agentId: string;
  readonly timeoutMs: number;
  readonly correlationId: string;
  /** The cancelled run's result, when the task had started. */
  readonly result: LoopResult | undefined;

  constructor(details: { agentId: string; timeoutMs: number; correlationId: string; runId: string; result?: LoopResult }) {
    const what = details.result === undefined ? 'it was still queued and has been dropped' : `its run ${details.runId} was cancelled`;
    super(
      `Agent ${JSON.stringify(details.agentId)} did not answer within ${details.timeoutMs} ms; ${what}. ` +
        'Raise timeoutMs, give the agent a smaller task, or raise its concurrency if asks wait in its queue.',
      { runId: details.runId },
    );
    this.agentId = details.agentId;
    this.timeoutMs = details.timeoutMs;
    this.correlationId = details.correlationId;
    this.result = details.result;
  }
}

/**
 * The asked agent was stopped (by `stop(id)` on it or an ancestor, or `stopAll()`) before it
 * answered; its run was cancelled.
 *
 * @example
 * ```ts
 * const answer = system.ask('worker', 'Summarise');
 * system.stop('worker');
 * await answer.catch((e) => e instanceof AgentStoppedError); // true
 * ```
 */
export class AgentStoppedError extends ActorloopError {
  readonly code = 'agent_stopped' as const;
  readonly blame = 'user' as const;
  readonly agentId: string;

  constructor(agentId: string, options?: ActorloopErrorOptions) {
    super(`Agent ${JSON.stringify(agentId)} was stopped before it answered; its run was cancelled. Ask before stopping it, or spawn it again.`, options);
    this.agentId = agentId;
  }
}

/**
 * The asked task was cancelled through its host (`agent.cancel` sent to the agent's actor) before
 * it started, so there is no run result to report.
 *
 * @example
 * ```ts
 * system.get('worker').actor.send({ type: 'agent.cancel', taskId: correlationId, reason: 'superseded' });
 * ```
 */
export class AskCancelledError extends ActorloopError {
  readonly code = 'ask_cancelled' as const;
  readonly blame = 'user' as const;
  readonly agentId: string;

  constructor(agentId: string, reason: string | undefined, options?: ActorloopErrorOptions) {
    super(`The ask to agent ${JSON.stringify(agentId)} was cancelled before it started${reason === undefined ? '' : ` (${reason})`}. Ask again if the answer is still needed.`, options);
    this.agentId = agentId;
  }
}
