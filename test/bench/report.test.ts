/**
 * The benchmark's verdicts: the cost model, and each target checked against the figures it names
 * — concurrency both with contenders interleaved and with each alone in its own processes.
 * Synthetic figures, so a wrong ratio or a swapped contender shows up as a wrong verdict.
 */
import { describe, expect, it } from 'vitest';
import type { ConcurrencyResult } from '../../bench/concurrency.ts';
import type { Environment } from '../../bench/environment.ts';
import type { FanOutResult } from '../../bench/fanout.ts';
import type { IterationResult } from '../../bench/iterations.ts';
import { withPairedRatios } from '../../bench/concurrency.ts';
import { checkTargets, costModel, renderMarkdown } from '../../bench/report.ts';
import { summarize } from '../../bench/stats.ts';
import type { StuckResult } from '../../bench/stuck.ts';

const iteration = (id: string, n: number, us: number): IterationResult => ({
  id,
  label: `(${id})`,
  n,
  runsPerSample: 1,
  perIterationUs: summarize([us]),
  cpuPerIterationUs: summarize([us]),
});

const concurrency = (id: string, mode: 'shared' | 'perAgent', wallMs: number, heapKb = 20): ConcurrencyResult => ({
  id,
  label: `(${id})`,
  mode,
  agents: 1000,
  n: 10,
  delayMs: 5,
  wallMs: summarize([wallMs]),
  cpuMs: summarize([wallMs]),
  heapPerAgentKb: heapKb,
});

const stuck: StuckResult[] = [{ label: 'tracker', outputBytes: 1 << 20, capChars: 2048, score: 1, ms: summarize([3, 4, 5]) }];
const fanOut: FanOutResult = { branches: 5, branchDelaysMs: [20, 100], slowestMs: 100, sumMs: 300, wallMs: summarize([105]) };

/**
 * react-10 and react-100 figures (µs per iteration) of (b), (c), (d) and (e). (e), the resumable
 * store, is far over every (d) limit by default: a check that read it instead of (d) would fail.
 */
const reactN = (xstate: [number, number], actorloop: [number, number], journal: [number, number], file: [number, number] = [900, 800]): IterationResult[] =>
  (
    [
      ['xstate', xstate],
      ['actorloop', actorloop],
      ['actorloop_journal', journal],
      ['actorloop_file', file],
    ] as const
  ).flatMap(([id, [n10, n100]]) => [iteration(id, 10, n10), iteration(id, 100, n100)]);

const iterations = reactN([100, 100], [120, 110], [200, 130]);

const verdict = (checks: ReturnType<typeof checkTargets>, start: string) => {
  const found = checks.filter((c) => c.target.startsWith(start));
  if (found.length === 0) throw new Error(`no target starting with ${start}`);
  return found.map((c) => c.met);
};

describe('bench report', () => {
  it('fits fixed + N × marginal through the N=10 and N=100 medians', () => {
    const model = costModel(iterations, 'actorloop_journal');
    // 10 × 200 = fixed + 10m, 100 × 130 = fixed + 100m → m = 122.2, fixed = 777.8
    expect(model?.marginalUs).toBeCloseTo(11_000 / 90, 6);
    expect(model?.fixedUs).toBeCloseTo(2000 - (10 * 11_000) / 90, 6);
    expect(costModel(iterations, 'missing')).toBeUndefined();
  });

  it('judges each target on its own figures', () => {
    const checks = checkTargets(iterations, [], [], stuck, fanOut);
    expect(verdict(checks, '(c) per iteration ≤ 2× (b)')).toEqual([true, true]);
    expect(verdict(checks, '(c) flat in N')).toEqual([true]);
    // (d) is 200/120 = 1.67× (c) at N=10 and 130/110 = 1.18× at N=100.
    expect(verdict(checks, '(d) file journal ≤ +25 % per iteration')).toEqual([false, true]);
    expect(checks.find((c) => c.target.includes('N=10') && c.target.startsWith('(d) file journal'))?.measured).toBe('1.67×');
    expect(verdict(checks, 'stuck detection')).toEqual([true]);
    expect(verdict(checks, 'strategy fan-out')).toEqual([true]);
  });

  it('checks the concurrency targets on the interleaved and on the alone figures, separately', () => {
    const interleaved = [concurrency('xstate', 'shared', 1000), concurrency('actorloop', 'shared', 1400), concurrency('actorloop', 'perAgent', 1600)];
    const alone = [concurrency('xstate', 'shared', 800), concurrency('actorloop', 'shared', 1400), concurrency('actorloop', 'perAgent', 1100, 160)];
    const checks = checkTargets(iterations, interleaved, alone, stuck, fanOut);
    const wall = (mode: string, how: string) => checks.find((c) => c.target.includes(`(${mode}) wall`) && c.target.includes(how));
    expect(wall('shared', 'interleaved')).toMatchObject({ met: true, measured: '1.4×' });
    expect(wall('perAgent', 'interleaved')).toMatchObject({ met: false, measured: '1.6×' });
    expect(wall('shared', 'alone')).toMatchObject({ met: false, measured: '1.75×' });
    expect(wall('perAgent', 'alone')).toMatchObject({ met: true, measured: '1.38×' });
    const heap = checks.find((c) => c.target.includes('heap per in-flight agent (perAgent)') && c.target.includes('alone'));
    expect(heap).toMatchObject({ met: false, measured: '160 KB' });
  });

  it('checks (c) against half the AI SDK measured in the same pass, and falls back to the anchors without it', () => {
    // (f) 300 µs at N=10, 180 µs at N=100: (c)'s 120 and 110 are 0.8× and 1.22× of the halves.
    const withAiSdk = [...iterations, iteration('ai_sdk', 10, 300), iteration('ai_sdk', 100, 180)];
    const checks = checkTargets(withAiSdk, [], [], stuck, fanOut, withAiSdk);
    const measured = checks.filter((c) => c.target.includes('half the AI SDK (f) measured here'));
    expect(measured.map((c) => [c.measured, c.met])).toEqual([
      ['0.8× of the limit', true],
      ['1.22× of the limit', false],
      ['0.8× of the limit', true],
      ['1.22× of the limit', false],
    ]);
    expect(measured.filter((c) => c.target.endsWith('alone in its own processes'))).toHaveLength(2);
    expect(checks.some((c) => c.target.includes('anchor'))).toBe(false);
    // Without (f): the anchor rows, interleaved only.
    const anchored = checkTargets(iterations, [], [], stuck, fanOut, iterations).filter((c) => c.target.includes('AI SDK'));
    expect(anchored.map((c) => c.target.includes('anchor'))).toEqual([true, true, true, true]);
  });

  it('pairs each group with its own (b): a machine that slows down between groups does not move the ratio', () => {
    // Three processes; the machine runs twice as slow in the second. Within each, (c) is 1.2×, 1.3×, 1.4× (b).
    const groups = [
      [concurrency('xstate', 'shared', 1000), concurrency('actorloop', 'shared', 1200)],
      [concurrency('xstate', 'shared', 2000), concurrency('actorloop', 'shared', 2600)],
      [concurrency('xstate', 'shared', 1000), concurrency('actorloop', 'shared', 1400)],
    ];
    // Pooled: (c)'s median 1400 against (b)'s 1000 would say 1.4×.
    const pooled = [concurrency('xstate', 'shared', 1000), concurrency('actorloop', 'shared', 1400), concurrency('actorloop', 'perAgent', 1400)];
    const [xstate, shared, perAgent] = withPairedRatios(pooled, groups);
    expect(xstate?.wallVsXstate?.samples).toEqual([1, 1, 1]);
    expect(shared?.wallVsXstate?.samples.map((r) => Number(r.toFixed(3)))).toEqual([1.2, 1.3, 1.4]);
    expect(shared?.wallVsXstate?.median).toBeCloseTo(1.3, 9);
    // No group measured it: no paired figure, and the check falls back to the pooled ratio.
    expect(perAgent?.wallVsXstate).toBeUndefined();
    const checks = checkTargets(iterations, withPairedRatios(pooled, groups), [], stuck, fanOut);
    expect(checks.find((c) => c.target.includes('(shared) wall'))).toMatchObject({ measured: '1.3×', met: true });
    expect(checks.find((c) => c.target.includes('(shared) wall'))?.target).toContain('median of 3 paired ratios');
    expect(checks.find((c) => c.target.includes('(perAgent) wall'))).toMatchObject({ measured: '1.4×', met: true });
    expect(checks.find((c) => c.target.includes('(perAgent) wall'))?.target).not.toContain('paired');
  });

  it('checks the per-iteration targets on the alone figures too, when there are some', () => {
    const alone = reactN([50, 50], [120, 90], [140, 100]);
    const checks = checkTargets(iterations, [], [], stuck, fanOut, alone);
    const aloneChecks = checks.filter((c) => c.target.endsWith('alone in its own processes'));
    // (c) is 2.4× and 1.8× (b) alone; (d) 1.17× and 1.11× (c).
    expect(aloneChecks.filter((c) => c.target.startsWith('(c) per iteration ≤ 2× (b)')).map((c) => c.met)).toEqual([false, true]);
    expect(aloneChecks.filter((c) => c.target.startsWith('(d) file journal ≤ +25 % per iteration')).map((c) => c.met)).toEqual([true, true]);
    // The interleaved verdicts are unchanged by them.
    const interleaved = checks.filter((c) => c.target.startsWith('(c) per iteration ≤ 2× (b)') && !c.target.includes('alone'));
    expect(interleaved.map((c) => c.met)).toEqual([true, true]);
    expect(checkTargets(iterations, [], [], stuck, fanOut).some((c) => c.target.includes('alone'))).toBe(false);
  });

  it('renders both concurrency tables and every target row', () => {
    const environment: Environment = {
      date: '2026-11-23T00:00:00.000Z',
      cpu: 'test cpu',
      cores: 2,
      memoryGb: 24,
      node: 'v20.0.0',
      platform: 'linux-x64',
      loadAtStart: 0,
      gcExposed: true,
      fileCreateUs: 300,
    };
    const interleaved = [concurrency('xstate', 'shared', 1000), concurrency('actorloop', 'shared', 1400)];
    const alone = [concurrency('xstate', 'shared', 800), concurrency('actorloop', 'shared', 1400)];
    const targets = checkTargets(iterations, interleaved, alone, stuck, fanOut);
    const markdown = renderMarkdown({
      quick: false,
      environment,
      iterations,
      iterationsAlone: iterations,
      concurrency: interleaved,
      concurrencyAlone: alone,
      stuck,
      fanOut,
      notes: ['a note'],
      targets,
    });
    expect(markdown).toContain('contenders interleaved round by round in one process');
    expect(markdown.match(/### react-N/g)).toHaveLength(2);
    expect(markdown).toContain('contenders interleaved round by round in each process');
    expect(markdown).toContain('each contender and mode alone in its own processes');
    expect(markdown).toContain('| 1.75× |');
    // Without groups there is no paired ratio to show.
    expect(markdown).toContain('| 1.4× | n/a |');
    for (const target of targets) expect(markdown).toContain(`| ${target.target} | ${target.measured} |`);
    expect(markdown).toContain('- a note');
    // No long runs (a quick run): no table for them.
    expect(markdown).not.toContain('### Long runs');

    const longRuns = [iteration('xstate', 1000, 100), iteration('actorloop', 1000, 132), iteration('actorloop_journal', 1000, 156)];
    const withLong = renderMarkdown({ quick: false, environment, iterations, iterationsAlone: [], longRuns, concurrency: [], concurrencyAlone: [], stuck, fanOut, notes: [], targets });
    expect(withLong).toContain('### Long runs: react-1000, a conversation of 2000 messages by the end');
    // (c): 132 against its own N=100 (110) and N=10 (120), and against (b) at N=1000 (100).
    expect(withLong).toContain('| (actorloop) | 132 | 1.2× | 1.1× | 1.32× |');
    expect(withLong).toContain('| (actorloop_journal) | 156 | 1.2× | 0.78× | 1.56× |');
  });
});
