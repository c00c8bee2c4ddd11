/**
 * Review of the FIFO shard cursor cache (5a8a91b): a visibility change of another container is a
 * write the shard claim does not condition on (it moves neither `nx`, `kn`, the number of leases
 * nor, with the `keep` variant, the ready-index key). A claim planned from an entry older than a
 * release therefore passes, and under `concurrent` it delivers the next message of the shard while
 * the released one waits out its back-off (docs/design.md, Retry policy: "no later message of the
 * shard is delivered, new or again, before it"), and it moves the ready-index entry to the stale
 * lease's expiry, so the released message is not claimed when its back-off ends.
 * Two "containers" on one DynamoDB Local table, one clock, as shard-cursor-cache.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { Seeker } from '../../lib/services/seeker.js';
import { FakeClock, harness, send, testTable, type Harness } from '../helpers/stores.js';
import * as build from '../helpers/builders.js';

let a: Harness;
let b: Harness;

const bodies = async (h: Harness, maxMessages = 10) =>
  (await h.queue.receive('g', { maxMessages, waitSeconds: 0 })).map((m) => `${m.body}#${m.deliveryCount}`);

async function containers(cacheMs: number) {
  const { doc, table } = await testTable();
  const clock = new FakeClock();
  a = harness(doc, table, { clock, cursorCacheMs: cacheMs });
  b = harness(doc, table, { clock, cursorCacheMs: cacheMs });
  await a.admin.putTopic('t', build.topic({ type: 'fifo' }));
  await a.admin.putGroup(
    'g',
    build.group('t', { deliveryMode: 'concurrent', visibilityTimeoutSeconds: 30, maxDeliveries: 10, retryPolicy: { initialSeconds: 5 } }),
  );
  for (const name of ['m0', 'm1']) await a.queue.send('t', send(name, { shardKey: 'K' }));
}

/** A receives m0; B (another container) releases it (5 s back-off); A receives again 100 ms later, then after the back-off. */
async function releasedElsewhere(): Promise<{ during: string[]; after: string[] }> {
  const [m0] = await a.queue.receive('g', { maxMessages: 1, waitSeconds: 0 });
  expect(m0?.body).toBe('m0');
  await b.queue.changeVisibility('g', m0!.receiptHandle, 0);
  a.clock.advance(100);
  const during = await bodies(a);
  a.clock.advance(5_000);
  const after = [...(await bodies(a)), ...(await bodies(b))];
  return { during, after };
}

describe('review: a release in another container and the shard cursor cache (concurrent)', () => {
  it('cache off (the rule): nothing later is delivered during the back-off; m0 then m1 after it', async () => {
    await containers(0);
    expect(await releasedElsewhere()).toEqual({ during: [], after: ['m0#2', 'm1#1'] });
  });

  it('cache on: the same — a claim planned from an entry older than the release must not pass', async () => {
    await containers(2_000);
    expect(await releasedElsewhere()).toEqual({ during: [], after: ['m0#2', 'm1#1'] });
  });
});

describe('review: the seek epoch is still needed when the entry holds no lease', () => {
  it('an entry with an empty lease map, a seek and claims that bring nx back: the claim fails on se, not on fl', async () => {
    const { doc, table } = await testTable();
    const clock = new FakeClock();
    a = harness(doc, table, { clock, cursorCacheMs: 2_000 });
    b = harness(doc, table, { clock, cursorCacheMs: 2_000 });
    await a.admin.putTopic('t', build.topic({ type: 'fifo' }));
    await a.admin.putGroup('g', build.group('t', { deliveryMode: 'concurrent', visibilityTimeoutSeconds: 30, maxDeliveries: 10 }));
    for (const name of ['m0', 'm1', 'm2']) await a.queue.send('t', send(name, { shardKey: 'K' }));
    // A's entry: m0 committed, no lease, nx past m0, epoch 0 (its commit returned the cursor it left).
    const [m0] = await a.queue.receive('g', { maxMessages: 1, waitSeconds: 0 });
    expect(m0?.body).toBe('m0');
    expect(await a.queue.commit('g', [m0!.receiptHandle])).toMatchObject([{ status: 'committed' }]);
    // B leases m1 in epoch 0, seeks back, takes m0 again and commits it: nx, kn and the (empty) lease
    // map are what A's entry holds; only the seek epoch differs.
    const [stale] = await b.queue.receive('g', { maxMessages: 1, waitSeconds: 0 });
    expect(stale?.body).toBe('m1');
    await new Seeker(b.stores, b.clock).seek('g', 'earliest', undefined);
    const [again] = await b.queue.receive('g', { maxMessages: 1, waitSeconds: 0 });
    expect([again?.body, again?.deliveryCount]).toEqual(['m0', 1]);
    expect(await b.queue.commit('g', [again!.receiptHandle])).toMatchObject([{ status: 'committed' }]);
    const [replay] = await a.queue.receive('g', { maxMessages: 1, waitSeconds: 0 });
    expect([replay?.body, replay?.deliveryCount]).toEqual(['m1', 1]);
    expect(await a.queue.commit('g', [replay!.receiptHandle])).toMatchObject([{ status: 'committed' }]);
    // B's pre-seek handle of m1 must not pass for the replay's commit.
    expect(await b.queue.commit('g', [stale!.receiptHandle])).toMatchObject([{ error: { code: 'ReceiptHandleExpired' } }]);
  });
});
