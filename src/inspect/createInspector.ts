/**
 * `createInspector`: watch agent machines live in the Stately inspector, or offline in the
 * relay's own local page (`page: 'local'`, see `livePage.ts`).
 *
 * XState inspection events are turned into the Stately inspector's message format by
 * `@statelyai/inspect`, and sent to every client of a local relay (`relayServer.ts`). Context
 * and events are sanitised *before* the library sees them — it serialises lazily, on a later
 * tick, and must only ever hold data that may leave the process.
 */
import { execFile } from 'node:child_process';
import { platform } from 'node:os';
import { createInspector as createStatelyInspector, type StatelyActorEvent, type StatelyInspectionEvent } from '@statelyai/inspect';
import type { Observable } from 'rxjs';
import type { AnyEventObject, InspectionEvent, Observer, Snapshot } from 'xstate';
import type { JournalEntry } from '../core/loopEvent.ts';
import type { Message } from '../core/messages.ts';
import { AgUiEncoder, detailsFromMessages } from '../events/agUiEncoder.ts';
import { startRelayServer } from './relayServer.ts';
import { defaultVizDir } from './vizFiles.ts';
import { createSanitizer, type JsonValue, type SanitizeOptions, type Sanitizer } from '../security/sanitize.ts';

/**
 * Options of {@link createInspector}. Whichever page is served, every message is sanitised
 * before it leaves the process, and only pages served by the relay itself may connect to it.
 */
export interface InspectorOptions {
  /** Port on 127.0.0.1. Default 0: the system picks a free one (read it from `url`). */
  readonly port?: number;
  /** Open the inspector page in the default browser. Default false. */
  readonly autoOpen?: boolean;
  /** Extra redaction rules and limits (the defaults always apply). */
  readonly redact?: SanitizeOptions;
  /**
   * The page served at `url`. `'stately'` (default): a bridge that embeds the hosted Stately
   * inspector (`inspectorUrl`), so it needs the network. `'local'`: a self-contained live view
   * that makes no request beyond the relay and works offline — the actor tree, each machine
   * actor's diagram (from `vizDir`) with its current state highlighted, and the recent events.
   */
  readonly page?: 'stately' | 'local';
  /** The inspector UI the `'stately'` page embeds. Default `https://stately.ai/inspect`. */
  readonly inspectorUrl?: string;
  /**
   * The folder of pre-rendered `<machine>.svg` diagrams (`npm run viz`) the `'local'` page shows.
   * Default: the repository's `visualizations/`, when present; without it the page shows no diagrams.
   */
  readonly vizDir?: string;
  /** Messages replayed to a client that connects late. Default 1000 (and at most 8 MiB). */
  readonly replayLimit?: number;
}

/** A run the live page can show as a conversation: an `AgentRun` (`agent.start(task)`) is one. */
export interface FollowedRun {
  readonly runId: string;
  readonly events$: Observable<JournalEntry>;
  /** Read for tool calls' arguments and results, which the journal names only by id. */
  readonly actor: { getSnapshot(): { readonly context: { readonly messages: readonly Message[] } } };
}

/** A running inspector. */
export interface Inspector {
  /** Pass to `createAgent({ observe: { inspect } })` or `createActor(logic, { inspect })`. */
  readonly inspect: Observer<InspectionEvent>;
  /** The page to open in a browser. */
  readonly url: string;
  /** The relay's WebSocket address, for other clients. */
  readonly wsUrl: string;
  /**
   * Show `run` on the local page as its conversation (task, streamed text, tool calls with their
   * arguments and results, decisions, waits, usage), sanitised like everything else. Returns
   * the function that stops following it; following ends by itself with the run.
   */
  follow(run: FollowedRun): () => void;
  /** Deliver what is pending, close every client and the server. Idempotent. */
  stop(): Promise<void>;
}

/**
 * Start an inspector on 127.0.0.1.
 *
 * @example
 * ```ts
 * const inspector = await createInspector({ autoOpen: true }); // or { page: 'local' } to work offline
 * console.log(`Inspector: ${inspector.url}`);
 * const agent = createAgent({ model, tools, observe: { inspect: inspector.inspect } });
 * await agent.run('What is 6 * 7?');
 * await inspector.stop();
 * ```
 */
export async function createInspector(options: InspectorOptions = {}): Promise<Inspector> {
  const clean = createSanitizer(options.redact);
  const relay = await startRelayServer({
    port: options.port ?? 0,
    inspectorUrl: options.inspectorUrl ?? 'https://stately.ai/inspect',
    replayLimit: options.replayLimit ?? 1000,
    replayBytes: 8 * 1024 * 1024,
    page: options.page ?? 'stately',
    vizDir: options.vizDir ?? (options.page === 'local' ? defaultVizDir() : undefined),
  });
  let stopped = false;
  const stately = createStatelyInspector(
    {
      send(event) {
        if (stopped) return;
        try {
          relay.broadcast(JSON.stringify(event));
        } catch {
          // A message that cannot be serialised is dropped, never thrown into the host.
        }
      },
    },
    { serialize: (event) => finalPass(event, clean) },
  );

  const inspect: Observer<InspectionEvent> = {
    next(event) {
      if (stopped) return;
      // Called synchronously from inside XState transitions: never throw back into them.
      try {
        const safe = presanitize(event, clean);
        if (safe !== undefined) stately.inspect.next?.(safe);
      } catch {
        // Dropped: the inspector is a view, the run goes on.
      }
    },
  };

  if (options.autoOpen === true) openBrowser(relay.url);

  const send = (message: Record<string, unknown>): void => {
    if (stopped) return;
    try {
      relay.broadcast(JSON.stringify(clean(message)));
    } catch {
      // As above: the view loses a message, the run goes on.
    }
  };

  const follow = (run: FollowedRun): (() => void) => {
    const { runId } = run;
    // Everything sent is passed through `clean`, which redacts the details too.
    const encoder = new AgUiEncoder({ runId, threadId: runId, details: detailsFromMessages(() => run.actor.getSnapshot().context.messages, (text) => text) });
    const subscription = run.events$.subscribe({
      next(entry) {
        if (entry.event.type === 'run.started') send({ type: 'actorloop.user', runId, text: entry.event.task, agentId: entry.agentId });
        for (const event of encoder.encode(entry)) if (event !== undefined) send({ type: 'actorloop.run', runId, event });
      },
      error: () => undefined,
    });
    return () => subscription.unsubscribe();
  };

  let stopping: Promise<void> | undefined;
  return {
    inspect,
    url: relay.url,
    wsUrl: relay.wsUrl,
    follow,
    stop() {
      stopping ??= (async () => {
        // The library converts on a later tick (setTimeout 0); one more tick delivers those.
        await new Promise((resolve) => setTimeout(resolve, 0));
        stopped = true;
        await relay.stop();
      })();
      return stopping;
    },
  };
}

/**
 * Replace an event's payloads with sanitised copies; keep its actor refs (the library reads
 * their ids, and the machine config and snapshot of a new actor — see {@link finalPass}).
 * The Stately inspector shows actors, events and snapshots only, so other types are dropped.
 */
function presanitize(event: InspectionEvent, clean: Sanitizer): InspectionEvent | undefined {
  switch (event.type) {
    case '@xstate.actor':
      return event;
    case '@xstate.event':
      return { ...event, event: eventObject(clean(event.event)) };
    case '@xstate.snapshot':
      return { ...event, event: eventObject(clean(event.event)), snapshot: clean(event.snapshot) as unknown as Snapshot<unknown> };
    default:
      return undefined;
  }
}

function eventObject(value: JsonValue): AnyEventObject {
  if (value !== null && typeof value === 'object' && !Array.isArray(value) && typeof value['type'] === 'string') {
    return value as AnyEventObject;
  }
  return { type: 'unknown' };
}

/**
 * Last look before a message leaves: `@xstate.actor` carries the live snapshot the library read
 * and the machine config it stringified. Other types were sanitised in {@link presanitize}.
 */
function finalPass(event: StatelyInspectionEvent, clean: Sanitizer): StatelyInspectionEvent {
  if (event.type !== '@xstate.actor') return event;
  try {
    return {
      ...event,
      snapshot: clean(event.snapshot) as StatelyActorEvent['snapshot'],
      definition: event.definition === undefined ? undefined : JSON.stringify(clean(JSON.parse(event.definition))),
    };
  } catch {
    return { ...event, snapshot: { status: 'active' }, definition: undefined };
  }
}

function openBrowser(url: string): void {
  const [command, args] =
    platform() === 'darwin' ? ['open', [url]] : platform() === 'win32' ? ['cmd', ['/c', 'start', '', url]] : ['xdg-open', [url]];
  try {
    // execFile, not exec: the URL is an argument, never shell text. Failure to open is harmless.
    const child = execFile(command, args, () => undefined);
    child.unref();
  } catch {
    // No browser opener on this machine: the URL is in `inspector.url`.
  }
}
