/**
 * Experiences of a run resumed from its file log: the outcome is counted for what the run was
 * shown though the resuming process never ran its hydrate phase, and a run that ends again
 * after a crash (its outcome already counted) is not counted twice.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { createAgent } from '../../src/agent/createAgent.ts';
import { createMemoryExperienceStore, type ExperienceStore } from '../../src/experiences/index.ts';
import { createFileStore } from '../../src/persistence/fileStore.ts';
import { META_VERSION } from '../../src/persistence/records.ts';
import { scriptedModel } from '../../src/testing/index.ts';
import { echoTool, removeTempDirs, runFiles, tempDir } from '../persistence/support.ts';

afterEach(removeTempDirs);

const seeded = (): ExperienceStore =>
  createMemoryExperienceStore([
    { condition: 'the echo tool is asked to say hi', rule: 'say hi exactly once', confidence: 0.8 },
    { condition: 'a deploy to production is requested', rule: 'ask for approval first', confidence: 0.9 },
  ]);

const script = () => [{ toolCalls: [{ name: 'echo', arguments: { word: 'hi' } }] }, { text: 'finished' }];

/** A complete run of the script with `experiences`, and its log's lines. */
async function completedRun(experiences: ExperienceStore, checkpoints: { every: number } | false) {
  const store = createFileStore({ dir: tempDir(), checkpoints });
  const model = scriptedModel(script());
  const agent = createAgent({ id: 'echoer', model, tools: [echoTool()], persistence: { store }, memory: { experiences: { store: experiences } } });
  const result = await agent.start('Use the echo tool to say hi', { runId: 'run_resumed' }).settled;
  const lines = readFileSync(runFiles(store, result.runId).log, 'utf8').split(/(?<=\n)/);
  return { result, lines, model };
}

/** A file store holding `lines` as the log of `runId`, as a crash leaves it (meta says running, no lock). */
function crashedStore(lines: readonly string[], runId: string, checkpoints: { every: number } | false) {
  const store = createFileStore({ dir: tempDir(), checkpoints });
  const files = runFiles(store, runId);
  mkdirSync(files.runs, { recursive: true });
  writeFileSync(files.log, lines.join(''));
  const header = JSON.parse(lines[0] ?? '{}') as { agentId: string; task: string; createdAt: number };
  writeFileSync(files.meta, JSON.stringify({ v: META_VERSION, runId, agentId: header.agentId, task: header.task, status: 'running', createdAt: header.createdAt, updatedAt: header.createdAt }));
  return store;
}

describe('experiences of a resumed run', () => {
  it.each([
    ['replayed from its hydrate reply', false as const],
    ['restored from a checkpoint taken after hydration', { every: 1 }],
  ])('a run that crashed mid-way and is resumed in a fresh agent counts its outcome for what it was shown (%s)', async (_, checkpoints) => {
    const { lines, model } = await completedRun(seeded(), checkpoints);
    expect(model.calls[0]?.messages[0]?.content).toContain('When the echo tool is asked to say hi, say hi exactly once');
    // The crash: right after the gate's reply, before the tool ran; or right after the checkpoint the next turn began with.
    const cut = lines.findIndex((line) => line.includes(checkpoints === false ? '"kind":"gate"' : '"kind":"checkpoint"')) + 1;
    expect(cut).toBeGreaterThan(0);
    const hydrated = lines.slice(0, cut).find((line) => line.includes('"kind":"hydrate"'));
    const experiences = seeded();
    const [shown] = experiences.list().filter((e) => e.condition.startsWith('the echo tool'));
    expect(JSON.parse(hydrated ?? '{}')).toMatchObject({ output: { experiences: [expect.any(String)] } });

    // The seeded store gives fresh ids: the log is made to name this store's experience.
    const store = crashedStore(
      lines.slice(0, cut).map((line) => line.replaceAll(/exp_[0-9a-f]{16}/g, shown?.id ?? '')),
      'run_resumed',
      checkpoints,
    );
    const resumer = scriptedModel(script().slice(1));
    const agent = createAgent({ id: 'echoer', model: resumer, tools: [echoTool()], persistence: { store }, memory: { experiences: { store: experiences } } });
    const result = await agent.resume('run_resumed').settled;
    expect(result.status).toBe('done');
    // Its hydrate phase did not run again: the model saw the experiences from the log.
    expect(resumer.calls).toHaveLength(1);
    expect(resumer.calls[0]?.messages[0]?.content).toContain('say hi exactly once');
    expect(experiences.get(shown?.id ?? '')).toMatchObject({ usageCount: 1, successCount: 1, countedRunIds: ['run_resumed'] });
  });

  it('a run whose outcome was counted just before a crash, resumed, is not counted again', async () => {
    const experiences = seeded();
    const { result, lines } = await completedRun(experiences, false);
    const [shown] = experiences.list().filter((e) => e.condition.startsWith('the echo tool'));
    expect(shown).toMatchObject({ usageCount: 1, successCount: 1 });
    // The crash: the outcome was counted, but the run's end record never reached the log.
    const store = crashedStore(
      lines.filter((line) => !line.includes('"kind":"end"')),
      result.runId,
      false,
    );
    const agent = createAgent({ id: 'echoer', model: scriptedModel([]), tools: [echoTool()], persistence: { store }, memory: { experiences: { store: experiences } } });
    const resumed = await agent.resume(result.runId).settled;
    expect(resumed.status).toBe('done');
    expect(experiences.get(shown?.id ?? '')).toMatchObject({ usageCount: 1, successCount: 1 });
  });
});
