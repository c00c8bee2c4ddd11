/** Dead-letter copies (issue 17 item 6): found from the original, by key, and they say why. */
import { beforeEach, describe, expect, it } from 'vitest';
import { newHarness, send, type Harness } from '../helpers/stores.js';
import { group, topic } from '../helpers/builders.js';

let h: Harness;

beforeEach(async () => {
  h = await newHarness();
  await h.admin.putTopic('orders', topic());
});

/** `fail` redelivers right at each expiry or release: the retry back-off has its own tests (retry-policy.test.ts). */
const AT_ONCE = { initialSeconds: 0 };

const receive = (name: string, max = 10) => h.queue.receive(name, { maxMessages: max, waitSeconds: 0 });

/** Receives the message `times` times, letting each lease expire (or releasing it). */
async function fail(name: string, times: number, how: 'expire' | 'release') {
  for (let i = 1; i <= times; i++) {
    const [m] = await receive(name, 1);
    expect(m?.deliveryCount).toBe(i);
    if (how === 'release') await h.queue.changeVisibility(name, m!.receiptHandle, 0);
    else h.clock.advance(30_001);
  }
  h.clock.advance(1);
  expect(await receive(name)).toEqual([]); // this receive moves it
}

describe('dead-letter copies', () => {
  it('keep body, keys, properties and tag, record group, delivery count and reason, and are named by the original', async () => {
    await h.admin.putGroup('billing', group('orders', { maxDeliveries: 2, retryPolicy: AT_ONCE }));
    const sent = await h.queue.send('orders', send('poison', { tag: 'created', keys: ['order-7', 'customer-3'], properties: { source: 'web' } }));
    await fail('billing', 2, 'expire');

    const view = await h.queue.getMessage('orders', sent.messageId);
    const [billing] = view.groups;
    expect(billing).toMatchObject({ group: 'billing', state: 'dead-lettered', deliveryCount: 2 });
    const copyId = billing!.deadLetter!.messageId;
    expect(billing!.deadLetter).toEqual({ topic: 'billing-dlq', messageId: copyId });
    expect(copyId).not.toBe(sent.messageId);

    const copy = await h.queue.getMessage('billing-dlq', copyId);
    expect(copy).toMatchObject({
      body: 'poison',
      tag: 'created',
      keys: ['order-7', 'customer-3'],
      properties: {
        source: 'web',
        'sluice-dead-letter-source-topic': 'orders',
        'sluice-dead-letter-source-message-id': sent.messageId,
        'sluice-dead-letter-group': 'billing',
        'sluice-dead-letter-delivery-count': '2',
        'sluice-dead-letter-reason': 'lease-expired',
      },
    });
    for (const key of ['order-7', 'customer-3']) {
      const found = await h.queue.messagesByKey('billing-dlq', key, 10, undefined);
      expect(found.messages.map((m) => m.messageId)).toEqual([copyId]);
    }
  });

  it('say "released" when the last attempt gave the lease back', async () => {
    await h.admin.putGroup('billing', group('orders', { maxDeliveries: 2, retryPolicy: AT_ONCE }));
    const sent = await h.queue.send('orders', send('nack'));
    await fail('billing', 2, 'release');
    const link = (await h.queue.getMessage('orders', sent.messageId)).groups[0]!.deadLetter!;
    expect((await h.queue.getMessage(link.topic, link.messageId)).properties['sluice-dead-letter-reason']).toBe('released');
  });

  it('a release followed by an extension of the same lease counts as an expiry', async () => {
    await h.admin.putGroup('billing', group('orders', { maxDeliveries: 1 }));
    const sent = await h.queue.send('orders', send('changed its mind'));
    const [m] = await receive('billing', 1);
    await h.queue.changeVisibility('billing', m!.receiptHandle, 0);
    await h.queue.changeVisibility('billing', m!.receiptHandle, 30);
    h.clock.advance(30_001);
    expect(await receive('billing')).toEqual([]);
    const link = (await h.queue.getMessage('orders', sent.messageId)).groups[0]!.deadLetter!;
    expect((await h.queue.getMessage(link.topic, link.messageId)).properties['sluice-dead-letter-reason']).toBe('lease-expired');
  });

  it('a dead-letter topic shared by two groups holds one copy per group, each named by the original', async () => {
    await h.admin.putGroup('a', group('orders', { maxDeliveries: 1, deadLetterTopic: 'shared-dlq' }));
    await h.admin.putGroup('b', group('orders', { maxDeliveries: 1, deadLetterTopic: 'shared-dlq' }));
    const sent = await h.queue.send('orders', send('twice', { keys: ['k-1'] }));
    await fail('a', 1, 'expire');
    await fail('b', 1, 'release');
    const view = await h.queue.getMessage('orders', sent.messageId);
    const byGroup = new Map(view.groups.map((g) => [g.group, g]));
    const copyA = byGroup.get('a')!.deadLetter!;
    const copyB = byGroup.get('b')!.deadLetter!;
    expect([copyA.topic, copyB.topic]).toEqual(['shared-dlq', 'shared-dlq']);
    expect(copyA.messageId).not.toBe(copyB.messageId);
    expect((await h.queue.getMessage('shared-dlq', copyA.messageId)).properties).toMatchObject({ 'sluice-dead-letter-group': 'a', 'sluice-dead-letter-reason': 'lease-expired' });
    expect((await h.queue.getMessage('shared-dlq', copyB.messageId)).properties).toMatchObject({ 'sluice-dead-letter-group': 'b', 'sluice-dead-letter-reason': 'released' });
    const byKey = await h.queue.messagesByKey('shared-dlq', 'k-1', 10, undefined);
    expect(byKey.messages.map((m) => m.messageId).sort()).toEqual([copyA.messageId, copyB.messageId].sort());
  });

  it('the original names its copy after the cursor forgot the completion (more than 16 later completions)', async () => {
    await h.admin.putGroup('billing', group('orders', { maxDeliveries: 1 }));
    const sent = await h.queue.send('orders', send('old poison'));
    await fail('billing', 1, 'expire');
    await h.queue.sendBatch('orders', Array.from({ length: 20 }, (_, i) => send(`ok-${i}`)));
    const batch = await receive('billing', 20);
    expect(batch).toHaveLength(20);
    await h.queue.commit('billing', batch.map((m) => m.receiptHandle));
    const [billing] = (await h.queue.getMessage('orders', sent.messageId)).groups;
    expect(billing).toMatchObject({ state: 'dead-lettered', deadLetter: { topic: 'billing-dlq' } });
  });

  it('a FIFO message’s copy keeps its shard key', async () => {
    await h.admin.putTopic('ledger', topic({ type: 'fifo' }));
    await h.admin.putGroup('posting', group('ledger', { maxDeliveries: 1 }));
    const sent = await h.queue.send('ledger', send('entry', { shardKey: 'acct-1', keys: ['entry-1'] }));
    await fail('posting', 1, 'expire');
    const link = (await h.queue.getMessage('ledger', sent.messageId)).groups[0]!.deadLetter!;
    expect(await h.queue.getMessage(link.topic, link.messageId)).toMatchObject({ shardKey: 'acct-1', keys: ['entry-1'] });
  });
});
