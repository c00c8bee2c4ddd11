/**
 * A push endpoint's 2xx answer names the messages to retry (SPEC §3.9); the webhook client reads up
 * to 1 MiB of it. An answer whose retry list comes with long diagnostics is honoured, and one too
 * long to read retries the whole request rather than committing what it may have listed.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { HttpWebhookClient } from '../../lib/adapters/http/webhook-client.js';
import { cryptoRandom } from '../../lib/ports/random.js';
import { Pusher } from '../../lib/services/pusher.js';
import { newHarness, send, testSecrets, type Harness } from '../helpers/stores.js';
import { group, topic } from '../helpers/builders.js';
import { RecordingPushQueue, pushEndpoint, type PushEndpoint } from '../helpers/push-endpoint.js';

let h: Harness;
let endpoint: PushEndpoint;

beforeEach(async () => {
  h = await newHarness();
  endpoint = await pushEndpoint();
  await h.admin.putTopic('orders', topic());
  await h.admin.putGroup('hooks', group('orders', { push: { url: endpoint.url, batchSize: 2 } }));
  for (const body of ['ok', 'fails']) await h.queue.send('orders', send(body));
});
afterEach(async () => endpoint.close());

/** A 200 naming the failed message in `retry`, with a diagnostic of `repeat` × 13 bytes for it. */
const answerWithDiagnostics = (repeat: number) => {
  endpoint.answer = (r) => {
    const failed = r.messages.filter((m) => m.body === 'fails').map((m) => m.messageId);
    return { status: 200, body: { retry: failed, errors: Object.fromEntries(failed.map((id) => [id, 'stack trace…'.repeat(repeat)])) } };
  };
};
const drain = () => new Pusher(h.stores, h.queue, new HttpWebhookClient({ allowLoopback: true }), testSecrets, new RecordingPushQueue(), h.clock, cryptoRandom).drain('hooks');

describe('a push answer with a retry list', () => {
  it('over 64 KiB (≈ 91 KB of diagnostics): the listed message is retried, the other committed', async () => {
    answerWithDiagnostics(7000);
    await drain();
    expect(endpoint.requests).toHaveLength(1);
    expect(await h.admin.getGroup('hooks')).toMatchObject({ committed: 1, inFlight: 1 });
  });

  it('over the 1 MiB the client reads: both messages are retried, none committed, and the attempt says why', async () => {
    answerWithDiagnostics(90_000);
    await drain();
    expect(endpoint.requests).toHaveLength(1);
    expect(await h.admin.getGroup('hooks')).toMatchObject({ committed: 0, inFlight: 2 });
    const [attempt] = await h.stores.pushState.lastAttempts('hooks');
    expect(attempt).toMatchObject({ status: 200, messages: 2, retried: 2, error: 'answer too long to read its retry list: all retried' });
  });
});
