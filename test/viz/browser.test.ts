/**
 * `visualizations/index.html` in real Chromium: served from 127.0.0.1 (and opened from
 * file://), every machine's diagram renders as an SVG naming each of its states and
 * transitions, with no console errors and no request leaving the page's own origin.
 */
import { createReadStream, existsSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join, normalize, sep } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AnyStateNode } from 'xstate';
import * as machineExports from '../../machines/index.ts';
import { discoverMachines, mermaidId, toMermaid } from '../../src/viz/index.ts';
import { CHROMIUM_PATH, diagramSvg, launchChromium, VIZ_DIR, waitForDiagrams } from '../../scripts/viz.ts';
import type { VizStatus } from '../../scripts/viz.ts';

const TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.mmd': 'text/plain; charset=utf-8',
};

/** A static server for visualizations/ that refuses anything outside it. */
function serve(root: string): Promise<Server> {
  const server = createServer((req, res) => {
    const path = normalize(join(root, decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname)));
    if (path !== root && !path.startsWith(root + sep)) {
      res.writeHead(403).end();
      return;
    }
    const file = path.endsWith(sep) ? join(path, 'index.html') : path;
    stat(file).then(
      (s) => {
        if (!s.isFile()) throw new Error('not a file');
        res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream' });
        createReadStream(file).pipe(res);
      },
      () => res.writeHead(404).end(),
    );
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

function allStates(node: AnyStateNode): AnyStateNode[] {
  return Object.values(node.states).flatMap((child) => [child, ...allStates(child)]);
}

interface Visit {
  readonly consoleErrors: string[];
  readonly foreignRequests: string[];
}

/** Opens `url`, recording console errors and aborting (and recording) requests to other origins. */
async function open(page: Page, url: string): Promise<Visit> {
  const visit: Visit = { consoleErrors: [], foreignRequests: [] };
  const origin = new URL(url).origin;
  page.on('console', (msg) => {
    if (msg.type() === 'error') visit.consoleErrors.push(msg.text());
  });
  page.on('pageerror', (error) => visit.consoleErrors.push(error.message));
  await page.route('**/*', async (route) => {
    const target = route.request().url();
    const local = url.startsWith('file:') ? target.startsWith('file:') : new URL(target).origin === origin;
    if (local) return route.continue();
    visit.foreignRequests.push(target);
    return route.abort();
  });
  await page.goto(url);
  return visit;
}

const machines = discoverMachines(machineExports);
let browser: Browser;
let server: Server;
let baseUrl: string;
// One load of the served page is shared by the first two tests: loading Mermaid takes seconds.
let page: Page;
let visit: Visit;
let status: VizStatus;

beforeAll(async () => {
  server = await serve(VIZ_DIR);
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  browser = await launchChromium();
  page = await browser.newPage();
  visit = await open(page, `${baseUrl}index.html`);
  status = await waitForDiagrams(page);
}, 60_000); // generous: starting Chromium and parsing Mermaid's 3.5 MB bundle is slow on a loaded CI machine

afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => server?.close(resolve));
});

// CI (.ci/run) installs Debian's chromium, so there this suite always runs and fails without it.
// On a developer machine that has no chromium yet, it is skipped with a note instead of failing
// the quick start's `npm test`.
const runBrowser = process.env.CI === 'true' || existsSync(CHROMIUM_PATH);
if (!runBrowser) console.warn(`[viz] ${CHROMIUM_PATH} not found: skipping the browser test (apt-get install chromium to run it).`);

describe.runIf(runBrowser)('visualizations/index.html in Chromium', () => {
  it('renders every machine offline, with no console errors', () => {
    expect(status.errors).toEqual([]);
    expect(status.rendered).toEqual(machines.map((m) => m.name));
    expect(visit.consoleErrors).toEqual([]);
    expect(visit.foreignRequests).toEqual([]);
  });

  it('shows every state by name and every transition label of each machine', async () => {
    for (const { name, machine } of machines) {
      const svg = await diagramSvg(page, name);
      for (const state of allStates(machine.root)) {
        // Mermaid gives each state's group an id "svg-<diagram>-state-<mermaid id>-<n>".
        const label: unknown = await page.evaluate(
          `document.querySelector('#diagram-${name} g[id^="svg-${name}-state-${mermaidId(state)}-"]')?.textContent ?? null`,
        );
        expect(label, `state ${state.id} in the ${name} diagram`).toEqual(expect.stringContaining(state.key));
      }
      const labels = toMermaid(machine)
        .split('\n')
        .flatMap((line) => /-->\s*\S+\s*:\s*(.+)$/.exec(line)?.[1]?.split('<br/>') ?? []);
      expect(labels.length).toBeGreaterThan(2);
      for (const text of labels) expect(svg, `transition "${text}" in the ${name} diagram`).toContain(text.replace(/&/g, '&amp;'));
    }
  });

  it('works from file:// and its exported SVG files are well-formed XML', async () => {
    const local = await browser.newPage();
    try {
      const localVisit = await open(local, pathToFileURL(join(VIZ_DIR, 'index.html')).href);
      const localStatus = await waitForDiagrams(local);
      expect(localStatus.rendered).toEqual(machines.map((m) => m.name));
      expect(localVisit.consoleErrors).toEqual([]);
      expect(localVisit.foreignRequests).toEqual([]);
      for (const { name } of machines) {
        const text = JSON.stringify(await readFile(join(VIZ_DIR, `${name}.svg`), 'utf8'));
        const parsed: unknown = await local.evaluate(`(() => {
          const doc = new DOMParser().parseFromString(${text}, 'image/svg+xml');
          return doc.querySelector('parsererror') === null && doc.documentElement.localName === 'svg';
        })()`);
        expect(parsed, `visualizations/${name}.svg parses as SVG`).toBe(true);
      }
    } finally {
      await local.close();
    }
  }, 60_000);
});
