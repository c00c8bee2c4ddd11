/**
 * Issue 14 item 1: a receive that renews or closes many leases must stay
 * within DynamoDB's 4 KB expression limit (DynamoDB Local enforces it).
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { newHarness, send, type Harness } from '../helpers/stores.js';
import { group, topic } from '../helpers/builders.js';

let h: Harness;

beforeEach(async () => {
  h = await newHarness();
  await h.admin.putTopic('orders', topic());
  // Every lease expires within the 2 s steps below: no retry back-off on top (retry-policy.test.ts has it).
  await h.admin.putGroup('billing', group('orders', { visibilityTimeoutSeconds: 1, maxDeliveries: 10, retryPolicy: { initialSeconds: 0 } }));
});

const receive = (max: number) => h.queue.receive('billing', { maxMessages: max, waitSeconds: 0 });

describe('expression budget of a receive (issue 14 item 1)', () => {
  it('send 100, receive 100 (visibility 1 s), wait 2 s, receive 100: every large receive answers, nothing is lost', async () => {
    // One batch lands in one partition: every lease of the scenario lives in one cursor item.
    const sent = await h.queue.sendBatch('orders', Array.from({ length: 100 }, (_, i) => send(`m${i}`)));
    expect(sent).toHaveLength(100);
    const first = await receive(100);
    expect(first).toHaveLength(100);
    h.clock.advance(2000);
    // 100 renewals in one cursor write.
    const second = await receive(100);
    expect(second).toHaveLength(100);
    expect(new Set(second.map((m) => m.messageId))).toEqual(new Set(first.map((m) => m.messageId)));
    expect(second.every((m) => m.deliveryCount === 2)).toBe(true);
    // Every later large receive too: renew again, then commit everything in one call.
    h.clock.advance(2000);
    const third = await receive(100);
    expect(third).toHaveLength(100);
    const results = await h.queue.commit('billing', third.map((m) => m.receiptHandle));
    expect(results.filter((r) => 'status' in r && r.status === 'committed')).toHaveLength(100);
    h.clock.advance(2000);
    expect(await receive(100)).toEqual([]);
  });
});
