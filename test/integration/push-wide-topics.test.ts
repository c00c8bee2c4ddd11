/**
 * Found by an audit (2026-12-04): a push group on a wide FIFO topic. The dispatcher sends one push job per flagged
 * notice segment ({group, stream}); the worker drains the group with `claimForPush`, whose receive
 * reads a sample of 8 notice streams. A drain whose first claim finds nothing ends, so a message
 * announced on a notice stream outside the sample is not pushed by its own job.
 */
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { HttpWebhookClient } from '../../lib/adapters/http/webhook-client.js';
import { cryptoRandom } from '../../lib/ports/random.js';
import { Pusher } from '../../lib/services/pusher.js';
import { newHarness, send, testSecrets, type Harness } from '../helpers/stores.js';
import { group, topic } from '../helpers/builders.js';
import { RecordingPushQueue, pushEndpoint, type PushEndpoint } from '../helpers/push-endpoint.js';

let h: Harness;
let endpoint: PushEndpoint;
let pusher: Pusher;

beforeEach(async () => {
  h = await newHarness();
  endpoint = await pushEndpoint();
  pusher = new Pusher(h.stores, h.queue, new HttpWebhookClient({ allowLoopback: true }), testSecrets, new RecordingPushQueue(), h.clock, cryptoRandom);
});
afterEach(async () => {
  await endpoint.close();
});


/** The notice streams the sends of this harness wrote their notices to (what the dispatcher's push jobs name). */
function recordNoticeStreams(): string[] {
  const streams: string[] = [];
  const log = h.stores.log;
  const append = log.appendNotices.bind(log);
  log.appendNotices = (async (stream: string, ...rest: unknown[]) => {
    streams.push(stream);
    return (append as (...a: unknown[]) => unknown)(stream, ...rest);
  }) as typeof log.appendNotices;
  return streams;
}

describe.each([4, 16, 256])('push group on a FIFO topic of %i notice streams', (partitions) => {
  it('each message is pushed by the job its notice raised', async () => {
    await h.admin.putTopic('wide', topic({ type: 'fifo', partitions }));
    await h.admin.putGroup('hooks', group('wide', { push: { url: endpoint.url } }));
    const noticed = recordNoticeStreams();
    const keys = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'];
    const late: string[] = [];
    for (const key of keys) {
      await h.queue.send('wide', send(`m-${key}`, { shardKey: key }));
      // What the dispatcher's push route sends for this send's flagged notice segment.
      await pusher.run([{ group: 'hooks', stream: noticed.at(-1) }]);
      const pushed = endpoint.requests.flatMap((r) => r.messages.map((m) => m.body));
      if (!pushed.includes(`m-${key}`)) late.push(`m-${key}`);
    }
    expect(late).toEqual([]);
  });
});

describe('push group on a FIFO topic of 256 notice streams, one message', () => {
  it('is pushed by its own job, not only after dozens of later jobs of the group', async () => {
    await h.admin.putTopic('wide', topic({ type: 'fifo', partitions: 256 }));
    await h.admin.putGroup('hooks', group('wide', { push: { url: endpoint.url } }));
    const noticed = recordNoticeStreams();
    await h.queue.send('wide', send('only', { shardKey: 'order-42' }));
    const job = { group: 'hooks', stream: noticed.at(-1) };
    let jobs = 0;
    while (endpoint.requests.length === 0 && jobs < 40) {
      await pusher.run([job]);
      jobs++;
    }
    expect(endpoint.requests.flatMap((r) => r.messages.map((m) => m.body))).toEqual(['only']);
    expect(jobs).toBe(1);
  });
});

describe('push group on a standard topic of 256 partitions, one message', () => {
  it('is pushed by its own job', async () => {
    await h.admin.putTopic('many', topic({ partitions: 256 }));
    await h.admin.putGroup('hooks', group('many', { push: { url: endpoint.url } }));
    await h.queue.send('many', send('only'));
    // The partition stream the send landed on: what the dispatcher's push job names.
    const { Items } = await h.doc.send(new ScanCommand({ TableName: h.table, FilterExpression: 'begins_with(pk, :p) AND sk <> :s', ExpressionAttributeValues: { ':p': 'S#t:many/p:', ':s': '#' } }));
    const stream = String(Items?.[0]?.pk).slice(2);
    expect(stream).toMatch(/^t:many\/p:\d+$/);
    let jobs = 0;
    while (endpoint.requests.length === 0 && jobs < 40) {
      await pusher.run([{ group: 'hooks', stream }]);
      jobs++;
    }
    expect(endpoint.requests.flatMap((r) => r.messages.map((m) => m.body))).toEqual(['only']);
    expect(jobs).toBe(1);
  });
});
