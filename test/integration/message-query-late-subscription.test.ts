/**
 * The message query's state of a message for a group whose subscription to its topic came later
 * than the message (PATCH or PUT adding the topic; startFrom latest): the group never had it —
 * `filtered`, not `committed` (found by an audit, 2026-12-04).
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { newHarness, send, type Harness } from '../helpers/stores.js';
import { group, topic } from '../helpers/builders.js';

let h: Harness;
const receive = (g: string, max = 100) => h.queue.receive(g, { maxMessages: max, waitSeconds: 0 });

beforeEach(async () => {
  h = await newHarness();
});

describe('message query: a subscription added to an existing group', () => {
  for (const type of ['standard', 'fifo'] as const) {
    it(`${type}: a message sent before the group subscribed is not "committed" by it`, async () => {
      await h.admin.putTopic('orders', topic({ type }));
      await h.admin.putTopic('other', topic());
      await h.admin.putGroup('g', group('other'));
      h.clock.advance(1000);
      const sent = await h.queue.send('orders', send('before', type === 'fifo' ? { shardKey: 'a' } : {}));
      h.clock.advance(1000);
      await h.admin.patchGroup('g', { subscriptions: [{ topic: 'other', tags: undefined }, { topic: 'orders', tags: undefined }] });
      h.clock.advance(1000);
      await h.queue.send('orders', send('after', type === 'fifo' ? { shardKey: 'a' } : {}));
      const got = await receive('g');
      expect(got.map((m) => m.body)).toEqual(['after']);
      await h.queue.commit('g', got.map((m) => m.receiptHandle));
      const q = await h.queue.getMessage('orders', sent.messageId);
      const mine = q.groups.find((x: { group: string }) => x.group === 'g');
      expect(mine).toMatchObject({ state: 'filtered', deliveryCount: 0, committedAt: null });
    });
  }
});

import { Seeker } from '../../lib/services/seeker.js';
