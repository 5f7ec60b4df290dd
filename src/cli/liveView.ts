import { Writable } from 'node:stream';
import { createLogUpdate } from 'log-update';
import type { JournalEntry } from '../core/loopEvent.ts';
import { entryLine, formatCost, shorten } from './format.ts';

export interface RunReporter {
  entry(entry: JournalEntry): void;
  close(): void;
}

export type ReporterMode = 'json' | 'tty' | 'plain';

export function createReporter(mode: ReporterMode, out: NodeJS.WriteStream): RunReporter {
  if (mode === 'json') {
    return { entry: (entry) => void out.write(`${JSON.stringify(entry)}\n`), close: () => undefined };
  }
  if (mode === 'plain') {
    return {
      entry: (entry) => {
        const line = entryLine(entry);
        if (line !== undefined) out.write(`${line}\n`);
      },
      close: () => undefined,
    };
  }
  return liveView(out);
}

interface LiveState {
  runId: string;
  task: string;
  phase: string;
  iteration: number;
  tokens: number;
  costUsd: number;
  readonly inFlight: Map<string, string>;
  readonly recent: string[];
}

/** Lines of recent events kept under the status block, so the view stays a few lines tall. */
const RECENT_LINES = 6;

/** A pseudo-terminal without a window size reports 0 rows, and log-update would then print nothing. */
class SizedTerminal extends Writable {
  constructor(private readonly out: NodeJS.WriteStream) {
    super();
  }
  get columns(): number {
    return this.out.columns || 80;
  }
  get rows(): number {
    return this.out.rows || 24;
  }
  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    // Write through at once, so the view and the lines printed after it stay in order.
    this.out.write(chunk);
    callback();
  }
}

function liveView(out: NodeJS.WriteStream): RunReporter {
  const update = createLogUpdate(new SizedTerminal(out), { showCursor: true });
  const state: LiveState = { runId: '', task: '', phase: 'starting', iteration: 0, tokens: 0, costUsd: 0, inFlight: new Map(), recent: [] };
  return {
    entry(entry) {
      apply(state, entry);
      update(render(state));
    },
    close() {
      update(render(state));
      update.done();
    },
  };
}

function apply(state: LiveState, { runId, iteration, event }: JournalEntry): void {
  state.runId = runId;
  state.iteration = iteration;
  switch (event.type) {
    case 'run.started':
      state.task = event.task;
      break;
    case 'phase.entered':
      state.phase = event.phase;
      break;
    case 'tool.started':
      state.inFlight.set(event.toolCallId, event.tool);
      break;
    case 'tool.finished':
      state.inFlight.delete(event.toolCallId);
      break;
    case 'reasoning.completed':
      state.tokens += event.usage.totalTokens;
      state.costUsd += event.costUsd ?? 0;
      break;
    case 'run.terminated':
      state.phase = `ended (${event.reason})`;
      break;
    default:
      break;
  }
  const line = entryLine({ runId, iteration, event, sequence: 0, timestamp: 0, agentId: '' });
  if (line !== undefined) {
    state.recent.push(line);
    if (state.recent.length > RECENT_LINES) state.recent.shift();
  }
}

function render(state: LiveState): string {
  const tools = state.inFlight.size === 0 ? 'none' : [...state.inFlight.values()].join(', ');
  return [
    `actorloop ${state.runId}${state.task ? ` · ${shorten(state.task, 60)}` : ''}`,
    `iteration ${state.iteration} · phase ${state.phase}`,
    `tools in flight: ${tools}`,
    `tokens ${state.tokens} · cost ${formatCost(state.costUsd)}`,
    ...state.recent.map((line) => `  ${line}`),
  ].join('\n');
}
