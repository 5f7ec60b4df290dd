/**
 * `useChat` in real Chromium against the AI SDK handler: a React page bundled with esbuild from a
 * fixture, served beside the handler by one Node server on 127.0.0.1. The page shows the streamed
 * answer and a held tool call; a click on its Approve button lets the call run and the run finish,
 * a sub-agent's held call included.
 */
import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { AgentRun } from '../../src/agent/types.ts';
import { scriptedModel } from '../../src/testing/index.ts';
import { createAiSdkHandler } from '../../src/web/aiSdk.ts';
import type { WebHandler } from '../../src/web/handler.ts';
import { toNodeListener } from '../../src/web/node.ts';
import { CHROMIUM_PATH, launchChromium } from '../../scripts/viz.ts';
import { stopTrackedAgents, trackAgent } from '../support/agents.ts';
import { add } from './support.ts';
import { defineTool } from '../../src/tools/defineTool.ts';
import { z } from 'zod';
import { trackedSystem } from '../system/helpers.ts';
import { delegation } from './fixtures/delegation.ts';

const HTML = '<!doctype html><html><head><meta charset="utf-8"><title>chat</title></head><body><div id="root"></div><script type="module" src="/app.js"></script></body></html>';

/** The page and its bundle at `/` and `/app.js`, the handler under `/api/chat`. */
async function servePage(bundle: string, handler: WebHandler): Promise<{ url: string; close(): Promise<void> }> {
  const api = toNodeListener(handler);
  const server: Server = createServer((request, response) => {
    if (request.url?.startsWith('/api/chat') === true) return api(request, response);
    if (request.url === '/app.js') return response.writeHead(200, { 'content-type': 'text/javascript' }).end(bundle);
    if (request.url === '/' || request.url?.startsWith('/?') === true) return response.writeHead(200, { 'content-type': 'text/html' }).end(HTML);
    // The browser's own favicon request, answered so the page's console stays empty.
    response.writeHead(request.url === '/favicon.ico' ? 204 : 404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

// CI installs Debian's chromium, so there this suite always runs and fails without it; on a
// developer machine without chromium it is skipped with a note, like the other browser tests.
const runBrowser = process.env.CI === 'true' || existsSync(CHROMIUM_PATH);
if (!runBrowser) console.warn(`[web] ${CHROMIUM_PATH} not found: skipping the useChat browser test (apt-get install chromium to run it).`);

describe.runIf(runBrowser)('useChat in Chromium', () => {
  let browser: Browser;
  let bundle: string;
  let page: Page | undefined;
  let served: { close(): Promise<void> } | undefined;
  const pageErrors: string[] = [];

  beforeAll(async () => {
    const built = await build({
      entryPoints: [fileURLToPath(new URL('./fixtures/chatPage.js', import.meta.url))],
      bundle: true,
      write: false,
      format: 'esm',
      platform: 'browser',
      define: { 'process.env.NODE_ENV': '"production"' },
      logLevel: 'silent',
    });
    bundle = built.outputFiles[0]?.text ?? '';
    browser = await launchChromium();
  }, 120_000); // generous: bundling React and the AI SDK and starting Chromium are slow on a loaded machine

  /** A new tab whose errors and console errors are collected in `pageErrors`. */
  async function openPage(): Promise<Page> {
    const opened = await browser.newPage();
    opened.on('pageerror', (error) => pageErrors.push(error.message));
    opened.on('console', (message) => {
      if (message.type() === 'error') pageErrors.push(message.text());
    });
    return opened;
  }

  afterEach(async () => {
    await page?.close();
    page = undefined;
    stopTrackedAgents();
    await served?.close();
    served = undefined;
  });

  afterAll(async () => {
    await browser?.close();
  });

  it('shows the streamed answer and the held call; Approve lets the call run and the run finish', async () => {
    const model = scriptedModel([{ text: 'I will add them.', toolCalls: [{ name: 'add', arguments: { a: 2, b: 3 } }] }, { text: 'The sum is 5.' }]);
    const agent = trackAgent({ model: { provider: model, stream: true }, tools: [add(true)] });
    const runs: AgentRun[] = [];
    const server = await servePage(bundle, createAiSdkHandler(agent, { onRun: (run) => runs.push(run) }));
    served = server;
    page = await openPage();
    await page.goto(server.url);

    await page.fill('input[name=task]', 'Add 2 and 3');
    await page.click('button.send');

    // The first response ends at the wait: the text so far and the call asking for approval.
    const held = page.locator('.tool[data-tool=add][data-state=approval-requested]');
    await held.waitFor({ timeout: 30_000 });
    expect(await page.locator('article.assistant p.text').allTextContents()).toEqual(['I will add them.']);
    expect(await held.locator('code.input').textContent()).toBe('{"a":2,"b":3}');
    expect(runs).toHaveLength(1);
    expect(runs[0]?.phase()).toBe('awaitingHuman');

    await held.locator('button.approve').click();

    await page.locator('main[data-status=ready] .tool[data-state=output-available]').waitFor({ timeout: 30_000 });
    await page.locator('main[data-status=ready] article.assistant p.text:nth-of-type(2)').waitFor({ timeout: 30_000 });
    expect(await page.locator('.tool output').textContent()).toBe('5');
    expect(await page.locator('article.assistant p.text').allTextContents()).toEqual(['I will add them.', 'The sum is 5.']);
    // One assistant message, continued by the answer's response.
    expect(await page.locator('article.assistant').count()).toBe(1);
    expect((await runs[0]?.result)?.text).toBe('The sum is 5.');
    expect(pageErrors).toEqual([]);
  }, 60_000);

  it("shows a sub-agent's held call; Approve sends the answer on its own, the call runs and the served run answers", async () => {
    const { system } = trackedSystem();
    let calls = 0;
    const add = defineTool({ name: 'add', description: 'Add', input: z.object({ a: z.number(), b: z.number() }), execute: ({ a, b }) => (calls++, a + b), requiresConfirmation: true });
    delegation(system, [add], 'add');
    const server = await servePage(bundle, createAiSdkHandler(system.get('lead').agent, { system }));
    served = server;
    page = await openPage();
    await page.goto(server.url);
    await page.fill('input[name=task]', 'What is 20 + 22?');
    await page.click('button.send');

    const held = page.locator('main[data-status=ready] .tool[data-tool=add][data-state=approval-requested]');
    await held.waitFor({ timeout: 30_000 });
    expect(await page.locator('.tool[data-tool=delegate_to_researcher]').getAttribute('data-state')).toBe('input-available');
    await held.locator('button.approve').click();

    await page.locator('main[data-status=ready] article.assistant p.text:nth-of-type(4)').waitFor({ timeout: 30_000 });
    expect(await page.locator('article.assistant p.text').allTextContents()).toEqual(['Asking the researcher.', 'Adding them.', 'It is 42.', 'The researcher says 42.']);
    expect(await page.locator('.tool[data-tool=add] output').textContent()).toBe('42');
    expect(await page.locator('article.assistant').count()).toBe(1);
    expect(calls).toBe(1);
    expect(pageErrors).toEqual([]);
  }, 60_000);

  it('resumes the answer after a reload mid-stream (useChat resume): it completes exactly once', async () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const hold = defineTool({ name: 'hold', description: 'Holds', input: z.object({ q: z.string() }), execute: async ({ q }) => (await released, `held ${q}`) });
    const model = scriptedModel([{ text: 'Let me look.', toolCalls: [{ name: 'hold', arguments: { q: 'x' } }] }, { text: 'Found it.' }]);
    const agent = trackAgent({ model: { provider: model, stream: true }, tools: [hold] });
    const runs: AgentRun[] = [];
    const server = await servePage(bundle, createAiSdkHandler(agent, { onRun: (run) => runs.push(run) }));
    served = server;
    page = await openPage();
    await page.goto(`${server.url}?chat=chat-reload&resume`);
    await page.fill('input[name=task]', 'Look it up');
    await page.click('button.send');
    await page.locator('.tool[data-tool=hold][data-state=input-available]').waitFor({ timeout: 30_000 });

    // The page goes away while the run holds in its tool; the reloaded page resumes the chat's stream.
    await page.reload();
    await page.locator('.tool[data-tool=hold][data-state=input-available]').waitFor({ timeout: 30_000 });
    expect(await page.locator('article.assistant p.text').allTextContents()).toEqual(['Let me look.']);
    release();

    await page.locator('main[data-status=ready] article.assistant p.text:nth-of-type(2)').waitFor({ timeout: 30_000 });
    expect(await page.locator('article.assistant p.text').allTextContents()).toEqual(['Let me look.', 'Found it.']);
    expect(await page.locator('article.assistant').count()).toBe(1);
    expect(await page.locator('.tool output').textContent()).toBe('held x');
    expect(runs).toHaveLength(1);
    expect((await runs[0]?.result)?.text).toBe('Found it.');
    // Once the run has ended, a reload finds nothing to resume.
    await page.reload();
    await page.locator('main[data-status=ready]').waitFor({ timeout: 30_000 });
    expect(await page.locator('article.assistant').count()).toBe(0);
    expect(pageErrors).toEqual([]);
  }, 60_000);
});
