/**
 * Found by a review (2026-12-04), before its fix: a push job's stream now leads its drain's claims, so a lone message on a wide topic is
 * pushed by its own job. The jobs the worker sends itself — the retry job after a failed push (and the
 * continuation job of a drain that ran out of time) — name no stream: their drain samples 8 of 256
 * partitions, ends at its first empty claim, and the failed message is not pushed again by its retry job.
 */
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { HttpWebhookClient } from '../../lib/adapters/http/webhook-client.js';
import { InProcessNotifier } from '../../lib/ports/notifier.js';
import { cryptoRandom, type Random } from '../../lib/ports/random.js';
import { QueueService } from '../../lib/services/queue-service.js';
import { Pusher } from '../../lib/services/pusher.js';
import { newHarness, send, testSecrets, type Harness } from '../helpers/stores.js';
import { group, topic } from '../helpers/builders.js';
import { RecordingPushQueue, pushEndpoint, type PushEndpoint } from '../helpers/push-endpoint.js';

let h: Harness;
let endpoint: PushEndpoint;
let pusher: Pusher;
let jobs: RecordingPushQueue;
/** Fixed draws: the worker's rotation over the 256 partitions starts at 0, the sender's sticky partition is 200. */
const fixed = (f: number): Random => ({ ...cryptoRandom, fraction: () => f });

beforeEach(async () => {
  h = await newHarness();
  endpoint = await pushEndpoint();
  jobs = new RecordingPushQueue();
  pusher = new Pusher(h.stores, new QueueService(h.stores, h.clock, fixed(0), new InProcessNotifier(), h.timers), new HttpWebhookClient({ allowLoopback: true }), testSecrets, jobs, h.clock, cryptoRandom);
});
afterEach(async () => {
  await endpoint.close();
});

describe('push group on a standard topic of 256 partitions, one message whose first push fails', () => {
  it('is pushed again by the retry job its failure sent', async () => {
    await h.admin.putTopic('many', topic({ partitions: 256 }));
    await h.admin.putGroup('hooks', group('many', { push: { url: endpoint.url }, retryPolicy: { initialSeconds: 30 } }));
    let calls = 0;
    endpoint.answer = () => (++calls === 1 ? { status: 500 } : { status: 204 });
    await new QueueService(h.stores, h.clock, fixed(200.5 / 256), new InProcessNotifier(), h.timers).send('many', send('only'));
    const { Items } = await h.doc.send(new ScanCommand({ TableName: h.table, FilterExpression: 'begins_with(pk, :p) AND sk <> :s', ExpressionAttributeValues: { ':p': 'S#t:many/p:', ':s': '#' } }));
    const stream = String(Items?.[0]?.pk).slice(2);
    expect(stream).toBe('t:many/p:200');
    // The dispatcher's job for the send: pushed once, answered 500.
    await pusher.run([{ group: 'hooks', stream }]);
    expect(endpoint.requests).toHaveLength(1);
    const retry = jobs.sent.splice(0);
    expect(retry.length).toBeGreaterThan(0);
    // The retry job, at its time (as the push queue delivers it).
    h.clock.advance(Math.max(...retry.map((r) => r.delayMs)) + 1000);
    await pusher.run(retry.map((r) => r.job));
    // Failing, the retry drain also sends no further job: nothing of the worker's own comes back for it.
    console.log(`jobs the retry drain sent: ${JSON.stringify(jobs.sent)}`);
    expect({ retryJob: retry.map((r) => r.job), pushes: endpoint.requests.length }).toEqual({ retryJob: retry.map((r) => r.job), pushes: 2 });
  });
});
