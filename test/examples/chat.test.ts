/**
 * `examples/chat` in real Chromium: the page posts a question to the example's server, draws
 * the demo agent's streamed answer and tool calls, and a click on Approve lets the held call run
 * and the run finish — with no request leaving the server's origin.
 */
import { existsSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startChatServer, type ChatServer } from '../../examples/chat/server.ts';
import { DEMO_TASK } from '../../src/cli/demoAgent.ts';
import { CHROMIUM_PATH, launchChromium } from '../../scripts/viz.ts';

const runBrowser = process.env.CI === 'true' || existsSync(CHROMIUM_PATH);
if (!runBrowser) console.warn(`[examples] ${CHROMIUM_PATH} not found: skipping the chat example browser test (apt-get install chromium to run it).`);

describe('examples/chat, served', () => {
  it('serves the page under a policy confining it to its server, and refuses other paths', async () => {
    const chat = await startChatServer({ port: 0, env: {} });
    try {
      const page = await fetch(chat.url);
      expect(page.status).toBe(200);
      expect(page.headers.get('content-security-policy')).toMatch(/default-src 'none'; script-src 'nonce-[^']+'.*connect-src 'self'/);
      const html = await page.text();
      expect(html).toContain('window.actorloopConversation');
      expect(html).not.toMatch(/https?:\/\/|<script src|<link rel="stylesheet"/);
      expect((await fetch(new URL('/package.json', chat.url))).status).toBe(404);
      // The AG-UI handler answers under /api/agent with its own typed refusal.
      const refused = await fetch(new URL('/api/agent', chat.url), { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
      expect(refused.status).toBe(400);
    } finally {
      await chat.close();
    }
  });
});

describe.runIf(runBrowser)('examples/chat in Chromium', () => {
  let browser: Browser;
  let chat: ChatServer;
  let page: Page;
  const consoleErrors: string[] = [];
  const foreignRequests: string[] = [];

  beforeAll(async () => {
    // An empty environment: the scripted offline model answers, whatever the machine has set.
    chat = await startChatServer({ port: 0, env: {} });
    browser = await launchChromium();
    page = await browser.newPage();
    page.on('console', (msg) => {
      if (msg.type() === 'error') consoleErrors.push(msg.text());
    });
    page.on('pageerror', (error) => consoleErrors.push(error.message));
    const origin = new URL(chat.url).origin;
    await page.route('**/*', async (route) => {
      const target = route.request().url();
      if (new URL(target).origin === origin) return route.continue();
      foreignRequests.push(target);
      return route.abort();
    });
    await page.goto(chat.url);
  }, 60_000); // starting Chromium is slow on a loaded machine

  afterAll(async () => {
    await browser?.close();
    await chat?.close();
  });

  it('streams the answer, shows the tool calls, and finishes the run once the held call is approved', async () => {
    expect(chat.real).toBe(false);
    await page.fill('#task', DEMO_TASK);
    await page.click('#send');

    // The scripted demo holds its divide call for a human.
    const approve = page.locator('.al-wait button[data-action="approve"]');
    await approve.waitFor({ timeout: 30_000 });
    expect(await page.locator('.al-user').textContent()).toBe(DEMO_TASK);
    const lookups = page.locator('.al-tool', { has: page.locator('.al-tool-name', { hasText: 'lookup_city' }) });
    expect(await lookups.count()).toBe(2);
    expect(JSON.parse((await lookups.first().locator('.al-args').textContent()) ?? '')).toEqual({ city: 'Tokyo' });
    expect(JSON.parse((await lookups.first().locator('.al-result').textContent()) ?? '')).toEqual({ city: 'Tokyo', population: 37_115_000, country: 'Japan' });
    const divide = page.locator('.al-tool', { has: page.locator('.al-tool-name', { hasText: 'divide' }) });
    expect(await divide.locator('.al-gate').textContent()).toMatch(/^gate: confirm/);
    expect(await divide.locator('.al-result').isVisible()).toBe(false);
    expect(await page.locator('.al-end').count()).toBe(0);

    await approve.click();
    await page.locator('.al-end', { hasText: 'finished (final_answer' }).waitFor({ timeout: 30_000 });
    expect(await divide.locator('.al-result').textContent()).toBe('48.392');
    expect(await page.locator('.al-wait.al-answered').count()).toBe(1);
    const answer = page.locator('.al-assistant').last();
    expect(await answer.textContent()).toBe('Tokyo (37.12 M) and Paris (11.28 M) together have about 48.39 million people.');
    expect(consoleErrors).toEqual([]);
    expect(foreignRequests).toEqual([]);
  }, 60_000);
});
