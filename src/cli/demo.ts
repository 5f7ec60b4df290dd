// `npm start`: the demo agent's run, printed live.
import { createDemoAgent, DEMO_TASK } from './demoAgent.ts';

const TASK = DEMO_TASK;

async function main(): Promise<void> {
  const { agent, real } = createDemoAgent();
  console.log(
    real
      ? `actorloop demo: real model "${agent.model.name}" via ${agent.model.provider.name}`
      : 'actorloop demo: no OPENAI_API_KEY / OPENAI_BASE_URL / ANTHROPIC_API_KEY set — using the SCRIPTED model (offline, deterministic).',
  );
  console.log(`task: ${TASK}\n`);
  agent.events$.subscribe(({ event, iteration }) => {
    switch (event.type) {
      case 'phase.entered':
        console.log(`[${iteration}] ${event.phase}`);
        break;
      case 'policy.evaluated':
        console.log(`      gate ${event.decision} ${event.tool}${event.reason ? ` (${event.reason})` : ''}`);
        break;
      case 'tool.finished':
        console.log(`      tool ${event.tool} → ${event.status} in ${event.durationMs} ms`);
        break;
      case 'recovery.triggered':
        console.log(`      recovery ${event.strategy} for ${event.tool}: ${event.error}`);
        break;
      case 'reasoning.completed':
        if (event.toolCalls.length > 0) console.log(`      model proposes ${event.toolCalls.map((c) => c.name).join(', ')}`);
        break;
      default:
        break;
    }
  });
  try {
    const result = await agent.run(TASK);
    console.log(`\nanswer: ${result.text}`);
    console.log(
      `iterations: ${result.iterations}, tokens: ${result.usage.totalTokens} (prompt ${result.usage.promptTokens}, completion ${result.usage.completionTokens}), cost: $${result.costUsd.toFixed(6)}, time: ${result.durationMs} ms`,
    );
  } catch (error) {
    console.error(`\nthe run did not finish: ${error instanceof Error ? error.message : String(error)}`);
    process.exitCode = 1;
  }
}

await main();
