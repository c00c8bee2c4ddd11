/**
 * A FIFO push lane of several requests (protected and concurrent groups: a shard's messages go in
 * requests of `batchSize`, one after another): each request is checked against the claim's lease
 * end, so the later requests of a lane whose earlier one had its leases extended are extended too —
 * else another drain pushes them meanwhile, and the endpoint gets them twice, out of order
 * (a review's probe of the first fix, 2026-12-04: `… w1:A-7 w2:A-8 w2:A-9 w2:A-10 w1:A-8 w1:A-9`).
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

for (const mode of ['protected', 'concurrent'] as const) {
  it(`${mode}: a FIFO lane of several requests keeps holding the leases of its later requests`, async () => {
    await h.admin.putTopic('ledger', topic({ type: 'fifo' }));
    await h.admin.putGroup('hooks', group('ledger', { deliveryMode: mode, push: { url: endpoint.url, batchSize: 1, maxConcurrency: 10, timeoutSeconds: 2 } }));
    const bodies = Array.from({ length: 10 }, (_, i) => `A-${i + 1}`);
    for (const body of bodies) await h.queue.send('ledger', send(body, { shardKey: 'A' }));
    const seen: string[] = [];
    const leaseEnd = h.clock.now() + pushLeaseMs({ timeoutSeconds: 2 }) + 1000; // + the 1 s back-off every claim adds
    let worker2: Pusher | undefined;
    let concurrentDrain = false;
    const client = (slow: boolean) => ({
      post: async (_url: string, _headers: Record<string, string>, body: string) => {
        seen.push(...(JSON.parse(body) as { data: { messages: Array<{ body: string }> } }).data.messages.map((m) => m.body));
        if (slow) {
          h.clock.advance(1900); // each answer within the 2 s timeout
          // Meanwhile another push job of the group runs on another worker.
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
    // Each message pushed once, in the shard's order, and all committed.
    expect(seen).toEqual(bodies);
    expect(await h.admin.getGroup('hooks')).toMatchObject({ committed: 10, inFlight: 0 });
  });
}
