/**
 * Found by an audit (2026-12-04): a PATCH adding a subscription creates the new topic's cursors before its group
 * write; a crash in between leaves them at that moment's head. The subscription added later
 * ("latest": messages that become deliverable after it exists, SPEC §1) keeps those old cursors and
 * delivers everything sent to the topic in between.
 */
import { describe, expect, it } from 'vitest';
import { GROUP_PK } from '../../lib/adapters/dynamodb/keys.js';
import { group, topic } from '../helpers/builders.js';
import { crashAt } from '../helpers/release-faults.js';
import { FakeClock, harness, send, testTable } from '../helpers/stores.js';

describe('a subscription added after a crashed add', () => {
  it('starts at latest', async () => {
    const { client, doc, table } = await testTable('crash-sub');
    const clock = new FakeClock();
    const h = harness(doc, table, { clock });
    await h.admin.putTopic('a', topic({ partitions: 1 }));
    await h.admin.putTopic('orders', topic({ partitions: 1, retentionSeconds: 7 * 86_400 }));
    await h.admin.putGroup('billing', group('a'));
    // The PATCH adding `orders` dies at its group write (after the new subscription's cursors).
    const crash = crashAt(client, (command, input) => ['TransactWriteItemsCommand', 'UpdateItemCommand'].includes(command) && JSON.stringify(input).includes(`"${GROUP_PK}"`) && JSON.stringify(input).includes('"billing"'));
    await expect(h.admin.patchGroup('billing', { subscriptions: [{ topic: 'a', tags: undefined }, { topic: 'orders', tags: undefined }] })).rejects.toThrow();
    expect(crash.hit()).toBe(true);
    expect((await h.stores.catalog.getGroup('billing'))?.subscriptions.map((s) => s.topic)).toEqual(['a']);
    // Days of traffic on `orders`, which billing does not subscribe to; then the subscription is added.
    for (const body of ['day-1', 'day-2']) {
      await h.queue.send('orders', send(body));
      clock.advance(86_400_000);
    }
    await h.admin.patchGroup('billing', { subscriptions: [{ topic: 'a', tags: undefined }, { topic: 'orders', tags: undefined }] });
    await h.queue.send('orders', send('new'));
    const got = await h.queue.receive('billing', { maxMessages: 10, waitSeconds: 0 });
    expect(got.map((m) => m.body)).toEqual(['new']);
  });

  it('(no crash) a subscription dropped and added again starts at latest', async () => {
    const { doc, table } = await testTable('resub');
    const clock = new FakeClock();
    const h = harness(doc, table, { clock });
    await h.admin.putTopic('a', topic({ partitions: 1 }));
    await h.admin.putTopic('orders', topic({ partitions: 1, retentionSeconds: 7 * 86_400 }));
    await h.admin.putGroup('billing', group(['a', 'orders']));
    await h.admin.patchGroup('billing', { subscriptions: [{ topic: 'a', tags: undefined }] });
    for (const body of ['day-1', 'day-2']) {
      await h.queue.send('orders', send(body));
      clock.advance(86_400_000);
    }
    await h.admin.patchGroup('billing', { subscriptions: [{ topic: 'a', tags: undefined }, { topic: 'orders', tags: undefined }] });
    await h.queue.send('orders', send('new'));
    const got = await h.queue.receive('billing', { maxMessages: 10, waitSeconds: 0 });
    expect(got.map((m) => m.body)).toEqual(['new']);
  });
});
