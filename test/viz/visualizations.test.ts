/**
 * The committed `visualizations/` must match what `npm run viz` would generate now: the
 * diagrams are regenerated in memory from machines/index.ts and compared byte for byte.
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import * as machineExports from '../../machines/index.ts';
import { discoverMachines, generateVisualizations, MERMAID_BUNDLE_PATH } from '../../src/viz/index.ts';
import { installedMermaid, VIZ_DIR } from '../../scripts/viz.ts';

const STALE = 'is stale: run `npm run viz` and commit visualizations/';

async function sha256(path: string): Promise<string> {
  return createHash('sha256')
    .update(await readFile(path))
    .digest('hex');
}

describe('visualizations/', () => {
  it('holds the current diagram of every machine and the current index page', async () => {
    const mermaid = await installedMermaid();
    const files = generateVisualizations(discoverMachines(machineExports), { mermaidVersion: mermaid.version });
    expect(files.length).toBeGreaterThan(2);
    for (const file of files) {
      const path = join(VIZ_DIR, file.path);
      expect(existsSync(path), `visualizations/${file.path} is missing: run \`npm run viz\``).toBe(true);
      expect(await readFile(path, 'utf8'), `visualizations/${file.path} ${STALE}`).toBe(file.content);
    }
  });

  it('holds no diagram of a machine that is no longer exported, and an SVG of each one that is', async () => {
    const names = discoverMachines(machineExports).map((m) => m.name);
    const entries = await readdir(VIZ_DIR);
    const mmd = entries.filter((e) => e.endsWith('.mmd')).sort();
    expect(mmd, `visualizations/ ${STALE}`).toEqual(names.map((n) => `${n}.mmd`).sort());
    for (const name of names) {
      expect(entries, `visualizations/${name}.svg is missing: run \`npm run viz\` with Chromium installed`).toContain(`${name}.svg`);
    }
  });

  it('ships the same Mermaid bundle as the installed mermaid package', async () => {
    const mermaid = await installedMermaid();
    expect(await sha256(join(VIZ_DIR, MERMAID_BUNDLE_PATH)), `visualizations/${MERMAID_BUNDLE_PATH} ${STALE}`).toBe(
      await sha256(mermaid.bundle),
    );
  });
});
