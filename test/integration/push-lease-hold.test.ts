/**
 * A push request waits for a slot of the group's `maxConcurrency` (a claim takes the heads of many
 * shards, one lane each) or behind its lane's earlier requests; its leases were taken for one
 * request (timeout + 10 s). A request that would outlast them has its leases extended first (or,
 * one gone, is not sent): else another drain of the group re-claims, pushes and commits the message
 * and the shard's next one, and the stale request then reaches the endpoint after them — on a
 * serialized FIFO shard s-1, s-2, s-1 (found by an audit, 2026-12-04).
 */
import { afterEach, beforeEach, expect, it } from 'vitest';
import { cryptoRandom } from '../../lib/ports/random.js';
import { Pusher, pushLeaseMs } from '../../lib/services/pusher.js';
import { newHarness, send, testSecrets, type Harness } from '../helpers/stores.js';
import { group, topic } from '../helpers/builders.js';
import { RecordingPushQueue, pushEndpoint, type PushEndpoint } from '../helpers/push-endpoint.js';

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

  const seen: string[] = [];
  const leaseEnd = h.clock.now() + pushLeaseMs({ timeoutSeconds: 2 }) + 1000; // + the 1 s back-off every claim adds
  let worker2: Pusher | undefined;
  let concurrentDrain = false;
  const client = (slow: boolean) => ({
    post: async (_url: string, _headers: Record<string, string>, body: string) => {
      seen.push(...(JSON.parse(body) as { data: { messages: Array<{ body: string }> } }).data.messages.map((m) => m.body));
      if (slow) {
        h.clock.advance(1900); // each answer comes within the 2 s timeout
        // Meanwhile another push job of the group runs on another worker (normal on AWS: a job per stream, retry jobs…)
        if (h.clock.now() > leaseEnd && !concurrentDrain) {
          concurrentDrain = true;
          await worker2?.drain('hooks');
        }
      }
      return { status: 200, body: '' };
    },
  });
  const worker1 = new Pusher(h.stores, h.queue, client(true), testSecrets, new RecordingPushQueue(), h.clock, cryptoRandom);
  worker2 = new Pusher(h.stores, h.queue, client(false), testSecrets, new RecordingPushQueue(), h.clock, cryptoRandom);

  await worker1.drain('hooks');
  expect(concurrentDrain).toBe(true);
  // Every message reached the endpoint, and the group committed all of them.
  expect(new Set(seen)).toEqual(new Set(shards.flatMap((k) => [`${k}-1`, `${k}-2`])));
  expect(await h.admin.getGroup('hooks')).toMatchObject({ committed: 20, inFlight: 0 });
  for (const shardKey of shards) {
    const order = seen.filter((b) => b.startsWith(`${shardKey}-`));
    // s-1 must never reach the endpoint after s-2 (serialized: one in flight per shard, in order)
    expect(order.lastIndexOf(`${shardKey}-1`), `${shardKey}: ${order.join(' ')}`).toBeLessThan(order.indexOf(`${shardKey}-2`));
  }
});
