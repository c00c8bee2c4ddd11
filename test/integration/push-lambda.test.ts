/**
 * Push to a Lambda function target (AWS only, SPEC §3.9): the real push worker
 * and table (DynamoDB Local), the Lambda service mocked (it has no local twin):
 * the event is the push request's JSON, the function's result is the answer,
 * a function error or a time-out fails the attempt.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mockClient } from 'aws-sdk-client-mock';
import { InvokeCommand, LambdaClient, type InvokeCommandOutput } from '@aws-sdk/client-lambda';
import { HttpWebhookClient } from '../../lib/adapters/http/webhook-client.js';
import { AwsLambdaInvoker, MAX_ANSWER_BYTES } from '../../lib/adapters/aws/lambda-invoker.js';
import { cryptoRandom } from '../../lib/ports/random.js';
import { Pusher } from '../../lib/services/pusher.js';
import { newHarness, send, testSecrets, type Harness } from '../helpers/stores.js';
import { group, topic } from '../helpers/builders.js';
import { RecordingPushQueue } from '../helpers/push-endpoint.js';

const FUNCTION = 'arn:aws:lambda:eu-west-1:123456789012:function:orders-handler';
const lambda = mockClient(LambdaClient);
/** A result payload as the SDK hands it over (a Uint8Array; the blob adapter's helpers are not used). */
const payload = (text: string) => new TextEncoder().encode(text) as InvokeCommandOutput['Payload'];
const encode = (value: unknown) => payload(JSON.stringify(value));
const eventOf = (call: number) => JSON.parse(new TextDecoder().decode(lambda.commandCalls(InvokeCommand)[call]?.args[0].input.Payload as Uint8Array)) as {
  type: string;
  data: { group: string; messages: Array<{ messageId: string; body: string; deliveryCount: number }> };
};

let h: Harness;
let queue: RecordingPushQueue;
let pusher: Pusher;

beforeEach(async () => {
  lambda.reset();
  h = await newHarness({ pushLambdaArns: [FUNCTION] });
  queue = new RecordingPushQueue();
  pusher = new Pusher(h.stores, h.queue, new HttpWebhookClient({ allowLoopback: true }), testSecrets, queue, h.clock, cryptoRandom, {
    lambda: new AwsLambdaInvoker(new LambdaClient({ region: 'eu-west-1' })),
  });
  await h.admin.putTopic('orders', topic());
  await h.admin.putGroup('fn', group('orders', { push: { lambdaArn: FUNCTION, batchSize: 10 } }));
});
afterEach(() => lambda.reset());

describe('push to a Lambda function', () => {
  it('invokes it synchronously with the push JSON; its result commits all but the retry list', async () => {
    await h.queue.sendBatch('orders', [send('a'), send('b'), send('c')]);
    lambda.on(InvokeCommand).callsFake((input: { Payload: Uint8Array }) => {
      const event = JSON.parse(new TextDecoder().decode(input.Payload)) as { data: { messages: Array<{ messageId: string; body: string }> } };
      const b = event.data.messages.find((m) => m.body === 'b');
      return { StatusCode: 200, Payload: encode({ retry: b ? [b.messageId] : [] }) };
    });
    await pusher.drain('fn');

    const calls = lambda.commandCalls(InvokeCommand);
    expect(calls[0]?.args[0].input).toMatchObject({ FunctionName: FUNCTION, InvocationType: 'RequestResponse' });
    const event = eventOf(0);
    expect(event).toMatchObject({ type: 'messages', data: { group: 'fn' } });
    expect(event.data.messages.map((m) => m.body).sort()).toEqual(['a', 'b', 'c']);
    expect(await h.admin.getGroup('fn')).toMatchObject({ committed: 2, deadLettered: 0 });
    expect((await h.admin.getGroup('fn')).push?.lastAttempts[0]).toMatchObject({ status: 200, retried: 1 });
    // The listed message is retried after the back-off: a timer, not a poll.
    expect(queue.sent.map((s) => s.delayMs)).toEqual([1000]);
  });

  it('a function error fails the attempt: nothing committed, every message retried per the retry policy', async () => {
    await h.queue.send('orders', send('x'));
    lambda.on(InvokeCommand).resolves({ StatusCode: 200, FunctionError: 'Unhandled', Payload: encode({ errorType: 'Error', errorMessage: 'boom' }) });
    await pusher.drain('fn');

    expect(await h.admin.getGroup('fn')).toMatchObject({ committed: 0, inFlight: 1 });
    const attempt = (await h.admin.getGroup('fn')).push?.lastAttempts[0];
    expect(attempt?.status).toBeNull();
    expect(attempt?.error).toContain('the function failed (Unhandled)');
    expect(queue.sent.map((s) => s.delayMs)).toEqual([1000]);

    // After the back-off the function succeeds: delivered again with deliveryCount 2, committed.
    lambda.reset();
    lambda.on(InvokeCommand).resolves({ StatusCode: 200, Payload: encode(null) });
    h.clock.advance(1000);
    await pusher.drain('fn');
    expect(eventOf(0).data.messages.map((m) => m.deliveryCount)).toEqual([2]);
    expect(await h.admin.getGroup('fn')).toMatchObject({ committed: 1, inFlight: 0 });
  });

  it('an invocation that does not answer within timeoutSeconds fails the attempt', async () => {
    await h.admin.patchGroup('fn', { push: { timeoutSeconds: 1 } });
    await h.queue.send('orders', send('slow'));
    // The function answers after 5 s: later than the group's 1 s.
    lambda.on(InvokeCommand).callsFake(() => new Promise((resolve) => setTimeout(() => resolve({ StatusCode: 200, Payload: encode(null) }), 5000)));
    const started = Date.now();
    await pusher.drain('fn');
    expect(Date.now() - started).toBeLessThan(4000);
    expect(await h.admin.getGroup('fn')).toMatchObject({ committed: 0 });
    expect((await h.admin.getGroup('fn')).push?.lastAttempts[0]?.error).toBe('no answer within 1000 ms');
  });
});

describe('push requests within Lambda\'s 6 MB synchronous payload', () => {
  it('batchSize 100 with 30 × 256 KiB messages: every invocation < 5 MB, all delivered and committed', async () => {
    await h.admin.patchGroup('fn', { push: { batchSize: 100 } });
    for (let i = 0; i < 30; i += 5) {
      await h.queue.sendBatch('orders', [0, 1, 2, 3, 4].map((j) => send(`${String(i + j).padStart(3, '0')}:${'x'.repeat(256 * 1024 - 4)}`)));
    }
    lambda.on(InvokeCommand).resolves({ StatusCode: 200, Payload: encode(null) });
    await pusher.drain('fn');

    const sizes = lambda.commandCalls(InvokeCommand).map((call) => (call.args[0].input.Payload as Uint8Array).byteLength);
    // One claim answers at most 5 MB of JSON (the receive budget); a request is part of one claim.
    expect(sizes.length).toBeGreaterThan(1);
    for (const size of sizes) expect(size).toBeLessThan(5_000_000);
    const delivered = lambda.commandCalls(InvokeCommand).flatMap((_, i) => eventOf(i).data.messages.map((m) => m.body.slice(0, 3)));
    expect(new Set(delivered).size).toBe(30);
    expect(await h.admin.getGroup('fn')).toMatchObject({ committed: 30, inFlight: 0, backlog: 0 });
  }, 120_000);
});

describe('AwsLambdaInvoker', () => {
  it('reads at most 1 MiB of the result, and says when it cut it', async () => {
    lambda.on(InvokeCommand).resolves({ StatusCode: 200, Payload: payload('x'.repeat(MAX_ANSWER_BYTES + 10)) });
    const invoker = new AwsLambdaInvoker(new LambdaClient({ region: 'eu-west-1' }));
    expect(await invoker.invoke(FUNCTION, '{}', 1000)).toEqual({ status: 200, body: 'x'.repeat(MAX_ANSWER_BYTES), truncated: true });
    lambda.on(InvokeCommand).resolves({ StatusCode: 200, Payload: payload('x'.repeat(MAX_ANSWER_BYTES)) });
    expect(await invoker.invoke(FUNCTION, '{}', 1000)).toEqual({ status: 200, body: 'x'.repeat(MAX_ANSWER_BYTES) });
  });
});
