/**
 * What retrieving experiences costs at run start: `relevant(task, { topK: 5, project, tools })` on
 * a memory store of generated, varied active experiences (global, project- and tool-scoped),
 * against generated tasks. Text comes from a seeded generator, so every run measures the same
 * corpus and the same queries. The first query is reported apart: it fills the index's memos.
 */
import { performance } from 'node:perf_hooks';
import { createMemoryExperienceStore, type SeedExperience } from '../src/experiences/index.ts';
import { summarize, type Summary } from './stats.ts';

export interface ExperienceRetrievalOptions {
  /** Experiences in the store. */
  readonly items: number;
  /** Queries timed. */
  readonly queries: number;
  /** Queries run first and not timed (after the first, cold one). Default 20. */
  readonly warmup?: number;
  /** Seed of the text generator. Default 1. */
  readonly seed?: number;
}

export interface ExperienceRetrievalResult {
  readonly items: number;
  /** Milliseconds per `relevant()` call, over the timed queries. */
  readonly perQueryMs: Summary;
  /** The very first query on the filled store, in ms. */
  readonly firstQueryMs: number;
  /** Filling the store (validation, redaction hook, indexing), in ms. */
  readonly fillMs: number;
  /** Experiences returned per timed query, on average (shows the queries find something). */
  readonly meanResults: number;
}

const TOOLS = ['npm', 'pnpm', 'git', 'docker', 'vitest', 'jest', 'postgres', 'redis', 'kafka', 'webpack', 'vite', 'eslint', 'prettier', 'tsc', 'pip', 'cargo', 'kubectl', 'helm', 'terraform', 'aws', 'nginx', 'playwright', 'cypress', 'curl', 'ssh', 'make', 'gradle', 'maven', 'poetry', 'deno'];
const SUBJECTS = ['the install', 'the build', 'the test suite', 'the migration', 'the deploy', 'the linter', 'the type check', 'the dev server', 'the database client', 'the HTTP client', 'the cache', 'the queue consumer', 'the cron job', 'the login flow', 'the upload handler', 'the search endpoint', 'the bundle', 'the container', 'the release script', 'the e2e run'];
const PROBLEMS = ['times out', 'fails with permission denied', 'runs out of memory', 'gets rate limited with 429', 'hangs without output', 'reports a type error', 'cannot resolve a module', 'loses its connection', 'gives flaky results', 'crashes on start', 'is very slow', 'rejects the TLS certificate', 'writes a corrupt lockfile', 'picks the wrong Node version', 'leaks file handles'];
const CONTEXTS = ['on CI', 'after a dependency upgrade', 'on large inputs', 'behind the corporate proxy', 'in watch mode', 'on Windows runners', 'with many open files', 'on the first run', 'under parallel load', 'in the staging cluster', 'inside the monorepo', 'with a cold cache'];
const ACTIONS = ['retry with exponential backoff', 'pin the exact version', 'clear the cache before running', 'raise the timeout', 'run it with verbose logging first', 'split the work into smaller batches', 'set the environment variable explicitly', 'regenerate the lockfile', 'restart the service and wait for health', 'read the full log before changing code', 'switch to the forks pool', 'use the mirror registry', 'check the credentials scope', 'run the step in isolation', 'reduce concurrency'];
const SYLLABLES = ['bil', 'ling', 'auth', 'or', 'der', 'pay', 'ment', 'in', 'vo', 'ice', 'ship', 'ping', 'cat', 'a', 'log', 'user', 'report', 'ana', 'lyt', 'ics', 'ware', 'house', 'notif', 'y', 'search', 'feed', 'tenant', 'quota'];
const PROJECTS = 50;

/** Mulberry32: small, fast, seeded; enough to vary generated text deterministically. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function generator(seed: number) {
  const next = random(seed);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)] as T;
  const component = (): string => `${pick(SYLLABLES)}${pick(SYLLABLES)}${next() < 0.5 ? pick(SYLLABLES) : ''}`;
  const project = (): string => `/repos/project-${Math.floor(next() * PROJECTS)}`;
  return {
    experience(): SeedExperience {
      const roll = next();
      const tool = pick(TOOLS);
      const scope = roll < 0.7 ? { kind: 'global' as const } : roll < 0.85 ? { kind: 'project' as const, path: project() } : { kind: 'tool' as const, name: tool };
      return {
        condition: `${pick(SUBJECTS)} of the ${component()} service ${pick(PROBLEMS)} ${pick(CONTEXTS)}`,
        rule: `${pick(ACTIONS)} and, with ${tool}, ${pick(ACTIONS)}`,
        evidence: [`run ${Math.floor(next() * 1e6)}: ${pick(PROBLEMS)}`],
        sourceRunIds: [`run_${Math.floor(next() * 1e6)}`],
        scope,
        confidence: Math.round(next() * 100) / 100,
        status: 'active',
      };
    },
    query(): { task: string; project: string; tools: string[] } {
      const tools = [...new Set(Array.from({ length: 5 }, () => pick(TOOLS)))];
      const task =
        `Fix it: ${pick(SUBJECTS)} of the ${component()} service ${pick(PROBLEMS)} ${pick(CONTEXTS)}. ` +
        `Use ${pick(tools)} to reproduce it, then make the change and ${pick(ACTIONS)} if needed; keep the ${component()} tests green.`;
      return { task, project: `${project()}/packages/${component()}`, tools };
    },
  };
}

/**
 * @example
 * ```ts
 * const r = await measureExperienceRetrieval({ items: 10_000, queries: 200 });
 * console.log(r.perQueryMs.median, r.perQueryMs.p90);
 * ```
 */
export async function measureExperienceRetrieval(options: ExperienceRetrievalOptions): Promise<ExperienceRetrievalResult> {
  const gen = generator(options.seed ?? 1);
  const seeds = Array.from({ length: options.items }, () => gen.experience());
  const filling = performance.now();
  const store = createMemoryExperienceStore(seeds);
  const fillMs = performance.now() - filling;
  const relevant = (q: { task: string; project: string; tools: string[] }) => store.relevant(q.task, { topK: 5, project: q.project, tools: q.tools });

  const first = gen.query();
  const cold = performance.now();
  relevant(first);
  const firstQueryMs = performance.now() - cold;
  for (let i = 0; i < (options.warmup ?? 20); i++) relevant(gen.query());

  const samples: number[] = [];
  let found = 0;
  for (let i = 0; i < options.queries; i++) {
    const query = gen.query();
    const start = performance.now();
    const results = relevant(query);
    samples.push(performance.now() - start);
    found += results.length;
  }
  await store.close();
  return { items: store.size, perQueryMs: summarize(samples), firstQueryMs, fillMs, meanResults: found / Math.max(1, options.queries) };
}
