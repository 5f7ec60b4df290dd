import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createAgent, createFileStore, type Completion, type InferenceProvider, type StreamEvent } from '../../src/index.ts';
import { scriptedModel } from '../../src/testing/index.ts';
import { createRedactor } from '../../src/security/redactor.ts';
import { createAgUiHandler } from '../../src/web/index.ts';

const SECRET = 'sk-test-1234567890abcdef';
const SPACED = 'correct horse battery staple';
const redactor = () => createRedactor({ secrets: [SPACED] }, { OPENAI_API_KEY: SECRET });

/** Streams `text` cut at `cuts` through one stream redactor: the deltas it let out, in order. */
function streamed(text: string, cuts: readonly number[]): string[] {
  const stream = redactor().stream();
  const points = [...new Set(cuts.map((c) => c % (text.length + 1)))].sort((a, b) => a - b);
  const out: string[] = [];
  let from = 0;
  for (const point of [...points, text.length]) {
    out.push(stream.push(text.slice(from, point)));
    from = point;
  }
  out.push(stream.end());
  return out.filter((piece) => piece !== '');
}

const word = fc.stringMatching(/^[a-z]{1,8}$/);
const secretLike = fc.constantFrom(
  SECRET,
  SPACED,
  'Bearer abc.def-123456789',
  '"password": "two words"',
  '"apiKey":"k-9f8e7d6c5b4a"',
  'token=abcdef0123456789',
  'ghp_abcdefghijklmnopqrstuvwxyz0123',
  'AKIAABCDEFGHIJKLMNOP',
);
const text = fc.array(fc.oneof({ weight: 3, arbitrary: word }, { weight: 1, arbitrary: secretLike }), { minLength: 1, maxLength: 30 }).chain((parts) =>
  fc.array(fc.constantFrom(' ', '  ', '\n', ', ', '', '.', '\t'), { minLength: parts.length, maxLength: parts.length }).map((gaps) => parts.map((part, i) => part + gaps[i]).join('')),
);

describe('redacting streamed text', () => {
  it('lets out, over any cutting of the text into deltas, exactly the redaction of the whole text', () => {
    fc.assert(
      fc.property(text, fc.array(fc.nat(), { maxLength: 40 }), (whole, cuts) => {
        expect(streamed(whole, cuts).join('')).toBe(redactor().text(whole));
      }),
      { numRuns: 1000 },
    );
  });

  it('keeps redacting a secret key\'s JSON value whose spaces run it past the context a rule looks back over (a long Cookie header)', () => {
    const cookies = Array.from({ length: 12 }, (_, i) => `c${i}=v${i}-a1b2c3d4e5f6`).join('; ');
    const whole = `headers: {"Cookie": "${cookies}", "Accept": "text/html"} sent`;
    for (const cuts of [[], Array.from({ length: whole.length }, (_, i) => i)]) {
      const out = streamed(whole, cuts).join('');
      expect(out).toBe(redactor().text(whole));
      expect(out).not.toContain('v11-a1b2c3d4e5f6');
    }
  });

  it('lets a word out once it is complete, and holds nothing back at the end', () => {
    expect(streamed('hello world, this is it', [3, 6, 9, 12, 15, 20])).toEqual(['hello ', 'world, ', 'this ', 'is ', 'it']);
  });
});

/** A scripted model streaming its thinking and its answer in the pieces given. */
function scriptedStreamingModel(thinking: readonly string[], answer: readonly string[]): InferenceProvider {
  const completion: Completion = {
    text: answer.join(''),
    reasoning: [{ type: 'thinking', text: thinking.join('') }],
    toolCalls: [],
    finishReason: 'stop',
    usage: { promptTokens: 1, completionTokens: 1, totalTokens: 2 },
    model: 'scripted',
  };
  return {
    name: 'scripted-streaming',
    defaultModel: 'scripted',
    supportsNativeTools: true,
    supportsStructuredOutput: false,
    complete: async () => completion as never,
    async *stream(): AsyncIterable<StreamEvent<never>> {
      for (const delta of thinking) yield { type: 'reasoning.delta', delta };
      for (const delta of answer) yield { type: 'text.delta', delta };
      yield { type: 'done', completion: completion as Completion<never> };
    },
  };
}

describe('a streamed reply with a secret split across its deltas', () => {
  it('never lets the secret, or the pieces it was cut into, reach tokens$, events, the journal, the store or a web stream', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'actorloop-stream-secret-'));
    try {
      const pieces = ['sk-te', 'st-1234', '567890ab', 'cdef'];
      const model = scriptedStreamingModel(['I should not say ', ...pieces, ' aloud.'], ['Your key is ', ...pieces, ', keep it.']);
      const agent = createAgent({ model: { provider: model, stream: true }, policy: { redact: { secrets: [SECRET] } }, persistence: { store: createFileStore({ dir }) } });
      const tokens: { runId: string; delta: string }[] = [];
      agent.tokens$.subscribe((token) => tokens.push(token));
      const events: string[] = [];
      agent.events$.subscribe((entry) => events.push(JSON.stringify(entry)));
      const handler = createAgUiHandler(agent);
      const body = { threadId: 't', runId: 'run_secret', messages: [{ id: 'u1', role: 'user', content: 'What is my key?' }], tools: [], context: [], state: {}, forwardedProps: {} };
      const page = await (await handler(new Request('http://127.0.0.1/api/agent', { method: 'POST', body: JSON.stringify(body) }))).text();
      const result = await agent.run('What is my key?');
      agent.stop();

      expect(result.text).toBe('Your key is [REDACTED], keep it.');
      expect(tokens.filter((token) => token.runId === result.runId).map((token) => token.delta).join('')).toBe('Your key is [REDACTED], keep it.');
      const stored = readdirSync(dir, { recursive: true, withFileTypes: true })
        .filter((entry) => entry.isFile())
        .map((entry) => readFileSync(join(entry.parentPath, entry.name), 'utf8'))
        .join('\n');
      for (const [where, text] of [['tokens$', tokens.map((token) => token.delta).join('|')], ['events$', events.join('\n')], ['journal', JSON.stringify(agent.journal.entries())], ['store', stored], ['AG-UI stream', page]] as const) {
        for (const piece of [SECRET, ...pieces.slice(1)]) expect(text, `${where} holds "${piece}"`).not.toContain(piece);
      }
      expect(page).toContain('[REDACTED]');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('redacts a secret the token cap cut in two, whose end came in the continued reply', async () => {
    const provider = scriptedModel([
      { chunks: ['Your key is sk-test-12'], finishReason: 'length' },
      { chunks: ['34567890abcdef', ', keep it.'] },
    ]);
    const agent = createAgent({ model: { provider, stream: true, onLength: { continue: 1 } }, policy: { redact: { secrets: [SECRET] } } });
    const tokens: string[] = [];
    agent.tokens$.subscribe((token) => tokens.push(token.delta));
    const result = await agent.run('What is my key?');
    agent.stop();
    expect(result.text).toBe('Your key is [REDACTED], keep it.');
    expect(tokens.join('')).toBe('Your key is [REDACTED], keep it.');
  });
});
