// Context and events are sanitised before `@statelyai/inspect` sees them: it serialises lazily, on a later
// tick, and must only ever hold data that may leave the process.
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

export interface InspectorOptions {
  /** Port on 127.0.0.1. Default 0: the system picks a free one (read it from `url`). */
  readonly port?: number;
  readonly autoOpen?: boolean;
  /** The default redaction rules always apply. */
  readonly redact?: SanitizeOptions;
  /** `'stately'` (default) embeds the hosted Stately inspector, so it needs the network; `'local'` works offline. */
  readonly page?: 'stately' | 'local';
  readonly inspectorUrl?: string;
  /** Pre-rendered `<machine>.svg` diagrams for the `'local'` page. Default: the repository's `visualizations/`. */
  readonly vizDir?: string;
  /** Messages replayed to a client that connects late (at most 8 MiB). */
  readonly replayLimit?: number;
}

/** An `AgentRun` is one. */
export interface FollowedRun {
  readonly runId: string;
  readonly events$: Observable<JournalEntry>;
  /** Read for tool calls' arguments and results, which the journal names only by id. */
  readonly actor: { getSnapshot(): { readonly context: { readonly messages: readonly Message[] } } };
}

export interface Inspector {
  readonly inspect: Observer<InspectionEvent>;
  readonly url: string;
  readonly wsUrl: string;
  /** Shows `run` on the local page as its conversation; returns the function that stops following it. */
  follow(run: FollowedRun): () => void;
  /** Delivers what is pending first. */
  stop(): Promise<void>;
}

/**
 * @example
 * ```ts
 * const inspector = await createInspector({ page: 'local' });
 * const agent = createAgent({ model, observe: { inspect: inspector.inspect } });
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

/** Actor refs are kept: the library reads their ids, and {@link finalPass} cleans what it read of a new actor. */
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

/** `@xstate.actor` carries the live snapshot the library read and the machine config it stringified. */
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
