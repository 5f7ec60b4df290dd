/**
 * `npm run viz`: regenerates `visualizations/` from the machines exported by `machines/index.ts`.
 *
 * Writes `<name>.mmd` per machine, `index.html`, and `vendor/mermaid.min.js` (the locally
 * installed Mermaid bundle, so the page needs no network), then renders the page in headless
 * Chromium to export `<name>.svg` per machine. Files of machines that are no longer exported
 * are removed.
 *
 * Flags: `--no-svg` skips Chromium (the SVGs are left as they are); `--screenshot <file.png>`
 * also saves a full-page screenshot of the rendered index. Without Chromium the SVG step is
 * skipped with a warning; `CHROMIUM_PATH` overrides `/usr/bin/chromium`.
 *
 * @example
 * ```sh
 * npm run viz
 * npm run viz -- --screenshot /tmp/viz.png
 * ```
 */
import { existsSync } from 'node:fs';
import { copyFile, mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';
import type { Browser, Page } from 'playwright-core';
import { z } from 'zod';
import * as machineExports from '../machines/index.ts';
import { discoverMachines, generateVisualizations, MERMAID_BUNDLE_PATH } from '../src/viz/index.ts';

/** The repository's `visualizations/` folder. */
export const VIZ_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '..', 'visualizations');

/** The Chromium binary (Debian package `chromium`); `CHROMIUM_PATH` overrides it. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Flags for a quiet, offline, sandbox-free headless Chromium (CI runs as root, without a GPU). */
export const CHROMIUM_ARGS: readonly string[] = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/**
 * Launches the system Chromium through playwright-core (which downloads no browser of its own).
 *
 * @example
 * ```ts
 * const browser = await launchChromium();
 * try { … } finally { await browser.close(); }
 * ```
 */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM_PATH, args: [...CHROMIUM_ARGS], timeout: 30_000 });
}

/** What the page reports on `window.__viz` once rendering is over (see `src/viz/indexHtml.ts`). */
export const VizStatus = z.object({ done: z.boolean(), rendered: z.array(z.string()), errors: z.array(z.string()) });
export type VizStatus = z.infer<typeof VizStatus>;

/**
 * Waits until the index page has rendered every diagram and returns its report.
 *
 * @example
 * ```ts
 * await page.goto(url);
 * const status = await waitForDiagrams(page); // { done: true, rendered: ['agent', …], errors: [] }
 * ```
 */
export async function waitForDiagrams(page: Page): Promise<VizStatus> {
  await page.waitForSelector('body[data-viz-done]', { timeout: 30_000 });
  // Expressions as strings: this project compiles without the DOM library.
  return VizStatus.parse(await page.evaluate('window.__viz'));
}

/**
 * The rendered SVG of one diagram on the index page, as standalone XML. XMLSerializer rather
 * than outerHTML: a `.svg` file must be well-formed XML (`<br/>` inside labels).
 *
 * @example
 * ```ts
 * await writeFile('agent.svg', await diagramSvg(page, 'agent'));
 * ```
 */
export async function diagramSvg(page: Page, name: string): Promise<string> {
  const selector = JSON.stringify(`#diagram-${name} svg`);
  const svg: unknown = await page.evaluate(`new XMLSerializer().serializeToString(document.querySelector(${selector}))`);
  if (typeof svg !== 'string' || !svg.startsWith('<svg')) throw new Error(`viz: no rendered diagram "${name}" on the page.`);
  return svg;
}

/** The Mermaid bundle inside node_modules, and its version. */
export async function installedMermaid(): Promise<{ readonly bundle: string; readonly version: string }> {
  const require = createRequire(import.meta.url);
  const pkg: unknown = JSON.parse(await readFile(require.resolve('mermaid/package.json'), 'utf8'));
  const version = typeof pkg === 'object' && pkg !== null && 'version' in pkg ? String(pkg.version) : 'unknown';
  return { bundle: require.resolve('mermaid/dist/mermaid.min.js'), version };
}

async function writeSources(): Promise<string[]> {
  const machines = discoverMachines(machineExports);
  const mermaid = await installedMermaid();
  const files = generateVisualizations(machines, { mermaidVersion: mermaid.version });
  await mkdir(join(VIZ_DIR, dirname(MERMAID_BUNDLE_PATH)), { recursive: true });
  for (const file of files) await writeFile(join(VIZ_DIR, file.path), file.content);
  await copyFile(mermaid.bundle, join(VIZ_DIR, MERMAID_BUNDLE_PATH));
  await copyFile(join(dirname(mermaid.bundle), '..', 'LICENSE'), join(VIZ_DIR, dirname(MERMAID_BUNDLE_PATH), 'mermaid.LICENSE'));
  // A machine removed from machines/index.ts must not leave its old diagram behind.
  const names = new Set(machines.map((m) => m.name));
  for (const entry of await readdir(VIZ_DIR)) {
    const match = /^(.+)\.(mmd|svg)$/.exec(entry);
    if (match?.[1] !== undefined && !names.has(match[1])) await rm(join(VIZ_DIR, entry));
  }
  console.log(`viz: wrote ${files.map((f) => f.path).join(', ')} and ${MERMAID_BUNDLE_PATH} (Mermaid ${mermaid.version})`);
  return machines.map((m) => m.name);
}

async function renderSvgs(names: readonly string[], screenshot: string | undefined): Promise<void> {
  const browser = await launchChromium();
  try {
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    const consoleErrors: string[] = [];
    page.on('console', (msg) => {
      if (msg.type() === 'error') consoleErrors.push(msg.text());
    });
    await page.goto(pathToFileURL(join(VIZ_DIR, 'index.html')).href);
    const status = await waitForDiagrams(page);
    if (status.errors.length > 0 || consoleErrors.length > 0) {
      throw new Error(`viz: the page failed to render: ${[...status.errors, ...consoleErrors].join('; ')}`);
    }
    for (const name of names) await writeFile(join(VIZ_DIR, `${name}.svg`), `${await diagramSvg(page, name)}\n`);
    console.log(`viz: rendered ${names.map((n) => `${n}.svg`).join(', ')} with ${CHROMIUM_PATH}`);
    if (screenshot !== undefined) {
      await page.screenshot({ path: screenshot, fullPage: true });
      console.log(`viz: screenshot saved to ${screenshot}`);
    }
  } finally {
    await browser.close();
  }
}

async function main(argv: readonly string[]): Promise<void> {
  const shotAt = argv.indexOf('--screenshot');
  const screenshot = shotAt === -1 ? undefined : argv[shotAt + 1];
  if (shotAt !== -1 && screenshot === undefined) throw new Error('viz: --screenshot needs a file path, e.g. --screenshot /tmp/viz.png');
  const names = await writeSources();
  if (argv.includes('--no-svg')) return;
  if (!existsSync(CHROMIUM_PATH)) {
    console.warn(`viz: no Chromium at ${CHROMIUM_PATH}; SVGs not updated (install the "chromium" package or set CHROMIUM_PATH).`);
    return;
  }
  await renderSvgs(names, screenshot);
}

const invokedDirectly = process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href;
if (invokedDirectly) {
  main(process.argv.slice(2)).catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exitCode = 1;
  });
}
