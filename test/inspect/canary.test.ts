import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { AuthenticationError } from '../../src/inference/errors.ts';
import { combineInspectors, createInspector, createJsonlRecorder, type Inspector } from '../../src/inspect/index.ts';
import { CANARY, connect, echoAgent, type Collector } from './fixtures.ts';

let inspector: Inspector | undefined;
let client: Collector | undefined;
let dir: string | undefined;

afterEach(async () => {
  client?.close();
  await inspector?.stop();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  client = inspector = dir = undefined;
});

describe('inspection secret canary', () => {
  it('keeps a secret in the system prompt, tool arguments and a provider error out of the inspector stream and the recording', async () => {
    dir = await mkdtemp(join(tmpdir(), 'actorloop-canary-'));
    const file = join(dir, 'run.jsonl');
    inspector = await createInspector();
    client = await connect(inspector.wsUrl);
    const recorder = createJsonlRecorder(file);

    const agent = echoAgent(combineInspectors(inspector.inspect, recorder.inspect), {
      system: `You are precise. The key is ${CANARY}.`,
      steps: [
        { toolCalls: [{ name: 'echo', arguments: { text: `my key is ${CANARY}` } }] },
        { error: new AuthenticationError(`invalid api key ${CANARY}`, { status: 401 }) },
      ],
    });
    const result = await agent.start('use the key').settled;
    agent.stop();
    expect(result.status).toBe('failed');
    // The model sent the secret and the provider error carried it, but it was redacted before it
    // entered the run: the result holds the redacted text.
    expect(JSON.stringify(result.messages)).not.toContain(CANARY);
    expect(JSON.stringify(result.messages)).toContain('my key is [REDACTED]');
    expect(JSON.stringify(result.error)).toContain('invalid api key [REDACTED]');

    await client.waitFor((m) => m['type'] === '@xstate.snapshot' && m['sessionId'] === m['rootId'] && (m['snapshot'] as { status: string }).status !== 'active');
    await recorder.close();
    const streamed = client.messages.join('\n');
    const recorded = await readFile(file, 'utf8');

    for (const text of [streamed, recorded]) {
      expect(text).not.toContain(CANARY);
      expect(text).not.toContain('canary-0123456789');
      // …while the redacted places are there, so the data did flow through.
      expect(text).toContain('The key is [REDACTED].');
      expect(text).toContain('my key is [REDACTED]');
      expect(text).toContain('invalid api key [REDACTED]');
    }
  });
});
