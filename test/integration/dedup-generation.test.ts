/**
 * A dedup id names a send within the dedup window (24 h) in the topic's generation: a topic deleted
 * and created again (allowed after twice the catalog cache lifetime, far sooner) starts afresh. Until
 * 2026-12-04 a send to the new topic reusing an id of its old life was answered with the old
 * message's id and stored nowhere: no group ever received it (found by an audit).
 */
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { dedupKey } from '../../lib/adapters/dynamodb/keys.js';
import { group, topic } from '../helpers/builders.js';
import { newHarness, send } from '../helpers/stores.js';

describe('dedup ids and a topic created again', () => {
  for (const type of ['standard', 'fifo'] as const) {
    it(`${type}: a send reusing a dedupId of the topic's earlier life is stored and delivered; repeated, it is a dedup hit`, async () => {
      const h = await newHarness();
      const shardKey = type === 'fifo' ? { shardKey: 'A' } : {};
      await h.admin.putTopic('orders', topic({ type }));
      const old = await h.queue.send('orders', send('old life', { dedupId: 'order-42', ...shardKey }));
      await h.admin.deleteTopic('orders');
      h.clock.advance(h.stores.catalog.recreateAfterMs + 1);
      await h.admin.putTopic('orders', topic({ type }));
      await h.admin.putGroup('g', group(['orders']));
      const fresh = await h.queue.send('orders', send('new life', { dedupId: 'order-42', ...shardKey }));
      expect(fresh.messageId).not.toBe(old.messageId);
      // The same id again in this life: the send made just now.
      expect((await h.queue.send('orders', send('new life again', { dedupId: 'order-42', ...shardKey }))).messageId).toBe(fresh.messageId);
      const got = await h.queue.receive('g', { maxMessages: 10, waitSeconds: 0 });
      expect(got.map((m) => m.body)).toEqual(['new life']);
    }, 60_000);
  }

  it('a marker written before markers carried the generation is still a dedup hit (the same message id, nothing stored)', async () => {
    const h = await newHarness();
    await h.admin.putTopic('orders', topic());
    await h.admin.putGroup('g', group(['orders']));
    const first = await h.queue.send('orders', send('once', { dedupId: 'order-7' }));
    await h.doc.send(new UpdateCommand({ TableName: h.table, Key: dedupKey('orders', 'order-7'), UpdateExpression: 'REMOVE g' }));
    const again = await h.queue.send('orders', send('once', { dedupId: 'order-7' }));
    expect(again.messageId).toBe(first.messageId);
    expect((await h.queue.receive('g', { maxMessages: 10, waitSeconds: 0 })).map((m) => m.body)).toEqual(['once']);
  }, 60_000);
});
