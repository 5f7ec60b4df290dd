/**
 * Contender (c): actorloop through its front door, every default feature on — the permissive
 * gate, a circuit breaker per tool, the event bus with a live `events$` subscriber, and the
 * in-memory journal. Only the iteration limit is raised so react-100 can finish.
 */
import { createAgent, type AgentConfig } from '../../src/agent/createAgent.ts';
import { echoTool, expectAnswer, reactModel } from './react.ts';
import type { Contender } from './types.ts';

/** Extra agent configuration a variant adds (e.g. a file journal). */
export type AgentExtras = () => Partial<AgentConfig>;

/**
 * Build an actorloop contender; `extras` is called once per created agent.
 *
 * @example
 * ```ts
 * const withDefaults = actorloopContender('actorloop', '(c) actorloop');
 * await withDefaults.create({ n: 10, delayMs: 0 })();
 * ```
 */
export function actorloopContender(id: string, label: string, extras: AgentExtras = () => ({})): Contender {
  return {
    id,
    label,
    create(config) {
      const agent = createAgent({
        model: reactModel(config),
        tools: [echoTool],
        limits: { maxIterations: config.n + 1 },
        ...extras(),
      });
      // A live subscriber: events are published to RxJS, not only journaled.
      let seen = 0;
      agent.events$.subscribe(() => {
        seen++;
      });
      return async () => {
        const before = seen;
        const result = await agent.run('Count with the echo tool.');
        expectAnswer(result.text, label);
        if (seen === before) throw new Error(`${label}: the events$ subscriber saw no events.`);
      };
    },
  };
}

/** (c) actorloop with every default feature on. */
export const actorloop: Contender = actorloopContender('actorloop', '(c) actorloop, all defaults');
