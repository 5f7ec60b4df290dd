/**
 * A worker's streaming model call publishes its text and thinking as they arrive, for followers in
 * any process: redacted as the journal is, coalesced into a few notices a second on one channel, each
 * its own tiny statement outside any step, and only while some process follows the agent. The
 * committed reply stays the record; these are a preview.
 */
import type pg from 'pg';
import { z } from 'zod';
import type { JournalEntry } from '../core/loopEvent.ts';
import { ReplyRedactor, type StreamRedactor } from '../security/streamRedactor.ts';
import { SCHEMA } from './migrations.ts';

/** One channel for every run: a follower listens once, however many runs are in flight. */
export const TOKEN_CHANNEL = 'actorloop_tokens';
/**
 * With the agent's id hashed, the advisory lock a following process holds shared: a worker that can take it
 * alone knows nobody follows the agent, and publishes nothing for the call.
 */
export const TOKEN_LOCK = 0x61_6c_74_6b;
/**
 * Deltas that arrive within this window go out as one notice. A notice costs a transaction to send and one
 * in every connection that LISTENs on the database, whatever its channel (PostgreSQL reads its queue in one).
 */
export const TOKEN_FLUSH_MS = 50;
/** PostgreSQL refuses payloads of 8000 bytes or more. */
const MAX_PAYLOAD_BYTES = 7_900;
/** The backends holding the agent's follow lock ($3, $4), as a statement's `followers` column. */
const FOLLOWERS = `ARRAY(SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND objsubid = 2 AND classid = $3::int4::oid AND objid = hashtext($4)::oid AND granted) AS followers`;
/** A legacy line's `last_entry` (migrated without its entries' sequences). */
const UNKNOWN_ENTRY = 2_147_483_647;

/**
 * `s`: the run's last committed entry before the call; `p`: the notice's place in the call, from 0; `k`: the call's
 * text before part `p` again, for followers that joined it after its start (those that have it skip it).
 */
export const TokenNotice = z.object({
  a: z.string(),
  r: z.string(),
  c: z.string(),
  p: z.number().int().nonnegative(),
  s: z.number().int(),
  k: z.literal(1).optional(),
  t: z.string().optional(),
  h: z.string().optional(),
});
export type TokenNotice = z.infer<typeof TokenNotice>;

export function parseTokenNotice(payload: string | undefined): TokenNotice | undefined {
  try {
    const parsed = TokenNotice.safeParse(JSON.parse(payload ?? ''));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/** Thinking before text, as the model wrote them within the window. */
export function noticeEntries(notice: TokenNotice, timestamp: number): JournalEntry[] {
  const live = { call: notice.c, part: notice.p, ...(notice.k === undefined ? {} : { catchUp: true as const }) };
  const base = { sequence: notice.s, timestamp, agentId: notice.a, runId: notice.r, iteration: 0 };
  return [
    ...(notice.h === undefined ? [] : [{ ...base, event: { type: 'thinking.delta' as const, delta: notice.h, live } }]),
    ...(notice.t === undefined ? [] : [{ ...base, event: { type: 'token.delta' as const, delta: notice.t, live } }]),
  ];
}

export interface TokenCall {
  readonly agentId: string;
  readonly runId: string;
  /** The call's effect key: unique, and the same for every worker that makes it. */
  readonly call: string;
}

export class TokenPublisher {
  readonly #reply: ReplyRedactor;
  /** Asked once there is something to publish (a reply of tool calls alone costs nothing). */
  #base: Promise<number | undefined> | undefined;
  #pending = { text: '', thinking: '' };
  #part = 0;
  #timer: ReturnType<typeof setTimeout> | undefined;
  /** Notices go out one query at a time, so they arrive in order. */
  #sending: Promise<void> = Promise.resolve();
  /** Nobody follows the agent, or a notice failed: the rest of the call is not published. */
  #silent = false;
  /** What went out so far, for a follower that joins mid-call. */
  #sent = { text: '', thinking: '' };
  /** The following connections the last statement saw; one not among them joined mid-call. */
  #followers: ReadonlySet<number> = new Set();

  constructor(
    private readonly pool: pg.Pool,
    private readonly target: TokenCall,
    redactStream: () => StreamRedactor,
  ) {
    this.#reply = new ReplyRedactor(redactStream, (part, delta) => this.#add(part, delta));
  }

  text(delta: string): void {
    this.#reply.text(delta);
  }

  thinking(delta: string): void {
    this.#reply.thinking(delta);
  }

  /** What the redactors held goes out, then every notice is sent (or given up) before the reply can commit. */
  async end(): Promise<void> {
    this.#reply.end();
    this.#flush();
    await this.#sending;
  }

  #add(kind: 'text' | 'thinking', delta: string): void {
    if (delta === '' || this.#silent) return;
    // A follower that has seen the run go past this entry knows the call is over; undefined: nobody to tell.
    this.#base ??= this.pool
      .query<{ last: number | null; heard: boolean; followers: number[] }>(
        `SELECT (SELECT max(last_entry) FROM ${SCHEMA}.log WHERE actor_id = $1 AND last_entry < $2) AS last, NOT pg_try_advisory_xact_lock($3, hashtext($4)) AS heard, ${FOLLOWERS}`,
        [this.target.runId, UNKNOWN_ENTRY, TOKEN_LOCK, this.target.agentId],
      )
      .then(
        (found) => {
          this.#followers = new Set(found.rows[0]?.followers ?? []);
          return found.rows[0]?.heard === true ? (found.rows[0].last ?? -1) : undefined;
        },
        () => undefined,
      );
    this.#pending[kind] += delta;
    this.#timer ??= setTimeout(() => this.#flush(), TOKEN_FLUSH_MS);
  }

  #flush(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    const { text, thinking } = this.#pending;
    this.#pending = { text: '', thinking: '' };
    if (text === '' && thinking === '') return;
    this.#sending = this.#sending.then(async () => {
      if (this.#silent) return;
      const at = await this.#base;
      if (at === undefined) {
        this.#silent = true;
        return;
      }
      let payloads = this.#payloads(at, thinking, text);
      this.#sent = { text: this.#sent.text + text, thinking: this.#sent.thinking + thinking };
      try {
        // Who follows is read with each notice; one that joined since the last gets the call so far at once, and the rest live.
        while (payloads.length > 0) {
          const sent = await this.pool.query<{ followers: number[] }>(
            `SELECT ${FOLLOWERS} FROM (SELECT count(*) FROM (SELECT pg_notify($1, payload) FROM unnest($2::text[]) WITH ORDINALITY AS t(payload, n) ORDER BY n) AS each) AS notified`,
            [TOKEN_CHANNEL, payloads, TOKEN_LOCK, this.target.agentId],
          );
          const followers = sent.rows[0]?.followers ?? [];
          const joined = followers.some((pid) => !this.#followers.has(pid));
          this.#followers = new Set(followers);
          payloads = joined ? this.#catchUp(at) : [];
        }
      } catch {
        // Followers see the gap and take the call's text from its reply; the call itself goes on.
        this.#silent = true;
      }
    });
  }

  /** The call's text so far as catch-up notices at the next part, which they do not use up. */
  #catchUp(at: number): string[] {
    const { agentId: a, runId: r, call: c } = this.target;
    const { thinking, text } = this.#sent;
    const room = MAX_PAYLOAD_BYTES - Buffer.byteLength(JSON.stringify({ a, r, c, p: Number.MAX_SAFE_INTEGER, s: at, k: 1, t: '' }));
    const notice = (fields: { h?: string; t?: string }): string => JSON.stringify({ a, r, c, p: this.#part, s: at, k: 1, ...fields } satisfies TokenNotice);
    return [...pieces(thinking, room).map((h) => notice({ h })), ...pieces(text, room).map((t) => notice({ t }))];
  }

  /** Each under the size PostgreSQL takes, long deltas split between notices. */
  #payloads(at: number, thinking: string, text: string): string[] {
    const { agentId: a, runId: r, call: c } = this.target;
    const both = { ...(thinking === '' ? {} : { h: thinking }), ...(text === '' ? {} : { t: text }) };
    const notice = (fields: { h?: string; t?: string }): string => JSON.stringify({ a, r, c, p: this.#part++, s: at, ...fields } satisfies TokenNotice);
    if (Buffer.byteLength(JSON.stringify({ a, r, c, p: this.#part, s: at, ...both })) <= MAX_PAYLOAD_BYTES) return [notice(both)];
    const room = MAX_PAYLOAD_BYTES - Buffer.byteLength(JSON.stringify({ a, r, c, p: Number.MAX_SAFE_INTEGER, s: at, t: '' }));
    return [...pieces(thinking, room).map((h) => notice({ h })), ...pieces(text, room).map((t) => notice({ t }))];
  }
}

/** Cut between code points so that each piece, written as a JSON string, takes at most `room` bytes. */
export function pieces(text: string, room: number): string[] {
  const out: string[] = [];
  let piece = '';
  let bytes = 0;
  for (const point of text) {
    const size = Buffer.byteLength(JSON.stringify(point)) - 2;
    if (bytes + size > room && piece !== '') {
      out.push(piece);
      piece = '';
      bytes = 0;
    }
    piece += point;
    bytes += size;
  }
  if (piece !== '') out.push(piece);
  return out;
}

/** A call's deltas a process holds for whoever subscribes mid-call: at most this many characters of them. */
const MAX_HELD_CHARS = 1_048_576;
/** Calls in flight held for one agent before the oldest is let go (a worker that died mid-call commits nothing). */
const MAX_HELD_CALLS = 256;

interface HeldCall {
  readonly runId: string;
  readonly entries: JournalEntry[];
  part: number;
  chars: number;
  /** Held from a catch-up at this part, while it is passing. */
  catchUp?: number;
}

/**
 * The deltas of one agent's calls in flight that this process has from their first notice: a subscriber
 * that joins mid-call gets them first, so it shows the call live from its start and its reply adds nothing.
 * A call is let go once its run commits an entry past it (its reply is in the journal), or it had a gap.
 */
export class HeldCalls {
  readonly #calls = new Map<string, HeldCall>();

  /** Fed every entry passed to the agent's followers, in order. */
  pass(entry: JournalEntry): void {
    const { event } = entry;
    const delta = event.type === 'token.delta' || event.type === 'thinking.delta' ? event : undefined;
    const live = delta?.live;
    if (delta === undefined || live === undefined) {
      for (const [call, held] of this.#calls) if (held.runId === entry.runId) this.#calls.delete(call);
      return;
    }
    const held = this.#calls.get(live.call);
    // A catch-up for another process's late joiner adds nothing to a call held from its start.
    if (live.catchUp === true && held !== undefined && held.catchUp !== live.part) return;
    if (held === undefined) {
      if (live.part !== 0 && live.catchUp !== true) return;
      if (this.#calls.size >= MAX_HELD_CALLS) this.#calls.delete(this.#calls.keys().next().value as string);
      // Held from a catch-up (this process joined late), it reads as the call from its start to a new subscriber.
      this.#calls.set(live.call, { runId: entry.runId, entries: [entry], part: live.part, chars: delta.delta.length, ...(live.catchUp === true ? { catchUp: live.part } : {}) });
      return;
    }
    const chars = held.chars + delta.delta.length;
    if ((live.part !== held.part && live.part !== held.part + 1) || chars > MAX_HELD_CHARS) {
      this.#calls.delete(live.call);
      return;
    }
    held.entries.push(entry);
    held.part = live.part;
    held.chars = chars;
    if (live.catchUp !== true) delete held.catchUp;
  }

  /** Every held call's deltas so far, each call in order. */
  entries(): JournalEntry[] {
    return [...this.#calls.values()].flatMap((held) => held.entries);
  }
}
