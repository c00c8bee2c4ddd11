/** a poison message at the head of a FIFO shard in a push group (found by an audit, 2026-12-04). */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { HttpWebhookClient } from '../../lib/adapters/http/webhook-client.js';
import { cryptoRandom } from '../../lib/ports/random.js';
import { Pusher } from '../../lib/services/pusher.js';
import { newHarness, send, testSecrets, type Harness } from '../helpers/stores.js';
import { group, topic } from '../helpers/builders.js';
import { RecordingPushQueue, pushEndpoint, type PushEndpoint } from '../helpers/push-endpoint.js';

let h: Harness;
let endpoint: PushEndpoint;
let queue: RecordingPushQueue;
let pusher: Pusher;

beforeEach(async () => {
  h = await newHarness();
  endpoint = await pushEndpoint();
  queue = new RecordingPushQueue();
  pusher = new Pusher(h.stores, h.queue, new HttpWebhookClient({ allowLoopback: true }), testSecrets, queue, h.clock, cryptoRandom);
  await h.admin.putTopic('ledger', topic({ type: 'fifo' }));
});
afterEach(async () => endpoint.close());

describe('push FIFO lane with a poison head', () => {
  it.each(['protected', 'concurrent'] as const)('%s: only the poison message is dead-lettered; m2 and m3 are pushed', async (deliveryMode) => {
    await h.admin.putGroup('hooks', group('ledger', { push: { url: endpoint.url, batchSize: 1 }, deliveryMode, maxDeliveries: 2, retryPolicy: { initialSeconds: 1 } }));
    for (const body of ['poison', 'm2', 'm3']) await h.queue.send('ledger', send(body, { shardKey: 'A' }));
    endpoint.answer = (r) => ({ status: r.messages.some((m) => m.body === 'poison') ? 500 : 200 });
    for (let round = 0; round < 6; round++) {
      await pusher.drain('hooks');
      h.clock.advance(2_000);
    }
    const pushed = endpoint.requests.flatMap((r) => r.messages.map((m) => `${m.body}#${m.deliveryCount}`));
    const stats = await h.admin.getGroup('hooks');
    expect({ neverPushed: ['m2', 'm3'].filter((b) => !pushed.some((p) => p.startsWith(`${b}#`))), deadLettered: stats.deadLettered, committed: stats.committed }).toEqual({
      neverPushed: [],
      deadLettered: 1,
      committed: 2,
    });
  });
});
