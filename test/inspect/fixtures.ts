/**
 * Shared fixtures of the inspection tests: a real agent (scripted model, one tool) and a plain
 * WebSocket client that collects what the inspector relay sends.
 */
import WebSocket from 'ws';
import { z } from 'zod';
import type { InspectionEvent, Observer } from 'xstate';
import { createAgent, type Agent } from '../../src/agent/createAgent.ts';
import { defineTool } from '../../src/tools/defineTool.ts';
import { scriptedModel, type ScriptStep } from '../../src/testing/index.ts';

export const CANARY = 'sk-canary-0123456789abcdef';

export const echo = defineTool({
  name: 'echo',
  description: 'Repeat the text back',
  input: z.object({ text: z.string() }),
  execute: ({ text }) => `echo: ${text}`,
});

/** An agent that calls `echo` once and then answers (or follows `steps`). */
export function echoAgent(inspect: Observer<InspectionEvent>, options: { system?: string; steps?: ScriptStep[] } = {}): Agent {
  const steps = options.steps ?? [{ toolCalls: [{ name: 'echo', arguments: { text: 'hello' } }] }, { text: 'done' }];
  return createAgent({
    id: 'agent_inspect',
    model: scriptedModel(steps),
    tools: [echo],
    observe: { inspect },
    ...(options.system === undefined ? {} : { system: options.system }),
  });
}

/** A plain WebSocket client (no Stately code) that keeps every text message. */
export interface Collector {
  readonly messages: string[];
  readonly parsed: () => Array<Record<string, unknown>>;
  /** Resolves once a message satisfies `predicate` (checks those already received too). */
  waitFor(predicate: (message: Record<string, unknown>) => boolean, timeoutMs?: number): Promise<void>;
  readonly closed: Promise<number>;
  close(): void;
}

export async function connect(url: string, headers: Record<string, string> = {}): Promise<Collector> {
  const socket = new WebSocket(url, { headers });
  const messages: string[] = [];
  const waiters = new Set<() => void>();
  socket.on('message', (data) => {
    messages.push(String(data));
    for (const wake of waiters) wake();
  });
  const closed = new Promise<number>((resolve) => socket.once('close', (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('error', reject);
  });
  const parsed = () => messages.map((m) => JSON.parse(m) as Record<string, unknown>);
  return {
    messages,
    parsed,
    closed,
    close: () => socket.close(),
    waitFor(predicate, timeoutMs = 5000) {
      return new Promise<void>((resolve, reject) => {
        const check = () => {
          if (parsed().some(predicate)) {
            clearTimeout(timer);
            waiters.delete(check);
            resolve();
          }
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`No matching inspector message within ${timeoutMs} ms (got ${messages.length}).`));
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
  };
}

/** Handles of TCP servers and sockets open in this process right now. */
export function tcpHandles(): number {
  return process.getActiveResourcesInfo().filter((name) => name.startsWith('TCP')).length;
}
