import { describe, expect, it } from 'vitest';
import { createMachine } from 'xstate';
import * as machineExports from '../../machines/index.ts';
import { discoverMachines, generateVisualizations, MERMAID_BUNDLE_PATH } from '../../src/viz/generate.ts';
import { renderIndexHtml } from '../../src/viz/indexHtml.ts';

const toggle = createMachine({ id: 'toggle', initial: 'off', states: { off: { on: { flip: 'on' } }, on: {} } });

describe('discoverMachines', () => {
  it('finds every machine exported by machines/index.ts, sorted, named without the Machine suffix', () => {
    const found = discoverMachines(machineExports);
    expect(found.map((m) => [m.name, m.exportName])).toEqual([
      ['agent', 'agentMachine'],
      ['agentHost', 'agentHostMachine'],
      ['agentSystem', 'agentSystemMachine'],
      ['circuitBreaker', 'circuitBreakerMachine'],
      ['strategy', 'strategyMachine'],
      ['subAgent', 'subAgentMachine'],
    ]);
    expect(found[0]?.machine).toBe(machineExports.agentMachine);
  });

  it('ignores exports that are not machines and picks up a newly added one', () => {
    const found = discoverMachines({ zToggleMachine: toggle, helper: () => 1, config: { root: {} }, Machine: toggle, n: 3 });
    expect(found.map((m) => m.name)).toEqual(['Machine', 'zToggle']);
  });
});

describe('generateVisualizations', () => {
  it('produces one .mmd per machine and an index page, with a do-not-edit header', () => {
    const files = generateVisualizations([{ name: 'toggle', exportName: 'toggleMachine', machine: toggle }], {
      mermaidVersion: '11.0.0',
    });
    expect(files.map((f) => f.path)).toEqual(['toggle.mmd', 'index.html']);
    const mmd = files[0]?.content ?? '';
    expect(mmd.startsWith('%% toggleMachine (machine id "toggle")')).toBe(true);
    expect(mmd).toContain('npm run viz');
    expect(mmd).toContain('S_off --> S_on : flip');
    const html = files[1]?.content ?? '';
    expect(html).toContain(`<script src="${MERMAID_BUNDLE_PATH}"></script>`);
    expect(html).toContain('data-diagram="toggle"');
    expect(html).toContain('S_off --&gt; S_on : flip');
  });

  it('loads no script or style from the network', () => {
    const html = renderIndexHtml([], { mermaidScript: MERMAID_BUNDLE_PATH, mermaidVersion: '11.0.0' });
    expect(html).not.toMatch(/(src|href)="(https?:)?\/\//);
  });

  it('escapes descriptions and names into the page', () => {
    const html = renderIndexHtml(
      [{ name: 'x', exportName: 'xMachine', description: '<img src=x onerror=alert(1)> & more', mermaid: 'a --> b' }],
      { mermaidScript: MERMAID_BUNDLE_PATH, mermaidVersion: '11.0.0' },
    );
    expect(html).toContain('&lt;img src=x onerror=alert(1)&gt; &amp; more');
    expect(html).not.toContain('<img');
  });
});
