import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalRuntime } from '../../local/runtime.js';
import { client, startRuntime } from '../helpers/local.js';
import { startChecker, type TestChecker } from '../helpers/checker.js';

let runtime: LocalRuntime;
let api: ReturnType<typeof client>;
let checker: TestChecker;

beforeAll(async () => {
  runtime = await startRuntime({ checkbackEverySeconds: 1 });
  api = client(runtime.url);
  checker = await startChecker((check) => (check.message.body.startsWith('commit') ? 'commit' : 'rollback'));
  await api.put('/v1/topics/orders', { type: 'fifo' });
  await api.put('/v1/groups/billing', { subscriptions: [{ topic: 'orders' }], deliveryMode: 'concurrent' });
  const producer = await api.put('/v1/producers/shop', { checkerUrl: checker.url, checkIntervalSeconds: 1, maxChecks: 3 });
  expect(producer.status).toBe(200);
  expect(producer.body.signingSecret).toMatch(/^whsec_/);
  checker.secrets = [producer.body.signingSecret];
});
afterAll(async () => {
  await runtime?.stop();
  await checker?.close();
});

async function receiveAll(seconds: number, want: number) {
  const got: Array<{ body: string; sequence: number }> = [];
  const deadline = Date.now() + seconds * 1000;
  while (got.length < want && Date.now() < deadline) {
    const res = await api.post('/v1/groups/billing/receive', { maxMessages: 10, waitSeconds: 1 });
    for (const m of res.body.messages) {
      got.push({ body: m.body, sequence: m.sequence });
      await api.post('/v1/groups/billing/commit', { entries: [{ receiptHandle: m.receiptHandle }] });
    }
  }
  return got;
}

describe('transactions over HTTP', () => {
  it('commits and rolls back half messages; the sequence is assigned at commit', async () => {
    const a = await api.post('/v1/topics/orders/messages', { body: 'a', shardKey: 'o1', transaction: { producerGroup: 'shop', checkAfterSeconds: 60 } });
    expect(a).toMatchObject({ status: 201, body: { state: 'prepared' } });
    expect(a.body.sequence).toBeUndefined();
    const b = await api.post('/v1/topics/orders/messages', { body: 'b', shardKey: 'o1' });
    // The shard's first number comes from the clock (docs/design.md, Idle shards expire).
    const base = b.body.sequence - 1;
    const committed = await api.post(`/v1/transactions/${a.body.transactionId}/commit`, undefined);
    expect(committed).toMatchObject({ status: 200, body: { state: 'committed', messageId: a.body.messageId, sequence: base + 2 } });
    const again = await api.post(`/v1/transactions/${a.body.transactionId}/rollback`, undefined);
    expect(again).toMatchObject({ status: 409, body: { code: 'TransactionAlreadyResolved' } });
    const c = await api.post('/v1/topics/orders/messages', { body: 'c', shardKey: 'o2', transaction: { producerGroup: 'shop', checkAfterSeconds: 60 } });
    expect((await api.post(`/v1/transactions/${c.body.transactionId}/rollback`, undefined)).body).toEqual({ state: 'rolled-back' });
    expect((await api.get(`/v1/transactions/${c.body.transactionId}`)).body).toMatchObject({ state: 'rolled-back', resolvedBy: 'producer' });
    expect((await receiveAll(5, 2)).map((m) => [m.body, m.sequence - base])).toEqual([
      ['b', 1],
      ['a', 2],
    ]);
  });

  it('checks back a producer that crashed after sending, through the signed webhook', async () => {
    const sent = await Promise.all(
      ['commit-1', 'rollback-1', 'commit-2'].map((body, i) =>
        api.post('/v1/topics/orders/messages', { body, shardKey: `crash-${i}`, transaction: { producerGroup: 'shop', checkAfterSeconds: 1 } }),
      ),
    );
    const got = await receiveAll(15, 2);
    expect(got.map((m) => m.body).sort()).toEqual(['commit-1', 'commit-2']);
    const views = await Promise.all(sent.map((s) => api.get(`/v1/transactions/${s.body.transactionId}`)));
    expect(views.map((v) => [v.body.state, v.body.resolvedBy, v.body.checks[0]?.status])).toEqual([
      ['committed', 'check', 'commit'],
      ['rolled-back', 'check', 'rollback'],
      ['committed', 'check', 'commit'],
    ]);
    expect(checker.calls.every((c) => c.verified)).toBe(true);
  });

  it('rotates the signing secret and never shows it again', async () => {
    const rotated = await api.post('/v1/producers/shop/rotate-secret', undefined);
    expect(rotated.body.signingSecret).toMatch(/^whsec_/);
    expect(rotated.body.signingSecret).not.toBe(checker.secrets[0]);
    const view = await api.get('/v1/producers/shop');
    expect(view.body).not.toHaveProperty('signingSecret');
    expect(JSON.stringify(view.body)).not.toContain('whsec_');
    const update = await api.put('/v1/producers/shop', { checkerUrl: checker.url, checkIntervalSeconds: 1, maxChecks: 3 });
    expect(update.body).not.toHaveProperty('signingSecret');
  });

  it('refuses checker URLs on private or link-local addresses', async () => {
    for (const checkerUrl of ['https://10.0.0.7/check', 'http://169.254.169.254/latest', 'https://[fd00::1]/', 'http://example.com/']) {
      const res = await api.put('/v1/producers/evil', { checkerUrl });
      expect(res, checkerUrl).toMatchObject({ status: 400, body: { code: 'InvalidArgument', errors: [{ path: 'checkerUrl' }] } });
    }
    expect((await api.get('/v1/producers/evil')).status).toBe(404);
  });
});
