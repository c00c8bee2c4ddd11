/**
 * The web console in headless Chromium against the real local runtime (setup as in
 * console-browser.test.ts).
 */
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromium, type Browser, type Page } from 'playwright-core';
import type { LocalRuntime } from '../../local/runtime.js';
import { client, startRuntime, TOKEN } from '../helpers/local.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

describe('console: what an operator sees (real local runtime)', () => {
  let runtime: LocalRuntime;
  let browser: Browser;
  let page: Page;
  const api = () => client(runtime.url);

  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) throw new Error(`No Chromium at ${CHROMIUM}`);
    [runtime, browser] = await Promise.all([startRuntime(), chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox'] })]);
    page = await browser.newPage({ viewport: { width: 1000, height: 900 } });
  });
  afterAll(async () => {
    await browser?.close();
    await runtime?.stop();
  });

  /** The console with the token entered (each test stands alone). */
  async function ready() {
    await page.goto(`${runtime.url}/console`);
    const token = page.getByRole('form', { name: 'Access token' });
    await token.getByLabel(/Bearer token/).fill(TOKEN);
    await token.getByRole('button', { name: 'Use token' }).click();
    await page.getByText('Token saved for this tab.').waitFor();
  }

  it('after the token is entered and the tables fill, the overview no longer says "Unauthorized"', async () => {
    expect((await api().put('/v1/topics/ledger', { type: 'standard' })).status).toBe(200);
    expect((await api().put('/v1/groups/ledger-workers', { subscriptions: [{ topic: 'ledger' }] })).status).toBe(200);
    await page.goto(`${runtime.url}/console`);
    const overview = page.locator('section[aria-labelledby="overview-h"]');
    await overview.getByText('Unauthorized: enter the token above.').waitFor();
    const token = page.getByRole('form', { name: 'Access token' });
    await token.getByLabel(/Bearer token/).fill(TOKEN);
    await token.getByRole('button', { name: 'Use token' }).click();
    await page.getByRole('button', { name: 'Open ledger-workers' }).waitFor();
    expect((await overview.locator('[role="status"]').allTextContents()).join(' ')).not.toContain('Unauthorized');
  });

  it('Send stores the body as typed (not trimmed)', async () => {
    await api().put('/v1/topics/ledger', { type: 'standard' });
    await ready();
    const typed = '{\n  "id": 1\n}\n';
    const send = page.getByRole('form', { name: 'Send a test message' });
    await send.getByLabel('Topic', { exact: true }).fill('ledger');
    await send.getByLabel('Body').fill(typed);
    await send.getByRole('button', { name: 'Send' }).click();
    const sent = await page.getByText(/^Sent \S+ \(deliverable\)\.$/).textContent();
    const messageId = /^Sent (\S+) /.exec(sent ?? '')?.[1] ?? '';
    const stored = await api().get(`/v1/topics/ledger/messages/${encodeURIComponent(messageId)}`);
    expect(stored.body.body).toBe(typed);
  });

  it('Find dead letters on a shared dead-letter topic finds this group\'s copy behind other groups\' copies', async () => {
    await api().put('/v1/topics/shared-src', { type: 'standard' });
    const mk = (name: string) => api().put(`/v1/groups/${name}`, { subscriptions: [{ topic: 'shared-src' }], deadLetterTopic: 'shared-dlq', maxDeliveries: 1, visibilityTimeoutSeconds: 1 });
    expect((await mk('mine')).status).toBe(200);
    expect((await mk('noisy')).status).toBe(200);
    const deadLetter = async (group: string, count: number) => {
      for (let received = 0, tries = 0; received < count; tries++) {
        if (tries > 30) throw new Error(`${group} received ${received} of ${count}`);
        const r = await api().post(`/v1/groups/${group}/receive`, { maxMessages: 10 });
        received += r.body.messages.length;
      }
      await new Promise((resolve) => setTimeout(resolve, 1300));
      await api().post(`/v1/groups/${group}/receive`, { maxMessages: 10 }); // past maxDeliveries: dead-lettered
    };
    // One message for both groups: `mine` dead-letters it first (its copy is the oldest).
    await api().post('/v1/topics/shared-src/messages', { body: 'first', keys: ['k'] });
    await deadLetter('mine', 1);
    // Then `noisy` dead-letters that one and 20 more with the same key (newer copies).
    const batch = await api().post('/v1/topics/shared-src/messages/batch', { entries: Array.from({ length: 20 }, (_, i) => ({ body: `n${i}`, keys: ['k'] })) });
    expect(batch.status).toBe(200);
    await deadLetter('noisy', 21);
    await expect.poll(async () => (await api().get('/v1/groups/mine')).body.deadLettered, { timeout: 10_000 }).toBe(1);
    await expect.poll(async () => (await api().get('/v1/groups/noisy')).body.deadLettered, { timeout: 10_000 }).toBe(21);

    await ready();
    await page.getByRole('button', { name: 'Open mine' }).click();
    await expect.poll(() => page.locator('#group-h').textContent()).toBe('Group mine');
    const dlq = page.getByRole('form', { name: 'Find dead letters by key' });
    await dlq.getByLabel('Key in shared-dlq').fill('k');
    await dlq.getByRole('button', { name: 'Find dead letters' }).click();
    const region = page.getByRole('region', { name: 'Dead letters of mine with key k' });
    await region.waitFor();
    expect(await region.textContent()).not.toContain('None.');
  });
});
