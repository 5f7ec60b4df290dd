/**
 * The front door stays small: `actorloop` exports at most 80 names (values and types), and no
 * error class — errors live on `actorloop/errors`.
 */
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

function exportedNames(file: string): string[] {
  const program = ts.createProgram([file], { module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, allowImportingTsExtensions: true, noEmit: true, strict: true });
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(file);
  const symbol = source === undefined ? undefined : checker.getSymbolAtLocation(source);
  return symbol === undefined ? [] : checker.getExportsOfModule(symbol).map((s) => s.getName());
}

describe('the front door', () => {
  const names = exportedNames(fileURLToPath(new URL('../src/index.ts', import.meta.url)));

  it('exports at most 80 names', () => {
    expect(names.length).toBeGreaterThan(40);
    expect(names.length).toBeLessThanOrEqual(80);
  });

  it('leaves error classes to actorloop/errors', () => {
    expect(names.filter((name) => name.endsWith('Error'))).toEqual([]);
  });

  it('offers both model providers', () => {
    expect(names).toEqual(expect.arrayContaining(['openAICompatible', 'OpenAICompatibleOptions', 'anthropic', 'AnthropicOptions']));
  });

  it('offers one result type for every kind of run', () => {
    expect(names).toEqual(expect.arrayContaining(['RunResult', 'LoopResult', 'StrategyResult', 'JournalEntry']));
  });
});

describe('actorloop/web', () => {
  // The two protocols' handlers, the protocol seam (sub-runs and their waits included), and the Node adapter: nothing more.
  it('exports the AG-UI and AI SDK handlers, the protocol seam and the Node adapter', () => {
    const web = exportedNames(fileURLToPath(new URL('../src/web/index.ts', import.meta.url)));
    expect(web.sort()).toEqual(
      [
        'AG_UI_INTERRUPT',
        'AiSdkAgentPart',
        'AiSdkChunk',
        'AiSdkRunMetadata',
        'JournalReader',
        'ResumeRequest',
        'RunAgents',
        'RunDetails',
        'RunView',
        'StartRequest',
        'StreamEncoder',
        'StrategyHandlerOptions',
        'StrategyStart',
        'SubRun',
        'TreeWaits',
        'WebHandler',
        'WebHandlerOptions',
        'WebProtocol',
        'agUiProtocol',
        'aiSdkProtocol',
        'createAgUiHandler',
        'createAiSdkHandler',
        'createRunHandler',
        'createStrategyHandler',
        'toNodeListener',
      ].sort(),
    );
  });
});
