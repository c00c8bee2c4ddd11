/**
 * Group figures against what a receive would deliver (found by an audit, 2026-12-04): a purge drops
 * redriven messages of the purged topic from the oldest-message age at once, as the receive passes
 * them; leases left on partitions a re-created topic no longer has do not block a change of
 * delivery mode for good.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { newHarness, send, type Harness } from '../helpers/stores.js';
import { group, topic } from '../helpers/builders.js';

let h: Harness;
const receive = (g: string, max = 100) => h.queue.receive(g, { maxMessages: max, waitSeconds: 0 });

beforeEach(async () => {
  h = await newHarness();
});

describe('figures after a purge of a topic whose dead letters were redriven', () => {
  it('the redriven messages the purge dropped are no backlog and no oldest message', async () => {
    await h.admin.putTopic('orders', topic());
    await h.admin.putGroup('g', group('orders', { maxDeliveries: 1, retryPolicy: { initialSeconds: 0 } }));
    for (let i = 0; i < 3; i++) await h.queue.send('orders', send(`m${i}`));
    expect(await receive('g')).toHaveLength(3);
    h.clock.advance(30_001);
    expect(await receive('g')).toHaveLength(0); // dead-lettered
    expect(await h.redriver.redrive('g', undefined)).toMatchObject({ redriven: 3 });
    h.clock.advance(60_000);
    expect((await h.admin.getGroup('g')).backlog).toBe(3);
    await h.admin.purgeTopic('orders');
    h.clock.advance(1);
    const figures = await h.admin.getGroup('g');
    const got = await receive('g');
    const after = await h.admin.getGroup('g');
    expect({ got: got.length, age: figures.oldestMessageAgeSeconds }).toEqual({ got: 0, age: 0 });
    expect(after.backlog).toBe(0);
  });
});

describe('a standard topic deleted and re-created while the group held leases', () => {
  it('old-generation leases on partitions the re-created topic lacks do not block a deliveryMode change for good (8 → 1 partitions)', async () => {
    await h.admin.putTopic('orders', topic({ partitions: 8 }));
    await h.admin.putGroup('g', group('orders', { visibilityTimeoutSeconds: 600 }));
    for (let i = 0; i < 16; i++) await h.queue.send('orders', send(`old-${i}`));
    const held = await receive('g');
    expect(held.length).toBe(16);
    await h.admin.deleteTopic('orders');
    h.clock.advance(h.stores.catalog.recreateAfterMs + 1000);
    await h.admin.putTopic('orders', topic({ partitions: 1 }));
    // A day later, every old lease long expired, with receives that found nothing:
    h.clock.advance(86_400_000);
    expect(await receive('g')).toHaveLength(0);
    const later = await h.admin.getGroup('g');
    expect({ backlog: later.backlog, inFlight: later.inFlight }).toEqual({ backlog: 0, inFlight: 0 });
    await expect(h.admin.patchGroup('g', { deliveryMode: 'concurrent' })).resolves.toBeDefined();
  });
});
