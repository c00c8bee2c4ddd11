/** FIFO messages of one shard dead-lettered by one claim come back by redrive in shard order (found by an audit, 2026-12-04). */
import { beforeEach, describe, expect, it } from 'vitest';
import { newHarness, send, type Harness } from '../helpers/stores.js';
import { group, topic } from '../helpers/builders.js';

let h: Harness;
beforeEach(async () => {
  h = await newHarness();
  await h.admin.putTopic('ledger', topic({ type: 'fifo' }));
});
const receive = (name: string, max = 10) => h.queue.receive(name, { maxMessages: max, waitSeconds: 0 });

describe('redrive order', () => {
  it.each(['protected', 'concurrent'] as const)('%s: a shard dead-lettered in one claim is redriven in shard order', async (deliveryMode) => {
    await h.admin.putGroup('audit', group('ledger', { deliveryMode, maxDeliveries: 1 }));
    const bodies = ['1', '2', '3', '4', '5', '6', '7', '8'];
    await h.queue.sendBatch('ledger', bodies.map((b) => send(b, { shardKey: 'acct-1' })));
    const first = await receive('audit', 10);
    expect(first.map((m) => m.body)).toEqual(bodies);
    h.clock.advance(30_001);
    expect(await receive('audit')).toEqual([]); // this claim dead-letters all eight
    expect((await h.admin.getGroup('audit')).deadLettered).toBe(8);
    expect(await h.redriver.redrive('audit', undefined)).toEqual({ redriven: 8, more: false });
    const back = await receive('audit', 10);
    expect(back.map((m) => m.body)).toEqual(bodies);
  });
});
