import { beforeEach, describe, expect, it } from 'vitest';
import { newHarness, send, type Harness } from '../helpers/stores.js';
import { group, topic } from '../helpers/builders.js';
import { ReceiptHandleExpiredError } from '../../lib/domain/errors.js';

let h: Harness;

beforeEach(async () => {
  h = await newHarness();
  await h.admin.putTopic('orders', topic());
  // Redelivery right at the lease's expiry: the retry back-off has its own tests (retry-policy.test.ts).
  await h.admin.putGroup('billing', group('orders', { visibilityTimeoutSeconds: 30, maxDeliveries: 3, retryPolicy: { initialSeconds: 0 } }));
});

const receive = (max = 10, group = 'billing') => h.queue.receive(group, { maxMessages: max, waitSeconds: 0 });

describe('send → receive → commit', () => {
  it('delivers a sent message once and commits it', async () => {
    const sent = await h.queue.send('orders', send('hello', { tag: 'created', keys: ['o-1'], properties: { a: 'b' } }));
    expect(sent.state).toBe('deliverable');
    const [message, ...rest] = await receive();
    expect(rest).toEqual([]);
    expect(message).toMatchObject({ messageId: sent.messageId, body: 'hello', tag: 'created', keys: ['o-1'], properties: { a: 'b' }, deliveryCount: 1 });
    const results = await h.queue.commit('billing', [message!.receiptHandle]);
    expect(results).toEqual([{ receiptHandle: message!.receiptHandle, status: 'committed' }]);
    expect(await receive()).toEqual([]);
    // Committing twice is idempotent.
    expect(await h.queue.commit('billing', [message!.receiptHandle])).toEqual(results);
  });

  it('stores large JSON bodies deflated and gives them back byte for byte (receive and query)', async () => {
    const body = JSON.stringify({ lines: Array.from({ length: 40 }, (_, i) => ({ sku: `SKU-${i}`, qty: i, note: 'Grüße 🚀' })) });
    const binary = Buffer.from(body.repeat(3), 'utf8').toString('base64');
    const sent = await h.queue.send('orders', send(body));
    await h.queue.send('orders', { ...send(binary), encoding: 'base64' });
    const got = await receive();
    expect(got.map((m) => m.body).sort()).toEqual([body, binary].sort());
    expect(got.find((m) => m.body === binary)?.encoding).toBe('base64');
    expect((await h.queue.getMessage('orders', sent.messageId)).body).toBe(body);
  });

  it('redelivers an expired lease with deliveryCount + 1 and fences the stale handle', async () => {
    await h.queue.send('orders', send('m'));
    const [first] = await receive();
    expect(await receive()).toEqual([]);
    h.clock.advance(30_001);
    const [second] = await receive();
    expect(second).toMatchObject({ messageId: first!.messageId, deliveryCount: 2 });
    const [stale] = await h.queue.commit('billing', [first!.receiptHandle]);
    expect(stale && 'error' in stale && stale.error).toBeInstanceOf(ReceiptHandleExpiredError);
    const [fresh] = await h.queue.commit('billing', [second!.receiptHandle]);
    expect(fresh).toMatchObject({ status: 'committed' });
    await expect(h.queue.changeVisibility('billing', first!.receiptHandle, 10)).rejects.toBeInstanceOf(ReceiptHandleExpiredError);
  });

  it('lets a handle commit after its lease expired if nobody received the message again', async () => {
    await h.queue.send('orders', send('m'));
    const [first] = await receive();
    h.clock.advance(60_000);
    expect(await h.queue.commit('billing', [first!.receiptHandle])).toMatchObject([{ status: 'committed' }]);
    expect(await receive()).toEqual([]);
  });

  it('extends and releases leases', async () => {
    await h.queue.send('orders', send('m'));
    const [first] = await receive();
    await h.queue.changeVisibility('billing', first!.receiptHandle, 120);
    h.clock.advance(60_000);
    expect(await receive()).toEqual([]);
    await h.queue.changeVisibility('billing', first!.receiptHandle, 0);
    const [again] = await receive();
    expect(again).toMatchObject({ messageId: first!.messageId, deliveryCount: 2 });
  });

  it('dead-letters after maxDeliveries and keeps the original in the dead-letter topic', async () => {
    const sent = await h.queue.send('orders', send('poison'));
    for (let i = 1; i <= 3; i++) {
      const [m] = await receive();
      expect(m?.deliveryCount).toBe(i);
      h.clock.advance(30_001);
    }
    expect(await receive()).toEqual([]);
    await h.admin.putGroup('dlq-reader', group('billing-dlq'));
    // The dead-letter reader subscribed after the move: it sees only later dead letters.
    expect(await receive(10, 'dlq-reader')).toEqual([]);
    const stats = await h.admin.getGroup('billing');
    expect(stats.deadLettered).toBe(1);
    const view = await h.queue.getMessage('orders', sent.messageId);
    expect(view.groups).toEqual([
      { group: 'billing', state: 'dead-lettered', deliveryCount: 3, committedAt: null, deadLetter: { topic: 'billing-dlq', messageId: expect.stringMatching(/^m/) } },
    ]);
  });

  it('gives every group every message, and each group its own leases', async () => {
    await h.admin.putGroup('audit', group('orders'));
    await h.queue.sendBatch('orders', [send('a'), send('b'), send('c')]);
    const billing = await receive(10, 'billing');
    const audit = await receive(10, 'audit');
    expect(billing.map((m) => m.body).sort()).toEqual(['a', 'b', 'c']);
    expect(audit.map((m) => m.body).sort()).toEqual(['a', 'b', 'c']);
  });

  it('filters by tag and skips messages sent before the subscription', async () => {
    await h.queue.send('orders', send('before', { tag: 'paid' }));
    await h.admin.putGroup('payments', group([{ topic: 'orders', tags: ['paid'] }]));
    await h.queue.sendBatch('orders', [send('x', { tag: 'created' }), send('y', { tag: 'paid' }), send('z')]);
    expect((await receive(10, 'payments')).map((m) => m.body)).toEqual(['y']);
  });

  it('never delivers expired messages', async () => {
    await h.admin.putTopic('short', topic({ retentionSeconds: 300 }));
    await h.admin.putGroup('s', group('short'));
    await h.queue.send('short', send('old'));
    h.clock.advance(301_000);
    await h.queue.send('short', send('new'));
    expect((await receive(10, 's')).map((m) => m.body)).toEqual(['new']);
  });

  it('answers a repeated dedupId with the original result and stores nothing new', async () => {
    const first = await h.queue.send('orders', send('once', { dedupId: 'd-1' }));
    const again = await h.queue.send('orders', send('twice', { dedupId: 'd-1' }));
    expect(again).toEqual(first);
    const batch = await h.queue.sendBatch('orders', [send('x', { dedupId: 'd-2' }), send('y', { dedupId: 'd-2' }), send('z', { dedupId: 'd-1' })]);
    expect(batch[1]).toEqual({ index: 1, result: (batch[0] as { result: unknown }).result });
    expect(batch[2]).toEqual({ index: 2, result: first });
    expect((await receive()).map((m) => m.body).sort()).toEqual(['once', 'x']);
  });

  it('finds messages by id and by key', async () => {
    const a = await h.queue.send('orders', send('a', { keys: ['k1'] }));
    h.clock.advance(1);
    const b = await h.queue.send('orders', send('b', { keys: ['k1', 'k2'] }));
    const page = await h.queue.messagesByKey('orders', 'k1', 10, undefined);
    expect(page.messages.map((m) => m.messageId)).toEqual([b.messageId, a.messageId]);
    const view = await h.queue.getMessage('orders', a.messageId);
    expect(view).toMatchObject({ body: 'a', groups: [{ group: 'billing', state: 'waiting' }] });
    const [m] = await receive(1);
    await h.queue.commit('billing', [m!.receiptHandle]);
    const after = await h.queue.getMessage('orders', m!.messageId);
    expect(after.groups[0]).toMatchObject({ state: 'committed', deliveryCount: 1 });
  });
});
