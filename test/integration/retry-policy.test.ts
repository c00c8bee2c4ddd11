/**
 * The retry policy (SPEC §1, issue 15 item 3) on DynamoDB Local with the injected clock: a failed
 * attempt (lease expired, or released) is claimable again only after
 * min(maxSeconds, initialSeconds × multiplier^(deliveryCount − 1)); FIFO shards wait with it.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import type { DeliveredMessage } from '../../lib/domain/model.js';
import { newHarness, send, type Harness } from '../helpers/stores.js';
import { group, topic } from '../helpers/builders.js';

let h: Harness;

beforeEach(async () => {
  h = await newHarness();
  await h.admin.putTopic('orders', topic());
  await h.admin.putTopic('ledger', topic({ type: 'fifo' }));
});

const receive = (name = 'billing', max = 10) => h.queue.receive(name, { maxMessages: max, waitSeconds: 0 });
const release = (m: DeliveredMessage | undefined, name = 'billing') => h.queue.changeVisibility(name, m!.receiptHandle, 0);
const bodies = (ms: DeliveredMessage[]) => ms.map((m) => `${m.body}#${m.deliveryCount}`);

/** Moves the clock to `at` ms after `from` and receives. */
async function receiveAt(from: number, at: number, name = 'billing') {
  h.clock.t = from + at;
  return receive(name);
}

describe('retry policy on a standard topic', () => {
  it('a handler failing for 1 s no longer burns maxDeliveries (defaults 1 s, ×2, 600 s); with initialSeconds 0 it did', { timeout: 180_000 }, async () => {
    await h.admin.putGroup('billing', group('orders'));
    await h.admin.putGroup('eager', group('orders', { retryPolicy: { initialSeconds: 0 } }));
    await h.queue.send('orders', send('charge'));
    const start = h.clock.now();
    const outage = start + 1_000;
    // A consumer polling every 100 ms whose handler fails (releases) until the outage ends, then commits.
    const billing: number[] = [];
    while (h.clock.now() <= outage + 100) {
      const [m] = await receive('billing', 1);
      if (m) {
        billing.push(m.deliveryCount);
        if (h.clock.now() < outage) await release(m);
        else {
          await h.queue.commit('billing', [m.receiptHandle]);
          break;
        }
      }
      h.clock.advance(100);
    }
    // Delivered at 0 ms, failed; again at 1,000 ms (the outage is over): committed.
    expect(billing).toEqual([1, 2]);
    expect(await h.admin.getGroup('billing')).toMatchObject({ deadLettered: 0, committed: 1 });
    // The same consumer on `eager` (at once), without the clock even moving: 16 deliveries, then the dead letter.
    h.clock.t = start;
    const eager: number[] = [];
    for (let m = (await receive('eager', 1))[0]; m; m = (await receive('eager', 1))[0]) {
      eager.push(m.deliveryCount);
      await release(m, 'eager');
    }
    expect(eager).toEqual(Array.from({ length: 16 }, (_, i) => i + 1));
    expect(h.clock.now()).toBe(start);
    expect((await h.admin.getGroup('eager')).deadLettered).toBe(1);
  });

  it('released messages come back after initialSeconds × multiplier^(deliveryCount − 1), capped at maxSeconds; the last failure dead-letters at once', async () => {
    await h.admin.putGroup('billing', group('orders', { maxDeliveries: 6, retryPolicy: { initialSeconds: 2, multiplier: 3, maxSeconds: 10 } }));
    await h.queue.send('orders', send('flaky'));
    const delays = [2_000, 6_000, 10_000, 10_000, 10_000];
    let [m] = await receive();
    for (const [i, delay] of delays.entries()) {
      expect(m?.deliveryCount).toBe(i + 1);
      const releasedAt = h.clock.now();
      await release(m);
      expect(await receiveAt(releasedAt, delay - 1)).toEqual([]);
      [m] = await receiveAt(releasedAt, delay);
      expect(m?.body).toBe('flaky');
    }
    expect(m?.deliveryCount).toBe(6);
    await release(m);
    expect(await receive()).toEqual([]); // the claim dead-letters it now
    expect((await h.admin.getGroup('billing')).deadLettered).toBe(1);
  });

  it('a lease that expires waits the delay after its visibility ends', async () => {
    await h.admin.putGroup('billing', group('orders', { visibilityTimeoutSeconds: 5, retryPolicy: { initialSeconds: 4, multiplier: 2, maxSeconds: 600 } }));
    await h.queue.send('orders', send('slow'));
    const t0 = h.clock.now();
    expect(bodies(await receive())).toEqual(['slow#1']);
    expect(await receiveAt(t0, 5_000 + 4_000 - 1)).toEqual([]);
    const [again] = await receiveAt(t0, 5_000 + 4_000);
    expect(again?.deliveryCount).toBe(2);
    // The second failure waits 8 s after this lease's 5 s.
    const t1 = h.clock.now();
    expect(await receiveAt(t1, 5_000 + 8_000 - 1)).toEqual([]);
    expect(bodies(await receiveAt(t1, 5_000 + 8_000))).toEqual(['slow#3']);
  });

  it('a handle may still commit while its message waits out the back-off', async () => {
    await h.admin.putGroup('billing', group('orders', { visibilityTimeoutSeconds: 5, retryPolicy: { initialSeconds: 30 } }));
    await h.queue.send('orders', send('late'));
    const t0 = h.clock.now();
    const [m] = await receive();
    h.clock.t = t0 + 20_000; // visibility over, back-off not
    expect(await h.queue.commit('billing', [m!.receiptHandle])).toEqual([{ receiptHandle: m!.receiptHandle, status: 'committed' }]);
    h.clock.t = t0 + 60_000;
    expect(await receive()).toEqual([]);
  });

  it('initialSeconds 0 means at once', async () => {
    await h.admin.putGroup('billing', group('orders', { visibilityTimeoutSeconds: 5, retryPolicy: { initialSeconds: 0, maxSeconds: 0 } }));
    await h.queue.send('orders', send('now'));
    const t0 = h.clock.now();
    const [m] = await receive();
    await release(m);
    expect(bodies(await receive())).toEqual(['now#2']);
    expect(await receiveAt(t0, 5_000 - 1)).toEqual([]);
    expect(bodies(await receiveAt(t0, 5_000))).toEqual(['now#3']); // expiry: no delay either
  });

  it('an explicit visibility > 0 wins over the policy', async () => {
    await h.admin.putGroup('billing', group('orders', { retryPolicy: { initialSeconds: 60 } }));
    await h.queue.send('orders', send('retry-in-3s'));
    const [m] = await receive();
    const at = h.clock.now();
    await h.queue.changeVisibility('billing', m!.receiptHandle, 3);
    expect(await receiveAt(at, 2_999)).toEqual([]);
    expect(bodies(await receiveAt(at, 3_000))).toEqual(['retry-in-3s#2']);
  });

  it('a PATCHed policy applies to the next lease', async () => {
    await h.admin.putGroup('billing', group('orders', { retryPolicy: { initialSeconds: 100, maxSeconds: 100 } }));
    await h.queue.send('orders', send('m'));
    await h.admin.patchGroup('billing', { retryPolicy: { initialSeconds: 0 } });
    const [m] = await receive();
    await release(m);
    expect(bodies(await receive())).toEqual(['m#2']);
  });
});

describe('retry policy on a FIFO topic: the shard waits with the message (order first)', () => {
  it('serialized: nothing later of the shard is delivered during the back-off; other shards go on', async () => {
    await h.admin.putGroup('billing', group('ledger', { retryPolicy: { initialSeconds: 2 } }));
    await h.queue.sendBatch('ledger', [send('a1', { shardKey: 'A' }), send('a2', { shardKey: 'A' }), send('b1', { shardKey: 'B' })]);
    const first = await receive();
    expect(bodies(first).sort()).toEqual(['a1#1', 'b1#1']);
    const releasedAt = h.clock.now();
    await release(first.find((m) => m.body === 'a1'));
    await h.queue.commit('billing', [first.find((m) => m.body === 'b1')!.receiptHandle]);
    await h.queue.send('ledger', send('b2', { shardKey: 'B' }));
    expect(bodies(await receiveAt(releasedAt, 1_999))).toEqual(['b2#1']);
    const [a1] = await receiveAt(releasedAt, 2_000);
    expect(bodies([a1!])).toEqual(['a1#2']);
    await h.queue.commit('billing', [a1!.receiptHandle]);
    expect(bodies(await receive())).toEqual(['a2#1']);
  });

  it('protected: released messages of a shard come back in order after the first one’s back-off, before anything new', async () => {
    await h.admin.putGroup('billing', group('ledger', { deliveryMode: 'protected', retryPolicy: { initialSeconds: 3, multiplier: 2 } }));
    await h.queue.sendBatch('ledger', ['a1', 'a2', 'a3'].map((b) => send(b, { shardKey: 'A' })));
    const [a1, a2, a3] = await receive();
    expect(bodies([a1!, a2!, a3!])).toEqual(['a1#1', 'a2#1', 'a3#1']);
    // a2 commits (pending behind a1); a1 fails; a3 is given back behind it, as the SDK Consumer does.
    expect(await h.queue.commit('billing', [a2!.receiptHandle])).toEqual([{ receiptHandle: a2!.receiptHandle, status: 'pending' }]);
    const releasedAt = h.clock.now();
    await release(a1);
    h.clock.advance(500);
    await release(a3); // its own delay (3 s from 500 ms) ends after a1's: it still waits for a1
    await h.queue.send('ledger', send('a4', { shardKey: 'A' }));
    expect(await receiveAt(releasedAt, 2_999)).toEqual([]);
    const again = await receiveAt(releasedAt, 3_500);
    expect(bodies(again)).toEqual(['a1#2', 'a3#2', 'a4#1']);
    // Commits take effect in sequence: a1, then the pending a2, a3, a4.
    expect((await h.queue.commit('billing', again.map((m) => m.receiptHandle))).map((r) => 'status' in r && r.status)).toEqual([
      'committed',
      'committed',
      'committed',
    ]);
    expect((await h.admin.getGroup('billing')).committed).toBe(4);
  });

  it('protected: a later message released with a shorter delay still waits for the earlier one', async () => {
    await h.admin.putGroup('billing', group('ledger', { deliveryMode: 'protected', retryPolicy: { initialSeconds: 1, multiplier: 10, maxSeconds: 600 } }));
    await h.queue.sendBatch('ledger', ['a1', 'a2'].map((b) => send(b, { shardKey: 'A' })));
    // a1 fails twice (its next delay: 10 s); a2 once (1 s).
    let [a1, a2] = await receive();
    await release(a1);
    await release(a2);
    h.clock.advance(1_000);
    [a1, a2] = await receive();
    expect(bodies([a1!, a2!])).toEqual(['a1#2', 'a2#2']);
    const t = h.clock.now();
    await release(a1); // 10 s
    await h.queue.commit('billing', [a2!.receiptHandle]); // pending behind a1
    expect(await receiveAt(t, 9_999)).toEqual([]);
    expect(bodies(await receiveAt(t, 10_000))).toEqual(['a1#3']);
  });
});
