/**
 * `actorloop/machines` is pure: it bundles for a platform with no Node built-ins (a browser, a
 * worker, Stately Studio) and pulls in nothing of the runtime.
 */
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';

describe('machines bundle', () => {
  it('bundles for platform neutral with no Node built-in and no runtime module', async () => {
    const result = await build({
      entryPoints: ['machines/index.ts'],
      bundle: true,
      platform: 'neutral',
      format: 'esm',
      write: false,
      metafile: true,
      logLevel: 'silent',
    });
    expect(result.errors).toEqual([]);
    const inputs = Object.keys(result.metafile.inputs);
    expect(inputs.filter((path) => path.startsWith('node:'))).toEqual([]);
    const ours = inputs.filter((path) => !path.includes('node_modules'));
    expect(ours.filter((path) => !path.startsWith('machines/') && !path.startsWith('src/core/'))).toEqual([]);
    expect(ours).toContain('machines/agent.machine.ts');
  }, 30_000);
});
