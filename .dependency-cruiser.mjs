/**
 * The layers, enforced by `npm run lint`: core → machines → runtime → orchestration, each
 * importing only from the layers before it, and no import cycles anywhere.
 */
const RUNTIME = '^src/(run|conversation|context|events|executor|experiences|hydration|inference|inspect|knowledge|persistence|policy|progress|prompts|resilience|security|sessions|skills|telemetry|testing|tools|traces|viz)/';

export default {
  forbidden: [
    {
      name: 'no-cycles',
      comment: 'Files that import each other (types included) cannot be understood or moved one at a time.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'core-is-the-ground',
      comment: 'src/core holds the domain types and schemas every layer shares: it imports nothing of ours outside itself.',
      severity: 'error',
      from: { path: '^src/core/' },
      to: { path: '^(src|machines)/', pathNot: '^src/core/' },
    },
    {
      name: 'machines-are-pure',
      comment: 'machines/ imports only xstate, zod and src/core, so it bundles for any platform and pastes into Stately Studio.',
      severity: 'error',
      from: { path: '^machines/' },
      to: { pathNot: ['^machines/', '^src/core/', '^node_modules/(xstate|zod)/'] },
    },
    {
      name: 'runtime-below-orchestration',
      comment: 'The runtime (inference, tools, policy, executor, …) serves agents; it never reaches up into them.',
      severity: 'error',
      from: { path: RUNTIME },
      to: { path: '^src/(agent|strategies|system|postgres|cli)/|^src/(index|errors|memory)\\.ts$' },
    },
    {
      name: 'agent-below-strategies-and-system',
      comment: 'Strategies and the agent system build on agents; an agent knows neither.',
      severity: 'error',
      from: { path: '^src/agent/' },
      to: { path: '^src/(strategies|system|postgres|cli)/|^src/(index|errors|memory)\\.ts$' },
    },
    {
      name: 'strategies-beside-system',
      comment: 'Strategies and the agent system are independent of each other.',
      severity: 'error',
      from: { path: '^src/strategies/' },
      to: { path: '^src/(system|postgres|cli)/|^src/(index|errors|memory)\\.ts$' },
    },
    {
      name: 'system-below-the-front-door',
      severity: 'error',
      from: { path: '^src/system/' },
      to: { path: '^src/(strategies|postgres|cli)/|^src/(index|errors|memory)\\.ts$' },
    },
    {
      name: 'postgres-below-the-front-door',
      comment: 'The PostgreSQL runtime runs agents and strategies; only the front door and the command line know it.',
      severity: 'error',
      from: { path: '^src/postgres/' },
      to: { path: '^src/(system|cli)/|^src/(index|errors|memory)\\.ts$' },
    },
    {
      name: 'web-is-an-edge',
      comment: 'Serving runs to web pages builds on agents and their stores; nothing else knows it (errors.ts only lists its error).',
      severity: 'error',
      from: { path: '^(src|machines)/', pathNot: '^src/web/|^src/errors\\.ts$' },
      to: { path: '^src/web/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    exclude: { path: '^(bench|test|scripts)/' },
  },
};
