/**
 * A push request waits for a slot of the group's `maxConcurrency` (a claim takes the heads of many
 * shards, one lane each) or behind its lane's earlier requests; its leases were taken for one
 * request (timeout + 10 s). A request that would outlast them has its leases extended first (or,
 * one gone, is not sent): else another drain of the group re-claims, pushes and commits the message
 * and the shard's next one, and the stale request then reaches the endpoint after them — on a
 * serialized FIFO shard s-1, s-2, s-1 (found by an audit, 2026-12-04).
 */
import { afterEach, beforeEach, expect, it } from 'vitest';
import { newHarness, send, type Harness } from '../helpers/stores.js';
import { group, topic } from '../helpers/builders.js';
import { pushEndpoint, type PushEndpoint } from '../helpers/push-endpoint.js';
import { stalePushRun } from '../helpers/stale-push.js';

let h: Harness;
let endpoint: PushEndpoint;

beforeEach(async () => {
  h = await newHarness();
  endpoint = await pushEndpoint(); // only for the URL the group save vets
});
afterEach(async () => endpoint.close());

it('never pushes a message of a serialized FIFO shard after a later message of that shard, however long the lanes wait for a slot', async () => {
  const shards = Array.from({ length: 10 }, (_, i) => `k${i}`);
  await h.admin.putTopic('ledger', topic({ type: 'fifo' }));
  // serialized (the default); one request at a time; batchSize 10 lets one claim take the heads of 10 shards
  await h.admin.putGroup('hooks', group('ledger', { push: { url: endpoint.url, batchSize: 10, maxConcurrency: 1, timeoutSeconds: 2 } }));
  for (const shardKey of shards) for (let i = 1; i <= 2; i++) await h.queue.send('ledger', send(`${shardKey}-${i}`, { shardKey }));
  const run = stalePushRun(h, 'hooks');
  await run.drain();
  expect(run.drainedMeanwhile()).toBe(true);
  // Every message reached the endpoint, and the group committed all of them.
  expect(new Set(run.seen)).toEqual(new Set(shards.flatMap((k) => [`${k}-1`, `${k}-2`])));
  expect(await h.admin.getGroup('hooks')).toMatchObject({ committed: 20, inFlight: 0 });
  for (const shardKey of shards) {
    const order = run.seen.filter((b) => b.startsWith(`${shardKey}-`));
    // s-1 must never reach the endpoint after s-2 (serialized: one in flight per shard, in order)
    expect(order.lastIndexOf(`${shardKey}-1`), `${shardKey}: ${order.join(' ')}`).toBeLessThan(order.indexOf(`${shardKey}-2`));
  }
});

/*
 * A FIFO push lane of several requests (protected and concurrent groups: a shard's messages go in
 * requests of `batchSize`, one after another): each request is checked against the claim's lease
 * end, so the later requests of a lane whose earlier one had its leases extended are extended too —
 * else another drain pushes them meanwhile, and the endpoint gets them twice, out of order
 * (a review's probe of the first fix, 2026-12-04: `… w1:A-7 w2:A-8 w2:A-9 w2:A-10 w1:A-8 w1:A-9`).
 */
for (const mode of ['protected', 'concurrent'] as const) {
  it(`${mode}: a FIFO lane of several requests keeps holding the leases of its later requests`, async () => {
    await h.admin.putTopic('ledger', topic({ type: 'fifo' }));
    await h.admin.putGroup('hooks', group('ledger', { deliveryMode: mode, push: { url: endpoint.url, batchSize: 1, maxConcurrency: 10, timeoutSeconds: 2 } }));
    const bodies = Array.from({ length: 10 }, (_, i) => `A-${i + 1}`);
    for (const body of bodies) await h.queue.send('ledger', send(body, { shardKey: 'A' }));
    const run = stalePushRun(h, 'hooks');
    await run.drain();
    expect(run.drainedMeanwhile()).toBe(true);
    // Each message pushed once, in the shard's order, and all committed.
    expect(run.seen).toEqual(bodies);
    expect(await h.admin.getGroup('hooks')).toMatchObject({ committed: 10, inFlight: 0 });
  });
}
