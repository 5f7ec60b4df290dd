/**
 * Benchmark results as markdown (stdout, bench/RESULTS.md) and the target checklist.
 */
import type { ConcurrencyResult } from './concurrency.ts';
import type { Environment } from './environment.ts';
import type { FanOutResult } from './fanout.ts';
import type { McpCallResult } from './mcp.ts';
import type { CedarResult } from './cedar.ts';
import type { HooksResult } from './hooks.ts';
import type { TraceResult } from './traces.ts';
import type { RestoreResult } from './restore.ts';
import type { ExperienceRetrievalResult } from './experiences.ts';
import type { PostgresSection } from './postgres.ts';
import type { WebResult } from './web.ts';
import type { ServerCpu } from './webProcess.ts';
import { postgresRows, postgresTargets } from './postgresReport.ts';
import type { IterationResult } from './method.ts';
import { fmt } from './stats.ts';
import type { StuckResult } from './stuck.ts';

export interface TargetCheck {
  readonly target: string;
  readonly measured: string;
  /** null: not measured in this run (e.g. without the peers). */
  readonly met: boolean | null;
}

export interface BenchResults {
  readonly quick: boolean;
  /** The sections `--only` picked; undefined: every section. */
  readonly only?: readonly string[];
  readonly peers: boolean;
  readonly environment: Environment;
  /** 1-minute load average when the last figure was taken. */
  readonly loadAtEnd: number;
  readonly iterations: readonly IterationResult[];
  readonly http: readonly IterationResult[];
  readonly concurrency: readonly ConcurrencyResult[];
  readonly stuck: readonly StuckResult[];
  readonly fanOut?: FanOutResult;
  readonly mcp?: McpCallResult;
  readonly cedar?: CedarResult;
  readonly hooks?: HooksResult;
  readonly traces?: TraceResult;
  readonly restore?: RestoreResult;
  readonly experiences?: ExperienceRetrievalResult;
  readonly web?: WebResult;
  /** The durable runtime on PostgreSQL, or why it was skipped. */
  readonly postgres?: PostgresSection;
  readonly targets: readonly TargetCheck[];
}

type Measured = Omit<BenchResults, 'targets'>;

const perIteration = (rows: readonly IterationResult[], id: string, n: number) => rows.find((r) => r.id === id && r.n === n)?.perIterationUs.median;
const atScale = (rows: readonly ConcurrencyResult[], id: string, mode: string, agents: number) => rows.find((r) => r.id === id && r.mode === mode && r.agents === agents);
const ratio = (a: number | undefined, b: number | undefined) => (a === undefined || b === undefined ? undefined : a / b);
const show = (x: number | undefined | null, suffix = '') => (x === undefined || x === null ? 'n/a' : `${fmt(x)}${suffix}`);

/** Every target of the sections measured, met or not, from the figures of one run. */
export function checkTargets(results: Measured): TargetCheck[] {
  const checks: TargetCheck[] = [];
  const measured = (section: string) => results.only === undefined || results.only.includes(section);
  /** `figures`: [what, value]; met when every value is known and passes. */
  const add = (section: string, target: string, figures: readonly (readonly [string, number | undefined])[], pass: (value: number) => boolean, unit = '×') => {
    if (!measured(section)) return;
    const known = figures.map(([, v]) => v).filter((v): v is number => v !== undefined);
    checks.push({
      target,
      measured: figures.map(([what, v]) => `${what}${what === '' ? '' : ': '}${show(v, unit)}`).join('; '),
      met: known.length === figures.length && known.length > 0 ? known.every(pass) : null,
    });
  };
  const ns = [...new Set(results.iterations.map((r) => r.n))].sort((a, b) => a - b);
  const perN = (over: string, under: string) => ns.map((n) => [`react-${n}`, ratio(perIteration(results.iterations, over, n), perIteration(results.iterations, under, n))] as const);
  add('iterations', 'per iteration ≤ 1.5× the XState floor (b)', perN('actorloop', 'xstate'), (v) => v <= 1.5);
  add('iterations', 'per iteration ≥ 3× cheaper than the Vercel AI SDK (AI SDK / (c))', perN('ai_sdk', 'actorloop'), (v) => v >= 3);
  add('iterations', 'durable mode ≤ 1.25× in-memory per iteration ((d) / (c))', perN('actorloop_durable', 'actorloop'), (v) => v <= 1.25);
  const http = ratio(perIteration(results.http, 'actorloop_http', 10), perIteration(results.http, 'bare_openai', 10));
  add('http', 'loopback HTTP ≤ 1.15× the bare openai loop per iteration', [['react-10', http]], (v) => v <= 1.15);
  const modes = [['runs of one agent', 'shared'], ['separate agents', 'perAgent']] as const;
  for (const [agents, limit] of [[1000, 1.5], [10000, 1.2]] as const) {
    const floor = atScale(results.concurrency, 'xstate', 'shared', agents)?.wallMs.median;
    const walls = modes.map(([what, mode]) => [what, ratio(atScale(results.concurrency, 'actorloop', mode, agents)?.wallMs.median, floor)] as const);
    add('concurrency', `${agents.toLocaleString('en').replace(/,/g, ' ')} concurrent agents: wall ≤ ${limit}× the XState floor (b)`, walls, (v) => v <= limit);
  }
  const heaps = modes.map(([what, mode]) => [what, atScale(results.concurrency, 'actorloop', mode, 10000)?.retainedKbPerAgent ?? undefined] as const);
  add('concurrency', '10 000 concurrent agents: ≤ 40 KB retained heap per agent', heaps, (v) => v <= 40, ' KB');
  add('cedar', 'Cedar gate, 50 policies: ≤ 0.2 ms per decision (median)', [['', results.cedar === undefined ? undefined : results.cedar.perCallUs.median / 1000]], (v) => v <= 0.2, ' ms');
  // A run's loop at react-100 is the yardstick (the quick run measures react-10 only).
  const loop = perIteration(results.iterations, 'actorloop', 100) ?? perIteration(results.iterations, 'actorloop', 10);
  add('traces', 'trace building ≤ 5 % of an iteration', [['', ratio(results.traces?.perIterationUs.median, loop)]], (v) => v <= 0.05, '');
  const restoreMs = (iterations: number, segment: boolean) => results.restore?.rows.find((r) => r.checkpoints && r.segment === segment && r.iterations === iterations)?.ms.median;
  add(
    'restore',
    'restoring a crashed run at 500 iterations ≤ 2× at 5 (checkpoints, median)',
    [
      ['its own log', ratio(restoreMs(500, false), restoreMs(5, false))],
      ['a journal segment', ratio(restoreMs(500, true), restoreMs(5, true))],
    ],
    (v) => v <= 2,
  );
  add('experiences', 'experience retrieval at 10 000 items ≤ 20 ms per run start (median)', [['', results.experiences?.perQueryMs.median]], (v) => v <= 20, ' ms');
  add('web', 'web streaming ≤ 1.2× `agent.tokens$` per token (AG-UI handler over loopback HTTP, median)', [['', ratio(results.web?.agUiUs.median, results.web?.directUs.median)]], (v) => v <= 1.2);
  const marginal = results.web?.marginal.usPerToken;
  add('web', 'per-token streaming overhead (marginal) ≤ 1.2× `agent.tokens$` (AG-UI handler over loopback HTTP, slope of medians)', [['', ratio(marginal?.agUi, marginal?.direct)]], (v) => v <= 1.2);
  const cpu = results.web?.serverCpu;
  add(
    'web',
    "the server's CPU per token through the AG-UI handler over loopback HTTP ≤ 1.2× `agent.tokens$` read in process (the page in its own process, medians)",
    [
      [`at ${results.web?.tokens} tokens`, ratio(cpu?.usPerToken.agUi.median, cpu?.usPerToken.direct.median)],
      ['marginal', ratio(cpu?.marginalUs.agUi, cpu?.marginalUs.direct)],
    ],
    (v) => v <= 1.2,
  );
  add('stuck', 'stuck detection on two 1 MB outputs < 20 ms (p90)', [['', results.stuck[0]?.ms.p90]], (v) => v < 20, ' ms');
  for (const t of postgresTargets(results.postgres)) add('postgres', t.target, t.figures, t.pass, t.unit);
  const f = results.fanOut;
  add('fanout', 'strategy fan-out: wall ≤ 1.1× the slowest branch', [['', f === undefined ? undefined : f.wallMs.median / f.slowestMs]], (v) => v <= 1.1);
  return checks;
}

function hookRows(hooks: HooksResult): string[] {
  const none = hooks.rows.find((row) => row.id === 'none')?.perIterationUs.median;
  return hooks.rows.map(
    (row) =>
      `| ${row.id === 'none' ? 'none' : row.id === 'all' ? 'all seven' : `\`${row.id}\``} | ${fmt(row.perIterationUs.median)} (${fmt(row.perIterationUs.p10)}) | ${show(ratio(row.perIterationUs.median, none), '×')} | ${row.hookCalls} |`,
  );
}

function webRows(web: WebResult): string[] {
  const c = web.concurrent;
  const row = (what: string, us: WebResult['directUs'], events?: WebResult['directUs']) =>
    `| ${what} | ${fmt(us.median)} (${fmt(us.p10)}) | ${fmt(us.p90)} | ${show(ratio(us.median, web.directUs.median), '×')} | ${events === undefined ? web.tokens : `${fmt(events.median)} (${fmt(events.p90)})`} |`;
  const costRow = (what: string, way: keyof WebResult['fixedMs']) => {
    const fixed = web.fixedMs[way];
    const slope = web.marginal.usPerToken[way];
    return `| ${what} | ${fmt(fixed.median)} (${fmt(fixed.p10)}) | ${fmt(fixed.p90)} | ${fmt(slope)} | ${show(ratio(slope, web.marginal.usPerToken.direct), '×')} |`;
  };
  return [
    '### Web streaming',
    '',
    `One run streaming ${web.tokens} tokens from a scripted model with no delay, ${web.directUs.count} runs of each, interleaved. Over HTTP: the handler on Node http (\`toNodeListener\`) on 127.0.0.1, ` +
      'server and client in one process, the client a plain `fetch` reader parsing each event; every reply reassembled and checked. ' +
      'A stream joins the text deltas that waited for its reader into one event (text events per run).',
    '',
    '| read by | µs per token median (p10) | p90 | vs `tokens$` | text events per run median (p90) |',
    '|---|---|---|---|---|',
    row('`agent.tokens$` in process', web.directUs),
    row('AG-UI handler over HTTP', web.agUiUs, web.textEvents.agUi),
    row('AG-UI handler called in process, its body read directly (no HTTP)', web.agUiInProcessUs, web.textEvents.agUiInProcess),
    row('AI SDK handler over HTTP', web.aiSdkUs, web.textEvents.aiSdk),
    row('the transport alone: Node http answering a recorded AG-UI stream of as many tokens (no agent, no handler)', web.transportUs, web.textEvents.transport),
    row('`agent.tokens$` written by hand as SSE on Node http, one event a token (no handler)', web.byHandUs, web.textEvents.byHand),
    '',
    `The two costs apart: a one-token run is what a request costs before any token (ms, ${web.fixedMs.direct.count} runs of each); the marginal cost of a token is the slope ` +
      `between the medians of ${web.marginal.tokens[0]}- and ${web.marginal.tokens[1]}-token runs (µs per token, ${web.fixedMs.direct.count} runs of each length).`,
    '',
    '| read by | one-token run ms median (p10) | p90 | marginal µs per token | vs `tokens$` marginal |',
    '|---|---|---|---|---|',
    costRow('`agent.tokens$` in process', 'direct'),
    costRow('AG-UI handler over HTTP', 'agUi'),
    costRow('AG-UI handler called in process (no HTTP)', 'agUiInProcess'),
    costRow('AI SDK handler over HTTP', 'aiSdk'),
    costRow('the transport alone (recorded stream, no agent, no handler)', 'transport'),
    costRow('`agent.tokens$` written by hand as SSE over HTTP (no handler)', 'byHand'),
    '',
    `The AG-UI handler over HTTP against \`tokens$\` written by hand over HTTP: ${show(ratio(web.agUiUs.median, web.byHandUs.median), '×')} per token at ${web.tokens} tokens, ` +
      `${show(ratio(web.marginal.usPerToken.agUi, web.marginal.usPerToken.byHand), '×')} marginal, ${show(ratio(web.fixedMs.agUi.median, web.fixedMs.byHand.median), '×')} a one-token run.`,
    '',
    ...serverCpuRows(web),
    `${c.runs} runs started at once through the AG-UI handler, ${c.tokensPerRun} tokens each, server and client in one process; every run's text checked exact.`,
    '',
    '| wall ms | runs/s | tokens/s | RSS before MB | peak RSS MB |',
    '|---|---|---|---|---|',
    `| ${fmt(c.wallMs)} | ${fmt(c.runsPerSecond)} | ${fmt(c.tokensPerSecond)} | ${c.rssBeforeMb} | ${c.peakRssMb} |`,
    '',
  ];
}

/** The web rows with the page in its own process: what serving costs the server's CPU. */
function serverCpuRows(web: WebResult): string[] {
  const cpu = web.serverCpu;
  const netRow = (what: string, way: keyof ServerCpu['usPerToken']) => {
    const net = netOfOrder(cpu, way);
    return (
      `| ${what} | ${fmt(net.usPerToken)} | ${show(ratio(net.usPerToken, cpu.usPerToken.direct.median), '×')} | ${fmt(net.fixedMs)} | ${show(ratio(net.fixedMs, cpu.fixedMs.direct.median), '×')} | ` +
      `${fmt(net.marginalUs)} | ${show(ratio(net.marginalUs, cpu.marginalUs.direct), '×')} |`
    );
  };
  const row = (what: string, way: keyof ServerCpu['usPerToken']) => {
    const us = cpu.usPerToken[way];
    const fixed = cpu.fixedMs[way];
    const events = cpu.textEvents[way];
    return (
      `| ${what} | ${fmt(us.median)} (${fmt(us.p10)}) | ${fmt(us.p90)} | ${show(ratio(us.median, cpu.usPerToken.direct.median), '×')} | ` +
      `${fmt(fixed.median)} (${fmt(fixed.p10)}) | ${fmt(cpu.marginalUs[way])} | ${show(ratio(cpu.marginalUs[way], cpu.marginalUs.direct), '×')} | ${fmt(events.median)} (${fmt(events.p90)}) |`
    );
  };
  return [
    `The server's CPU with the page in its own process: a child process (as a browser is) reads each run over HTTP with the same \`fetch\` reader and checks its text, ` +
      `while the server process counts its own CPU time (user + system, \`process.cpuUsage\`) per run; \`tokens$\` is read in the server process. ` +
      `${cpu.usPerToken.direct.count} runs of each, interleaved; ${web.tokens} tokens, one-token runs, and the slope between ${web.marginal.tokens[0]} and ${web.marginal.tokens[1]} tokens.`,
    '',
    '| served as | CPU µs per token median (p10) | p90 | vs `tokens$` | one-token run CPU ms median (p10) | marginal CPU µs per token | vs `tokens$` marginal | text events per run median (p90) |',
    '|---|---|---|---|---|---|---|---|',
    row('`agent.tokens$` read in process', 'direct'),
    row('AG-UI handler over HTTP', 'agUi'),
    row('AI SDK handler over HTTP', 'aiSdk'),
    row('the transport alone (recorded stream, no agent, no handler)', 'transport'),
    row('`agent.tokens$` written by hand as SSE over HTTP (no handler)', 'byHand'),
    row("the bench's order to the page and its answer alone (no HTTP; in every row but `tokens$`, once a run)", 'order'),
    '',
    "The handler rows net of the bench's order to the page (`tokens$` pays none): the order row's median taken from the handler row's (per token, " +
      'per one-token run) and its slope from the slope; the gross figures are those above.',
    '',
    '| served as, net of the order | CPU µs per token | vs `tokens$` | one-token run CPU ms | vs `tokens$` | marginal CPU µs per token | vs `tokens$` marginal |',
    '|---|---|---|---|---|---|---|',
    netRow('AG-UI handler over HTTP', 'agUi'),
    netRow('AI SDK handler over HTTP', 'aiSdk'),
    '',
  ];
}

/** A row of `cpu` with the order's cost (the bench's own, paid once a run) taken out. */
function netOfOrder(cpu: ServerCpu, way: keyof ServerCpu['usPerToken']): { usPerToken: number; fixedMs: number; marginalUs: number } {
  return {
    usPerToken: cpu.usPerToken[way].median - cpu.usPerToken.order.median,
    fixedMs: cpu.fixedMs[way].median - cpu.fixedMs.order.median,
    marginalUs: cpu.marginalUs[way] - cpu.marginalUs.order,
  };
}

function iterationTable(rows: readonly IterationResult[]): string[] {
  const ns = [...new Set(rows.map((r) => r.n))].sort((a, b) => a - b);
  const head = ['contender', ...ns.flatMap((n) => [`N=${n}: µs median (p10)`, 'CPU µs', 'vs (b)'])];
  const out = [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`];
  for (const id of [...new Set(rows.map((r) => r.id))]) {
    const cells = [rows.find((r) => r.id === id)?.label ?? id];
    for (const n of ns) {
      const r = rows.find((x) => x.id === id && x.n === n);
      cells.push(r === undefined ? 'n/a' : `${fmt(r.perIterationUs.median)} (${fmt(r.perIterationUs.p10)})`, show(r?.cpuPerIterationUs.median), show(ratio(r?.perIterationUs.median, perIteration(rows, 'xstate', n)), '×'));
    }
    out.push(`| ${cells.join(' | ')} |`);
  }
  return out;
}

function concurrencyTable(rows: readonly ConcurrencyResult[]): string[] {
  const first = rows[0];
  if (first === undefined) return [];
  const floor = atScale(rows, 'xstate', 'shared', first.agents)?.wallMs.median;
  const out = [
    `### ${first.agents.toLocaleString('en').replace(/,/g, ' ')} concurrent agents, react-${first.n}, ${first.delayMs} ms model (ideal wall ${first.n * first.delayMs} ms)`,
    '',
    '| contender | agents are | wall ms median (p10) | vs (b) | CPU ms | retained KB per agent (after GC) | peak KB per agent |',
    '|---|---|---|---|---|---|---|',
  ];
  for (const r of rows) {
    const mode = r.mode === 'shared' ? 'runs of one definition' : 'separate definitions';
    out.push(
      `| ${r.label} | ${mode} | ${fmt(r.wallMs.median)} (${fmt(r.wallMs.p10)}) | ${show(ratio(r.wallMs.median, floor), '×')} | ${fmt(r.cpuMs.median)} | ${show(r.retainedKbPerAgent)} | ${fmt(r.peakKbPerAgent)} |`,
    );
  }
  return out;
}

/**
 * The whole report as markdown.
 *
 * @example
 * ```ts
 * process.stdout.write(renderMarkdown(results));
 * ```
 */
export function renderMarkdown(results: BenchResults): string {
  const env = results.environment;
  const out: string[] = [
    `Date: ${env.date.slice(0, 10)} · Machine: ${env.cpu}, ${env.cores} cores, ${env.memoryGb} GB · Node ${env.node} (${env.platform})`,
    `Load average (1 min): ${env.loadAtStart} at start, ${results.loadAtEnd} at the end · creating a small file: ${fmt(env.fileCreateUs)} µs (median of 200)` +
      `${results.quick ? ' · **quick smoke run: figures are rough**' : ''}${results.peers ? '' : ' · peers not run (npm run bench:peers runs them)'}` +
      `${results.only === undefined ? '' : ` · only: ${results.only.join(', ')}`}`,
    '',
  ];
  if (results.iterations.length > 0) {
    out.push(
      'Every framework runs react-N against the same stateless scripted model through its own custom-model interface; every run is checked (the answer, and exactly N model and N−1 tool calls). ' +
        'Contenders take turns round by round in one process; each run is one sample; CPU is process CPU per round.',
      '',
      '### react-N: cost per loop iteration',
      '',
      ...iterationTable(results.iterations),
      '',
    );
  }
  for (const agents of [...new Set(results.concurrency.map((r) => r.agents))]) {
    out.push(...concurrencyTable(results.concurrency.filter((r) => r.agents === agents)), '');
  }
  if (results.http.length > 0) {
    const bare = perIteration(results.http, 'bare_openai', 10);
    const floor = perIteration(results.http, 'xstate_http', 10);
    out.push('### Loopback HTTP: react-10 against a stateless OpenAI-compatible server in its own process', '');
    out.push('| contender | µs per iteration median (p10) | CPU µs (this process) | vs (a) | vs (b) |', '|---|---|---|---|---|');
    for (const r of results.http) {
      out.push(`| ${r.label} | ${fmt(r.perIterationUs.median)} (${fmt(r.perIterationUs.p10)}) | ${fmt(r.cpuPerIterationUs.median)} | ${show(ratio(r.perIterationUs.median, bare), '×')} | ${show(ratio(r.perIterationUs.median, floor), '×')} |`);
    }
    out.push('');
  }
  const f = results.fanOut;
  if (results.stuck.length > 0 || f !== undefined) out.push('### Stuck detection and fan-out', '', '| check | median | p90 | note |', '|---|---|---|---|');
  for (const s of results.stuck) {
    out.push(`| two ${s.outputBytes / 1024 / 1024} MB error outputs: ${s.label} | ${fmt(s.ms.median)} ms | ${fmt(s.ms.p90)} ms | compares ${s.capChars} chars; result ${fmt(s.score)} |`);
  }
  if (f !== undefined) {
    out.push(
      `| strategy fan-out: vote over ${f.branches} sub-agent branches (${f.branchDelaysMs.join('/')} ms models) | ${fmt(f.wallMs.median)} ms | ${fmt(f.wallMs.p90)} ms | ` +
        `slowest branch ${f.slowestMs} ms, sum ${f.sumMs} ms: ${fmt(f.wallMs.median / f.slowestMs)}× the slowest |`,
    );
  }
  if (results.stuck.length > 0 || f !== undefined) out.push('');
  if (results.mcp !== undefined) {
    const mcp = results.mcp;
    out.push(
      '### A tool call through a stdio MCP server',
      '',
      '| tool | µs per call median (p10) | p90 |',
      '|---|---|---|',
      `| local echo (\`defineTool\`) | ${fmt(mcp.localUs.median)} (${fmt(mcp.localUs.p10)}) | ${fmt(mcp.localUs.p90)} |`,
      `| server-everything \`echo\` over stdio | ${fmt(mcp.mcpUs.median)} (${fmt(mcp.mcpUs.p10)}) | ${fmt(mcp.mcpUs.p90)} |`,
      '',
    );
  }
  if (results.cedar !== undefined) {
    const cedar = results.cedar;
    out.push(
      '### The Cedar gate',
      '',
      '| policy set | µs per decision median (p10) | p90 |',
      '|---|---|---|',
      `| ${cedar.policies} policies (permits by group and argument, forbids on path patterns) | ${fmt(cedar.perCallUs.median)} (${fmt(cedar.perCallUs.p10)}) | ${fmt(cedar.perCallUs.p90)} |`,
      '',
    );
  }
  if (results.hooks !== undefined) {
    out.push(
      '### Lifecycle hooks',
      '',
      `react-${results.hooks.n}, actorloop with every default on; each hook a sync no-op (\`onError\` never runs in a run that succeeds: its row is the cost of having one).`,
      '',
      '| hooks | µs per iteration median (p10) | vs none | hook calls |',
      '|---|---|---|---|',
      ...hookRows(results.hooks),
      '',
    );
  }
  if (results.traces !== undefined) {
    const traces = results.traces;
    out.push(
      '### Traces',
      '',
      '| run read back | entries | µs per iteration median (p10) | p90 |',
      '|---|---|---|---|',
      `| react-${traces.n} through actorloop | ${traces.entries} | ${fmt(traces.perIterationUs.median)} (${fmt(traces.perIterationUs.p10)}) | ${fmt(traces.perIterationUs.p90)} |`,
      '',
    );
  }
  if (results.restore !== undefined) {
    const restore = results.restore;
    out.push(
      '### Restoring a crashed run',
      '',
      'A react-N run killed right before its last model call, resumed from its log: from `agent.resume()` to the first live model call (reading, rebuilding and replaying the run). ' +
        'With checkpoints (the default) the store reads the last checkpoint, its bases and what followed it; without, the whole log, and the run is replayed from its input. ' +
        'A run whose id the store picked is kept in a journal segment with other runs; its first resume moves it to a log of its own, copying what a resume reads of it (the segment rows include that).',
      '',
      '| iterations | checkpoints | kept in | ms median (p10) | p90 | CPU ms | records read | bytes read | log bytes |',
      '|---|---|---|---|---|---|---|---|---|',
      ...restore.rows.map(
        (r) =>
          `| ${r.iterations} | ${r.checkpoints ? 'yes' : 'no'} | ${r.segment ? 'a segment' : 'its own log'} | ${fmt(r.ms.median)} (${fmt(r.ms.p10)}) | ${fmt(r.ms.p90)} | ${fmt(r.cpuMs.median)} | ${r.recordsRead} | ${r.bytesRead} | ${r.logBytes} |`,
      ),
      '',
    );
  }
  if (results.experiences !== undefined) {
    const experiences = results.experiences;
    out.push(
      '### Experience retrieval',
      '',
      '| store | ms per run start median (p10) | p90 | first query |',
      '|---|---|---|---|',
      `| ${experiences.items} active experiences, top 5 | ${fmt(experiences.perQueryMs.median)} (${fmt(experiences.perQueryMs.p10)}) | ${fmt(experiences.perQueryMs.p90)} | ${fmt(experiences.firstQueryMs)} |`,
      '',
    );
  }
  if (results.web !== undefined) out.push(...webRows(results.web));
  if (results.postgres !== undefined) out.push('### Durable runtime on PostgreSQL', '', ...postgresRows(results.postgres), '');
  out.push('### Targets', '', '| target | measured | met |', '|---|---|---|');
  for (const t of results.targets) out.push(`| ${t.target} | ${t.measured} | ${t.met === null ? 'not measured' : t.met ? 'yes' : '**no**'} |`);
  out.push('');
  return out.join('\n');
}
