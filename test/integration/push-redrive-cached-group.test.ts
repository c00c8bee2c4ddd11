/**
 * Found by an audit (2026-12-04): a push group's redrive, with the push worker in another container whose catalog
 * cache (5 s, as deployed) still holds the group item from before the redrive (no `rd` hint).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { HttpWebhookClient } from '../../lib/adapters/http/webhook-client.js';
import { cryptoRandom } from '../../lib/ports/random.js';
import { InProcessNotifier } from '../../lib/ports/notifier.js';
import { Pusher } from '../../lib/services/pusher.js';
import { Redriver } from '../../lib/services/redriver.js';
import { createStores } from '../../lib/services/stores.js';
import { newHarness, send, testSecrets, type Harness } from '../helpers/stores.js';
import { group, topic } from '../helpers/builders.js';
import { RecordingPushQueue, pushEndpoint, type PushEndpoint } from '../helpers/push-endpoint.js';

let h: Harness;
let endpoint: PushEndpoint;
beforeEach(async () => {
  h = await newHarness();
  endpoint = await pushEndpoint();
  await h.admin.putTopic('orders', topic());
});
afterEach(async () => endpoint.close());

describe('push group redrive', () => {
  it('the redriven message is pushed by the jobs the system sends, with the worker’s group item cached from before', async () => {
    await h.admin.putGroup('hooks', group('orders', { push: { url: endpoint.url }, maxDeliveries: 1 }));
    // The push worker's container: its own stores, the catalog cached for 5 s as deployed.
    const workerStores = createStores(h.doc, h.table, { clock: h.clock, secrets: testSecrets, catalog: { cacheTtlMs: 5000, now: () => h.clock.now() } } as never);
    const jobs = new RecordingPushQueue();
    const worker = new Pusher(workerStores, h.queue, new HttpWebhookClient({ allowLoopback: true }), testSecrets, jobs, h.clock, cryptoRandom);
    endpoint.answer = () => ({ status: 500 });
    await h.queue.send('orders', send('poison'));
    await worker.drain('hooks'); // pushed once, failed: the last delivery
    await worker.drain('hooks'); // dead-lettered
    expect((await h.admin.getGroup('hooks')).deadLettered).toBe(1);
    endpoint.answer = () => ({ status: 204 });
    jobs.sent.length = 0;

    // The API container's redrive (as functions/commons/container.ts builds it), with the push queue.
    const apiQueue = new RecordingPushQueue();
    const redriver = new Redriver(h.stores, h.clock, new InProcessNotifier(), ...([apiQueue, 5000] as unknown as []));
    expect(await redriver.redrive('hooks', undefined)).toEqual({ redriven: 1, more: false });
    // The dispatcher's job for the redrive stream's segment arrives at once.
    await worker.drain('hooks');
    // Then whatever jobs the redrive sent, each when due.
    for (const { job, delayMs } of [...apiQueue.sent].sort((a, b) => a.delayMs - b.delayMs)) {
      h.clock.t = Math.max(h.clock.t, h.clock.now() + delayMs);
      await worker.run([job]);
    }
    h.clock.advance(60_000);
    expect(endpoint.requests.map((r) => `${r.messages[0]?.body}#${r.messages[0]?.deliveryCount}`)).toEqual(['poison#1', 'poison#1']);
    expect(await h.admin.getGroup('hooks')).toMatchObject({ deadLettered: 0, committed: 1 });
  });
});
