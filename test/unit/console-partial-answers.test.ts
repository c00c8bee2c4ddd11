/**
 * The real console bundle in headless Chromium, served by `sluice console`'s loopback
 * server (console/proxy.ts) whose transport is a scripted stand-in of the v1 API that answers
 * as the schemas (functions/api/schemas.ts) say and records what the console sent.
 */
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { chromium, type Browser, type Page } from 'playwright-core';
import { loadConsoleAssets } from '../../console/assets.js';
import { startConsoleProxy, type ConsoleProxy } from '../../console/proxy.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const NOW = '2026-12-04T22:00:00.000Z';

type Reply = { status: number; body?: unknown };
type Handler = (method: string, path: string, body: string | undefined) => Reply | undefined;

const topic = (name: string) => ({ name, type: 'standard', retentionSeconds: 345600, maxDelaySeconds: 900, orderGroup: null, partitions: 4, sequenced: false, createdAt: NOW });
const group = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  subscriptions: [{ topic: 'orders' }],
  deliveryMode: 'concurrent',
  visibilityTimeoutSeconds: 30,
  maxDeliveries: 16,
  retryPolicy: { initialSeconds: 1, multiplier: 2, maxSeconds: 300 },
  deadLetterTopic: `${name}-dlq`,
  push: null,
  createdAt: NOW,
  updatedAt: NOW,
  backlog: 0,
  inFlight: 0,
  pending: 0,
  oldestMessageAgeSeconds: 0,
  deadLettered: 0,
  committed: 0,
  ...extra,
});

describe('console: partial and failed answers (scripted API)', () => {
  let proxy: ConsoleProxy;
  let browser: Browser;
  let page: Page;
  const seen: Array<{ method: string; path: string; body: string | undefined }> = [];
  let handler: Handler = () => undefined;

  /** The base API: one topic `orders`, groups as `groups` says. */
  let groups: Record<string, ReturnType<typeof group>> = {};
  const base: Handler = (method, path) => {
    if (method === 'GET' && path.startsWith('/v1/topics?')) return { status: 200, body: { topics: [topic('orders')], nextToken: null } };
    if (method === 'GET' && path === '/v1/topics/orders') return { status: 200, body: { ...topic('orders'), approximateMessages: 0, subscribers: Object.keys(groups) } };
    if (method === 'GET' && path.startsWith('/v1/groups?')) return { status: 200, body: { groups: Object.values(groups), nextToken: null } };
    const g = /^\/v1\/groups\/([^/?]+)$/.exec(path);
    if (method === 'GET' && g) {
      const found = groups[decodeURIComponent(g[1]!)];
      return found ? { status: 200, body: found } : { status: 404, body: { code: 'GroupNotFound', status: 404, detail: 'no such group' } };
    }
    return undefined;
  };

  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) throw new Error(`No Chromium at ${CHROMIUM}`);
    const assets = await loadConsoleAssets();
    proxy = await startConsoleProxy({
      assets,
      transport: {
        forward: async (method, path, _headers, body) => {
          seen.push({ method, path, body });
          const reply = handler(method, path, body) ?? base(method, path, body) ?? { status: 404, body: { code: 'NotFound', status: 404, detail: `stand-in: ${method} ${path}` } };
          return new Response(reply.body === undefined ? null : JSON.stringify(reply.body), {
            status: reply.status,
            headers: { 'content-type': reply.status < 300 ? 'application/json' : 'application/problem+json' },
          });
        },
      },
    });
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox'] });
  });
  afterAll(async () => {
    await browser?.close();
    await proxy?.stop();
  });
  beforeEach(async () => {
    seen.length = 0;
    handler = () => undefined;
    groups = { g1: group('g1') };
    await page?.close();
    page = await browser.newPage({ viewport: { width: 1000, height: 900 } });
  });

  async function openGroup(name: string) {
    await page.goto(`${proxy.url}/console`);
    await page.getByRole('button', { name: `Open ${name}` }).click();
    await expect.poll(() => page.locator('#group-h').textContent()).toBe(`Group ${name}`);
  }

  it('Redrive dead letters: a partial redrive (more: true) says that more remain', async () => {
    groups.g1 = group('g1', { deadLettered: 1500 });
    let calls = 0;
    handler = (method, path) => {
      if (method === 'POST' && path === '/v1/groups/g1/redrive') {
        calls++;
        // As lib/services/redriver.ts answers: at most 1000 per request, `more` when dead letters remain.
        return calls === 1 ? { status: 200, body: { redriven: 1000, more: true } } : { status: 200, body: { redriven: 500, more: false } };
      }
      return undefined;
    };
    await openGroup('g1');
    await page.getByRole('button', { name: 'Redrive dead letters' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Redrive' }).click();
    await page.getByText(/^Redriven: /).waitFor();
    const said = await page.getByText(/^Redriven: /).textContent();
    // Fixed: either every dead letter is brought back (1500 over two requests), or the line says some remain.
    expect(said).toMatch(/^Redriven: 1500\.|remain|more/);
  });

  it('push group: the "Last push attempts" table is shown from push.lastAttempts (the schema\'s place)', async () => {
    groups.g1 = group('g1', {
      push: {
        url: 'https://hooks.example/sluice',
        batchSize: 10,
        timeoutSeconds: 30,
        maxConcurrency: 4,
        lastAttempts: [{ at: NOW, status: 503, latencyMs: 120, error: 'HTTP 503', messages: 10, retried: 10 }],
      },
    });
    await openGroup('g1');
    await page.getByRole('heading', { name: 'Push delivery' }).waitFor();
    expect(await page.getByRole('region', { name: 'Last push attempts' }).count()).toBe(1);
  });

  it('Send: the body sent is the body typed (leading/trailing whitespace and newlines kept)', async () => {
    handler = (method, path) =>
      method === 'POST' && path === '/v1/topics/orders/messages' ? { status: 201, body: { messageId: 'm1', state: 'deliverable' } } : undefined;
    await page.goto(`${proxy.url}/console`);
    const typed = '  indented first line\nlast line\n\n';
    const send = page.getByRole('form', { name: 'Send a test message' });
    await send.getByLabel('Topic', { exact: true }).fill('orders');
    await send.getByLabel('Body').fill(typed);
    await send.getByRole('button', { name: 'Send' }).click();
    await page.getByText('Sent m1 (deliverable).').waitFor();
    const post = seen.find((s) => s.method === 'POST' && s.path === '/v1/topics/orders/messages');
    expect(JSON.parse(post?.body ?? '{}').body).toBe(typed);
  });

  it('Overview: a group whose figures could not be read is named as not shown', async () => {
    groups = { g1: group('g1', { backlog: 7 }), g2: group('g2', { backlog: 40_000 }) };
    handler = (method, path) =>
      method === 'GET' && path === '/v1/groups/g2' ? { status: 503, body: { code: 'ServiceUnavailable', status: 503, detail: 'try again' } } : undefined;
    await page.goto(`${proxy.url}/console`);
    await page.getByRole('button', { name: 'Open g1' }).waitFor();
    const listed = await page.getByRole('region', { name: 'Groups', exact: true }).textContent();
    const status = (await page.locator('section[aria-labelledby="overview-h"] [role="status"]').allTextContents()).join(' ');
    // Fixed: g2 stays in the table (its figures unknown) or the status line says it could not be read.
    expect(listed?.includes('g2') || /g2|503|ServiceUnavailable/.test(status)).toBe(true);
  });

  it('Overview: an error from one refresh is cleared by the next refresh that reads everything', async () => {
    let failures = 1;
    handler = (method, path) =>
      method === 'GET' && path.startsWith('/v1/topics?') && failures-- > 0 ? { status: 503, body: { code: 'ServiceUnavailable', status: 503, detail: 'try again' } } : undefined;
    await page.goto(`${proxy.url}/console`);
    const line = { textContent: async () => (await page.locator('section[aria-labelledby="overview-h"] [role="status"]').allTextContents()).join(' ') };
    await expect.poll(() => line.textContent()).toContain('503 ServiceUnavailable');
    // The next poll (3 s) succeeds and fills the tables.
    await page.getByRole('button', { name: 'Open g1' }).waitFor({ timeout: 10_000 });
    expect(await line.textContent()).not.toContain('ServiceUnavailable');
  });

  it('Find dead letters: a copy of this group behind the first page (shared dead-letter topic) is found', async () => {
    groups.g1 = group('g1', { deadLetterTopic: 'shared-dlq', deadLettered: 1 });
    const copy = (id: string, g: string) => ({
      messageId: id, topic: 'shared-dlq', state: 'deliverable', body: 'x', encoding: 'utf8', tag: null, keys: ['order-1'],
      properties: { 'sluice-dead-letter-group': g, 'sluice-dead-letter-source-message-id': `src-${id}`, 'sluice-dead-letter-reason': 'maxDeliveries', 'sluice-dead-letter-delivery-count': '16' },
      shardKey: null, sequence: null, sentAt: NOW, deliverableAt: NOW, expiresAt: NOW,
    });
    handler = (method, path) => {
      if (method !== 'GET' || !path.startsWith('/v1/topics/shared-dlq/messages?')) return undefined;
      const next = new URL(path, 'http://x').searchParams.get('nextToken');
      return next
        ? { status: 200, body: { messages: [copy('mine', 'g1')], nextToken: null } }
        : { status: 200, body: { messages: Array.from({ length: 20 }, (_, i) => copy(`other-${i}`, 'g-other')), nextToken: 'page-2' } };
    };
    await openGroup('g1');
    const dlq = page.getByRole('form', { name: 'Find dead letters by key' });
    await dlq.getByLabel('Key in shared-dlq').fill('order-1');
    await dlq.getByRole('button', { name: 'Find dead letters' }).click();
    const region = page.getByRole('region', { name: 'Dead letters of g1 with key order-1' });
    await region.waitFor();
    const text = (await region.textContent()) ?? '';
    const status = (await page.locator('section[aria-labelledby="group-h"] [role="status"]').allTextContents()).join(' ');
    // Fixed: the copy is found (further pages read) or the console says more copies exist.
    expect(text.includes('mine') || /more/.test(text + status)).toBe(true);
  });
});
