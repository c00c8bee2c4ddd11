/**
 * Found by an audit (2026-12-04): a push to an HTTPS endpoint that is a Lambda function URL (design.md, Limits by
 * construction: "Lambda 6 MB synchronous payload (push to a Lambda target or a function URL endpoint)").
 * Lambda hands the function the request as an event whose `body` is the push JSON as a string: the
 * 6 MB invocation payload counts that event, with every `"` of the push JSON escaped once more.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { HttpWebhookClient } from '../../lib/adapters/http/webhook-client.js';
import { cryptoRandom } from '../../lib/ports/random.js';
import { Pusher } from '../../lib/services/pusher.js';
import { newHarness, send, testSecrets, type Harness } from '../helpers/stores.js';
import { group, topic } from '../helpers/builders.js';
import { pushEndpoint, RecordingPushQueue, type PushEndpoint } from '../helpers/push-endpoint.js';

const LAMBDA_SYNC_PAYLOAD_MAX = 6 * 1024 * 1024;
let h: Harness;
let endpoint: PushEndpoint;
let pusher: Pusher;

beforeEach(async () => {
  h = await newHarness();
  endpoint = await pushEndpoint();
  pusher = new Pusher(h.stores, h.queue, new HttpWebhookClient({ allowLoopback: true }), testSecrets, new RecordingPushQueue(), h.clock, cryptoRandom);
});
afterEach(async () => endpoint.close());

/** The event Lambda builds for a function URL request (payload format 2.0). */
const functionUrlEvent = (headers: Record<string, unknown>, body: string) => ({
  version: '2.0', routeKey: '$default', rawPath: '/hook', rawQueryString: '', headers,
  requestContext: { accountId: 'anonymous', apiId: 'x', domainName: 'x.lambda-url.us-east-1.on.aws', domainPrefix: 'x', http: { method: 'POST', path: '/hook', protocol: 'HTTP/1.1', sourceIp: '203.0.113.7', userAgent: 'sluice' }, requestId: 'r', routeKey: '$default', stage: '$default', time: '01/Dec/2026:06:40:00 +0000', timeEpoch: 0 },
  body, isBase64Encoded: false,
});

const orderBody = (n: number) => JSON.stringify({ order: `o-${n}`, lines: Array.from({ length: 1000 }, (_, i) => ({ sku: `sku-${i}`, qty: i % 7, note: 'gift' })) });

describe('push to a function-URL endpoint: the invocation payload stays ≤ 6 MB', () => {
  it('batchSize 100, 100 messages whose bodies are JSON documents', async () => {
    await h.admin.putTopic('orders', topic());
    await h.admin.putGroup('hooks', group('orders', { push: { url: endpoint.url, batchSize: 100 } }));
    for (let i = 0; i < 100; i += 10) await h.queue.sendBatch('orders', Array.from({ length: 10 }, (_, j) => send(orderBody(i + j))));
    await pusher.drain('hooks');
    expect(endpoint.requests.length).toBeGreaterThan(0);
    const sizes = endpoint.requests.map((r) => ({ messages: r.messages.length, body: Buffer.byteLength(r.body), event: Buffer.byteLength(JSON.stringify(functionUrlEvent(r.headers as Record<string, unknown>, r.body))) }));
    console.log(sizes);
    for (const s of sizes) {
      expect(s.body).toBeLessThanOrEqual(5_000_000); // the budget Sluice keeps: holds
      expect(s.event).toBeLessThanOrEqual(LAMBDA_SYNC_PAYLOAD_MAX); // what Lambda checks for a function URL
    }
  });
});
