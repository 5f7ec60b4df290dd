import { describe, expect, it } from 'vitest';
import type { Message } from '../../src/core/messages.ts';
import type { Completion, CompletionRequest, InferenceProvider } from '../../src/core/provider.ts';
import { learnExperiences, type FinishedRun } from '../../src/experiences/learn.ts';
import { createMemoryExperienceStore } from '../../src/experiences/store.ts';
import { compactTranscript } from '../../src/experiences/transcript.ts';
import { scriptedModel } from '../../src/testing/scriptedModel.ts';
import type { ModelBehaviorError } from '../../src/core/errors.ts';

const hugeLog = `FAIL ${'x'.repeat(50_000)} END_OF_LOG`;
const run: FinishedRun = {
  runId: 'run_42',
  task: 'Make the test suite pass on CI',
  status: 'failed',
  reason: 'max_iterations',
  messages: [
    { role: 'system', content: 'SYSTEM PROMPT TEXT' },
    { role: 'user', content: 'Make the test suite pass on CI' },
    { role: 'assistant', content: null, toolCalls: [{ id: 'c1', name: 'run_tests', arguments: '{"pool":"threads"}' }] },
    { role: 'tool', toolCallId: 'c1', name: 'run_tests', content: hugeLog, isError: true },
  ],
};

const candidate = (fields: Record<string, unknown>) => ({ evidence: [], tool: null, scope: 'global', confidence: 0.5, ...fields });
const userText = (request: CompletionRequest | undefined): string =>
  (request?.messages.filter((m: Message) => m.role === 'user').map((m) => m.content) ?? []).join('\n');

describe('learnExperiences', () => {
  it('returns the valid candidates, most confident first, with sourceRunIds set to the run', async () => {
    const model = scriptedModel([
      {
        output: {
          candidates: [
            candidate({ condition: 'the suite times out with the threads pool', rule: 'run vitest with --pool=forks', evidence: ['run_tests timed out'], confidence: 0.6, scope: 'tool', tool: 'run_tests' }),
            candidate({ condition: 'tests fail only on CI', rule: 'reproduce with CI=true locally first', confidence: 0.9, scope: 'project' }),
          ],
        },
      },
    ]);
    const learned = await learnExperiences({ model, run, project: '/srv/app' });
    expect(learned.candidates).toEqual([
      { condition: 'tests fail only on CI', rule: 'reproduce with CI=true locally first', evidence: [], sourceRunIds: ['run_42'], scope: { kind: 'project', path: '/srv/app' }, confidence: 0.9 },
      {
        condition: 'the suite times out with the threads pool',
        rule: 'run vitest with --pool=forks',
        evidence: ['run_tests timed out'],
        sourceRunIds: ['run_42'],
        scope: { kind: 'tool', name: 'run_tests' },
        confidence: 0.6,
      },
    ]);
    expect(learned.skipped).toEqual([]);
    expect(learned.usage.totalTokens).toBeGreaterThan(0);
  });

  it('asks for structured output with a compact transcript: no system prompt, long tool results cut', async () => {
    const model = scriptedModel([{ output: { candidates: [] } }]);
    const signal = new AbortController().signal;
    await learnExperiences({ model, run, signal });
    const request = model.calls[0];
    expect(request?.output?.name).toBe('experience_candidates');
    expect(request?.signal).toBe(signal);
    const text = userText(request);
    expect(text).toContain('Task: Make the test suite pass on CI');
    expect(text).toContain('Outcome: failed: max_iterations');
    expect(text).toContain('tool run_tests (error): FAIL xxx');
    expect(text).not.toContain('END_OF_LOG');
    expect(text).not.toContain('SYSTEM PROMPT TEXT');
    expect(text.length).toBeLessThan(5_000);
  });

  it('keeps a long run under the transcript budget by omitting its middle, never its start or end', () => {
    const messages: Message[] = Array.from({ length: 400 }, (_, i) => ({ role: 'assistant', content: `step ${i} ${'y'.repeat(200)}` }));
    const transcript = compactTranscript(messages, { maxChars: 4_000 });
    expect(transcript.length).toBeLessThanOrEqual(4_100);
    expect(transcript).toContain('assistant: step 0 ');
    expect(transcript).toContain('assistant: step 399 ');
    expect(transcript).toMatch(/\[… \d+ lines of the run omitted …\]/);
  });

  it('rejects an answer of the wrong shape with ModelBehaviorError (experience_invalid_answer) naming the run', async () => {
    const model = scriptedModel([{ output: { candidates: [{ condition: 'x', rule: 'y', confidence: 3 }] } }]);
    const error = await learnExperiences({ model, run }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'experience_invalid_answer' });
    expect((error as ModelBehaviorError).runId).toBe('run_42');
    expect((error as Error).message).toContain('run_42');
  });

  it('rejects a project-scoped answer when no project was given (the schema offers no project scope then)', async () => {
    const model = scriptedModel([{ output: { candidates: [candidate({ condition: 'x', rule: 'y', scope: 'project' })] } }]);
    await expect(learnExperiences({ model, run })).rejects.toMatchObject({ code: 'experience_invalid_answer' });
  });

  it('reads the reply text (a JSON code fence too) from a provider that returns no parsed output, and validates it', async () => {
    const textOnly = (text: string): InferenceProvider => {
      const inner = scriptedModel([{ text }]);
      return {
        ...inner,
        complete: async <T>(request: CompletionRequest<T>): Promise<Completion<T>> => {
          const { output: _ignored, ...rest } = request;
          return (await inner.complete(rest)) as Completion<T>;
        },
      };
    };
    const answer = JSON.stringify({ candidates: [candidate({ condition: 'a build fails', rule: 'clean first' })] });
    const learned = await learnExperiences({ model: textOnly(`\`\`\`json\n${answer}\n\`\`\``), run });
    expect(learned.candidates.map((c) => c.rule)).toEqual(['clean first']);
    await expect(learnExperiences({ model: textOnly('I learned nothing.'), run })).rejects.toMatchObject({ code: 'experience_invalid_answer' });
    await expect(learnExperiences({ model: textOnly('{"candidates":[{"rule":1}]}'), run })).rejects.toMatchObject({ code: 'experience_invalid_answer' });
  });

  it('skips, with a reason, candidates the store would refuse and those beyond maxCandidates', async () => {
    const model = scriptedModel([
      {
        output: {
          candidates: [
            candidate({ condition: 'a', rule: '   ' }),
            candidate({ condition: 'b happens', rule: 'do b', scope: 'tool', tool: null }),
            candidate({ condition: 'c happens', rule: 'do c', confidence: 0.4 }),
            candidate({ condition: 'd happens', rule: 'do d', confidence: 0.8 }),
          ],
        },
      },
    ]);
    const learned = await learnExperiences({ model, run, maxCandidates: 1 });
    expect(learned.candidates.map((c) => c.condition)).toEqual(['d happens']);
    expect(learned.skipped.map((s) => s.condition)).toEqual(['a', 'b happens', 'c happens']);
    expect(learned.skipped[1]?.reason).toMatch(/without a tool name/);
  });

  it('makes no model call for maxCandidates 0 or an already aborted signal', async () => {
    const model = scriptedModel([]);
    expect((await learnExperiences({ model, run, maxCandidates: 0 })).candidates).toEqual([]);
    const controller = new AbortController();
    controller.abort(new Error('stopped'));
    await expect(learnExperiences({ model, run, signal: controller.signal })).rejects.toThrow('stopped');
    expect(model.calls).toHaveLength(0);
  });

  it('feeds a store: candidates arrive pending, and a re-learned one merges its new source run', async () => {
    const store = createMemoryExperienceStore();
    const answer = { output: { candidates: [candidate({ condition: 'the suite times out', rule: 'use --pool=forks' })] } };
    const model = scriptedModel([answer, answer]);
    for (const c of (await learnExperiences({ model, run })).candidates) await store.add(c);
    const existing = store.list();
    for (const c of (await learnExperiences({ model, run: { ...run, runId: 'run_43' }, existing })).candidates) await store.add(c);
    expect(store.list()).toMatchObject([{ status: 'pending', sourceRunIds: ['run_42', 'run_43'] }]);
    expect(userText(model.calls[1])).toContain('- When the suite times out, use --pool=forks [global]');
  });
});
