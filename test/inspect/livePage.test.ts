/**
 * The offline live page of `createInspector({ page: 'local' })`: what the relay serves (the page,
 * the diagrams, nothing else), and the page itself in real Chromium following a real agent run —
 * actor tree, highlighted current state, events — with no request leaving the relay's origin.
 */
import { existsSync } from 'node:fs';
import { request } from 'node:http';
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createActor, createMachine } from 'xstate';
import { z } from 'zod';
import { createAgent } from '../../src/agent/createAgent.ts';
import { createInspector, type Inspector } from '../../src/inspect/index.ts';
import { livePage } from '../../src/inspect/livePage.ts';
import { LIVE_PAGE_MAX_EVENTS } from '../../src/inspect/livePageScript.ts';
import { scriptedModel } from '../../src/testing/index.ts';
import { defineTool } from '../../src/tools/defineTool.ts';
import { CHROMIUM_PATH, launchChromium } from '../../scripts/viz.ts';

/** A GET with the path sent verbatim (fetch would normalise `..` away before sending). */
function rawGet(url: string, path: string): Promise<{ status: number; type: string | undefined; body: string }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request({ host: hostname, port, path, method: 'GET', agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, type: res.headers['content-type'], body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('the local page, served', () => {
  let inspector: Inspector | undefined;
  afterEach(async () => {
    await inspector?.stop();
    inspector = undefined;
  });

  it('serves a self-contained page that connects back to the relay, under a policy confining it to the relay', async () => {
    inspector = await createInspector({ page: 'local', port: 0 });
    const response = await rawGet(inspector.url, '/');
    expect(response.status).toBe(200);
    expect(response.type).toContain('text/html');
    expect(response.body).toContain('id="al-tree"');
    expect(response.body).toContain('<details id="al-machines">');
    expect(response.body).toContain('id="al-conversation"');
    expect(response.body).toContain("new WebSocket('ws://' + location.host)");
    expect(response.body).toContain('"agent"');
    expect(response.body).not.toMatch(/https?:\/\/|stately\.ai|<script src|<link rel="stylesheet"/);
    const headers = (await fetch(inspector.url)).headers;
    expect(headers.get('content-security-policy')).toMatch(/default-src 'none'.*script-src 'nonce-[^']+'.*connect-src 'self' ws:\/\/127\.0\.0\.1:\d+/);
  });

  it('serves the diagrams under /viz/<machine>.svg', async () => {
    inspector = await createInspector({ page: 'local' });
    const svg = await rawGet(inspector.url, '/viz/agent.svg');
    expect(svg.status).toBe(200);
    expect(svg.type).toBe('image/svg+xml');
    expect(svg.body.startsWith('<svg id="svg-agent"')).toBe(true);
  });

  it('refuses traversal, other files of visualizations/ and unknown paths', async () => {
    inspector = await createInspector({ page: 'local' });
    for (const path of [
      '/viz/../package.json',
      '/viz/..%2fpackage.json',
      '/viz/%2e%2e/package.json',
      '/viz/../visualizations/agent.svg',
      '/viz/agent.mmd',
      '/viz/index.html',
      '/viz/vendor/mermaid.min.js',
      '/viz/missing.svg',
      '/viz/',
      '/package.json',
      '/index.html',
      '/?x=1',
    ]) {
      expect((await rawGet(inspector.url, path)).status, path).toBe(404);
    }
  });

  it('keeps the Stately bridge as the default page, without the diagrams', async () => {
    inspector = await createInspector();
    expect((await rawGet(inspector.url, '/')).body).toContain('"https://stately.ai/inspect"');
    expect((await rawGet(inspector.url, '/viz/agent.svg')).status).toBe(404);
  });

  it('escapes the embedded diagram list', () => {
    const html = livePage({ nonce: 'n"><b>', diagrams: ['</script><img src=x>'] });
    expect(html).not.toContain('</script><img');
    expect(html).not.toContain('n"><b>');
  });
});

// CI (.ci/run) installs Debian's chromium, so there this suite always runs and fails without it;
// on a developer machine without chromium it is skipped with a note, like test/viz/browser.test.ts.
const runBrowser = process.env.CI === 'true' || existsSync(CHROMIUM_PATH);
if (!runBrowser) console.warn(`[inspect] ${CHROMIUM_PATH} not found: skipping the live page browser test (apt-get install chromium to run it).`);

describe.runIf(runBrowser)('the local page in Chromium', () => {
  let browser: Browser;
  let inspector: Inspector;
  let page: Page;
  const consoleErrors: string[] = [];
  const foreignRequests: string[] = [];

  beforeAll(async () => {
    inspector = await createInspector({ page: 'local', port: 0 });
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    page.on('console', (msg) => {
      if (msg.type() === 'error') consoleErrors.push(msg.text());
    });
    page.on('pageerror', (error) => consoleErrors.push(error.message));
    const origin = new URL(inspector.url).origin;
    await page.route('**/*', async (route) => {
      const target = route.request().url();
      if (new URL(target).origin === origin) return route.continue();
      foreignRequests.push(target);
      return route.abort();
    });
    await page.goto(inspector.url);
    await page.waitForSelector('#al-status.al-connected', { timeout: 30_000 });
    // The conversation comes first; the machines wait, collapsed, until opened.
    expect(await page.locator('#al-tree').isVisible()).toBe(false);
    await page.click('#al-machines > summary');
  }, 60_000); // generous: starting Chromium is slow on a loaded CI machine

  afterAll(async () => {
    // The page goes first: closing the relay under it would log a failed socket.
    await browser?.close();
    await inspector?.stop();
  });

  const currentStates = (machine: string): Promise<unknown> =>
    page.evaluate(
      `[...document.querySelectorAll('#al-panels section[data-machine="${machine}"] g.node.al-current')].map((g) => g.id.replace(/^svg-${machine}-state-|-[0-9]+$/g, ''))`,
    );

  it('follows a real agent run: tree, highlighted state while held in act, then done', async () => {
    let started!: () => void;
    const inAct = new Promise<void>((resolve) => (started = resolve));
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const wait = defineTool({
      name: 'wait',
      description: 'Waits until the test releases it',
      input: z.object({}),
      execute: async () => {
        started();
        await gate;
        return 'released';
      },
    });
    const agent = createAgent({
      id: 'agent_live',
      model: scriptedModel([{ toolCalls: [{ name: 'wait', arguments: {} }] }, { text: 'finished' }]),
      tools: [wait],
      observe: { inspect: inspector.inspect },
    });
    const run = agent.run('hold on');
    try {
      await inAct;
      // Selectors, not waitForFunction: the page's CSP forbids the eval that string predicates need.
      await page.waitForSelector('#al-panels section[data-machine="agent"] g.node.al-current[id^="svg-agent-state-S_running_act-"]', { timeout: 30_000 });
      expect(await currentStates('agent')).toEqual(['S_running_act']);
      expect(await page.getAttribute('#al-panels section[data-machine="agent"]', 'data-state')).toBe('running.act');

      const loop = page.locator('#al-tree li.al-actor', { has: page.locator(':scope > .al-label', { hasText: 'agent_live' }) });
      expect(await loop.locator(':scope > .al-name').textContent()).toBe('agent');
      expect(await loop.locator(':scope > .al-state').textContent()).toBe('running.act');
      expect(await loop.isVisible()).toBe(true);
      // The loop's invoked phases are its children; the tool's breaker is an actor of its own,
      // with a diagram of its own.
      expect(await loop.locator('li.al-actor > .al-name', { hasText: 'phases' }).count()).toBe(1);
      expect(await page.locator('#al-tree li.al-actor > .al-name', { hasText: 'circuitBreaker' }).count()).toBeGreaterThan(0);
      await page.waitForSelector('#al-panels section[data-machine="circuitBreaker"] g.node.al-current', { timeout: 30_000 });

      const png = await page.screenshot();
      expect(png.length).toBeGreaterThan(1000);
      expect([...png.subarray(0, 8)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

      release();
      expect((await run).text).toBe('finished');
      await page.waitForSelector('#al-panels section[data-machine="agent"][data-state="done"]', { timeout: 30_000 });
      expect(await currentStates('agent')).toEqual(['S_done']);
      await page.locator('#al-events .al-type', { hasText: 'reason.done' }).first().waitFor({ timeout: 30_000 });
    } finally {
      release();
      await run.catch(() => undefined);
      agent.stop();
    }
    expect(consoleErrors).toEqual([]);
    expect(foreignRequests).toEqual([]);
  }, 60_000);

  it('renders hostile actor ids, event types and state names as text', async () => {
    // No dot in it: XState reads dots in state names as paths.
    const hostile = '<img src=x onerror="__pwned=1">';
    const machine = createMachine({ id: '<b>m</b>', initial: hostile, states: { [hostile]: { on: { [`${hostile}.go`]: { actions: [] } } } } });
    const actor = createActor(machine, { id: `actor ${hostile}`, inspect: inspector.inspect }).start();
    actor.send({ type: `${hostile}.go` });
    await page.locator('#al-events .al-type', { hasText: `${hostile}.go` }).first().waitFor({ timeout: 30_000 });
    expect(await page.locator('#al-tree').textContent()).toContain(`actor ${hostile}`);
    expect(await page.evaluate(`document.querySelectorAll('#al-tree img, #al-events img, #al-tree b').length`)).toBe(0);
    expect(await page.evaluate('window.__pwned === undefined')).toBe(true);
    actor.stop();
    expect(consoleErrors).toEqual([]);
    expect(foreignRequests).toEqual([]);
  }, 60_000);

  it('keeps a bounded number of events, newest last', async () => {
    const actor = createActor(createMachine({ id: 'ticker' }), { inspect: inspector.inspect }).start();
    const total = LIVE_PAGE_MAX_EVENTS + 50;
    for (let i = 0; i < total; i++) actor.send({ type: `tick.${i}` });
    await page.locator('#al-events .al-type', { hasText: `tick.${total - 1}` }).waitFor({ timeout: 30_000 });
    expect(await page.locator('#al-events li').count()).toBe(LIVE_PAGE_MAX_EVENTS);
    expect(await page.locator('#al-events li:last-child .al-type').textContent()).toBe(`tick.${total - 1}`);
    expect(await page.locator('#al-events .al-type', { hasText: /^tick\.0$/ }).count()).toBe(0);
    actor.stop();
    expect(consoleErrors).toEqual([]);
  }, 60_000);

  it('shows a followed run as its conversation: the task, a tool call with its arguments and result, the answer streamed in pieces', async () => {
    let started!: () => void;
    const inTool = new Promise<void>((resolve) => (started = resolve));
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const lookup = defineTool({
      name: 'lookup_city',
      description: 'Looks a city up once the test releases it',
      input: z.object({ city: z.string() }),
      execute: async ({ city }) => {
        started();
        await gate;
        return { city, population: 37_115_000 };
      },
    });
    const answer = 'Tokyo has about 37.1 million people.';
    const agent = createAgent({
      id: 'agent_conversation',
      model: { provider: scriptedModel([{ text: 'Looking it up.', toolCalls: [{ name: 'lookup_city', arguments: { city: 'Tokyo' } }] }, { text: answer }]), stream: true },
      tools: [lookup],
      observe: { inspect: inspector.inspect },
    });
    const run = agent.start('How many people live in Tokyo?');
    const unfollow = inspector.follow(run);
    try {
      await inTool;
      const section = page.locator(`#al-conversation section[data-run-id="${run.runId}"]`);
      await section.locator('.al-tool .al-tool-status', { hasText: 'running' }).waitFor({ timeout: 30_000 });
      expect(await section.locator('.al-user').textContent()).toBe('How many people live in Tokyo?');
      // Each run says whose it is: with delegation, a page shows several agents' runs.
      expect(await section.locator('h3').textContent()).toBe(`agent_conversation \u00b7 run ${run.runId}`);
      expect(await section.getAttribute('data-agent-id')).toBe('agent_conversation');
      const card = section.locator('.al-tool');
      expect(await card.locator('.al-tool-name').textContent()).toBe('lookup_city');
      expect(JSON.parse((await card.locator('.al-args').textContent()) ?? '')).toEqual({ city: 'Tokyo' });
      expect(await card.locator('.al-gate').textContent()).toBe('gate: allow');
      expect(await card.locator('.al-result').isVisible()).toBe(false);

      release();
      await run.result;
      await section.locator('.al-end', { hasText: 'finished (final_answer' }).waitFor({ timeout: 30_000 });
      expect(JSON.parse((await card.locator('.al-result').textContent()) ?? '')).toEqual({ city: 'Tokyo', population: 37_115_000 });
      const replies = section.locator('.al-assistant');
      expect(await replies.allTextContents()).toEqual(['Looking it up.', answer]);
      // One text node per streamed delta: the answer was drawn as it arrived, not set whole at the end.
      expect(await page.evaluate(`[...document.querySelectorAll('#al-conversation .al-assistant')].at(-1).childNodes.length`)).toBeGreaterThan(3);
      expect(await section.locator('.al-end').textContent()).toMatch(/tokens \d+ in \/ \d+ out/);
    } finally {
      release();
      unfollow();
      await run.settled;
      agent.stop();
    }
    expect(consoleErrors).toEqual([]);
    expect(foreignRequests).toEqual([]);
  }, 60_000);
});
