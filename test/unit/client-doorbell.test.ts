/**
 * The SDK Consumer waits on its group's SQS doorbell (docs/design.md, "Waking SDK consumers"),
 * against a real local HTTP server speaking SQS's JSON protocol: a receive that answers a doorbell
 * is followed by signed ReceiveMessage long polls (no HTTP receive while idle); a ring →
 * DeleteMessageBatch and a receive; a real receive at least every `receiveEveryMs`; a doorbell that
 * fails is reported and the consumer long-polls over HTTP; `doorbell: false` never parks.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { Consumer, SluiceApiError, SqsDoorbellError, type ConsumerErrorKind, type Delivered } from '../../lib/client/index.js';
import { deliveredMessage } from '../helpers/delivered.js';

const credentials = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' };

interface SqsCall {
  target: string;
  authorization: string;
  body: Record<string, unknown>;
}

/** SQS's JSON protocol, enough for a doorbell: ReceiveMessage holds until a ring or WaitTimeSeconds, DeleteMessageBatch. */
class FakeSqs {
  readonly calls: SqsCall[] = [];
  private rings = 0;
  private waiting: Array<() => void> = [];
  status = 200;
  /** The `__type` of an error answer (status ≠ 200). */
  errorType = 'com.amazonaws.sqs#AccessDenied';
  /** Ends an empty long poll after this (ms) instead of WaitTimeSeconds, so tests need not wait 20 s. */
  holdMs: number | undefined;
  private server: Server | undefined;
  url = '';

  async start() {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async stop() {
    for (const wake of this.waiting) wake();
    this.server?.closeAllConnections();
    await new Promise((resolve) => this.server?.close(resolve));
  }

  ring() {
    this.rings++;
    for (const wake of this.waiting.splice(0)) wake();
  }

  count(target: string) {
    return this.calls.filter((c) => c.target === target).length;
  }

  private async handle(req: IncomingMessage, res: import('node:http').ServerResponse) {
    let text = '';
    for await (const chunk of req) text += chunk;
    const call = { target: String(req.headers['x-amz-target']), authorization: String(req.headers.authorization), body: JSON.parse(text) as Record<string, unknown> };
    this.calls.push(call);
    res.setHeader('content-type', 'application/x-amz-json-1.0');
    if (this.status !== 200) {
      res.statusCode = this.status;
      res.end(JSON.stringify({ __type: this.errorType, message: 'failed' }));
      return;
    }
    if (call.target === 'AmazonSQS.ReceiveMessage') {
      if (this.rings === 0) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, this.holdMs ?? Number(call.body.WaitTimeSeconds) * 1000);
          this.waiting.push(() => (clearTimeout(timer), resolve()));
        });
      }
      const messages = Array.from({ length: this.rings }, (_, i) => ({ MessageId: `r${i}`, ReceiptHandle: `rh${i}`, Body: '{}' }));
      this.rings = 0;
      res.end(JSON.stringify(messages.length > 0 ? { Messages: messages } : {}));
      return;
    }
    if (call.target === 'AmazonSQS.DeleteMessageBatch') {
      res.end(JSON.stringify({ Successful: (call.body.Entries as Array<{ Id: string }>).map((e) => ({ Id: e.Id })), Failed: [] }));
      return;
    }
    res.statusCode = 400;
    res.end(JSON.stringify({ __type: 'InvalidAction', message: call.target }));
  }
}

function message(body: string): Delivered {
  return deliveredMessage({ messageId: body, body });
}

/** A Sluice client as a deployed stack answers: a parking receive that finds nothing answers the doorbell at once. */
function fakeClient(queueUrl: string, recreate?: () => void) {
  const pending: Delivered[] = [];
  const receives: Array<{ park: boolean | undefined; waitSeconds: number | undefined; doorbellMissing?: boolean | undefined }> = [];
  const answer = async (input: { park?: boolean; waitSeconds?: number; doorbellMissing?: boolean }) => {
    receives.push({ park: input.park, waitSeconds: input.waitSeconds, doorbellMissing: input.doorbellMissing });
    // The server creates a missing doorbell again before it answers it.
    if (input.doorbellMissing) recreate?.();
    const messages = pending.splice(0);
    if (messages.length === 0 && !input.park && input.waitSeconds) await new Promise((resolve) => setTimeout(resolve, 20));
    return { messages, commitResults: [], ...(messages.length === 0 && input.park ? { doorbell: { queueUrl } } : {}) };
  };
  return {
    pending,
    receives,
    receive: async (_g: string, input: { park?: boolean; waitSeconds?: number } = {}) => (await answer(input)).messages,
    receiveAndCommit: async (_g: string, _handles: string[], input: { park?: boolean; waitSeconds?: number } = {}) => answer(input),
    commit: async (_g: string, entries: Array<string | { receiptHandle: string }>) => ({
      results: entries.map((e) => ({ receiptHandle: typeof e === 'string' ? e : e.receiptHandle, status: 'committed' as const })),
    }),
    changeVisibility: async () => undefined,
    getGroup: async (name: string) => ({ name, visibilityTimeoutSeconds: 30 }),
    awsCredentials: async () => credentials,
  };
}

/**
 * A Sluice client that keeps leases as the server does: a receive leases what is claimable for
 * its visibility timeout; a release (visibility 0) makes the message claimable after the group's
 * retry back-off (initialSeconds × multiplier^(deliveries − 1)); a commit removes it. A parking
 * receive that finds nothing answers the doorbell. Nothing rings the doorbell: a parked consumer
 * finds these messages again only by receiving for real.
 */
function leasingClient(queueUrl: string, group: { visibilityTimeoutSeconds: number; retryPolicy: { initialSeconds: number; multiplier: number; maxSeconds: number } }) {
  const stored = new Map<string, { message: Delivered; claimableAt: number; deliveries: number }>();
  const answered: Delivered[] = [];
  const released: Array<{ handle: string; at: number }> = [];
  const receives: Array<{ park: boolean | undefined; at: number; found: number }> = [];
  const answer = async (input: { park?: boolean; waitSeconds?: number; visibilityTimeoutSeconds?: number }) => {
    const now = Date.now();
    const messages: Delivered[] = [];
    for (const [id, entry] of stored) {
      if (entry.claimableAt > now) continue;
      entry.deliveries++;
      entry.claimableAt = now + (input.visibilityTimeoutSeconds ?? group.visibilityTimeoutSeconds) * 1000;
      messages.push({ ...entry.message, receiptHandle: `h:${id}:${entry.deliveries}`, deliveryCount: entry.deliveries });
    }
    answered.push(...messages);
    receives.push({ park: input.park, at: now, found: messages.length });
    if (messages.length === 0 && !input.park && input.waitSeconds) await new Promise((resolve) => setTimeout(resolve, 20));
    return { messages, commitResults: [], ...(messages.length === 0 && input.park ? { doorbell: { queueUrl } } : {}) };
  };
  const entryOf = (handle: string) => {
    const [, id, deliveries] = handle.split(':');
    const entry = stored.get(id!);
    return entry && entry.deliveries === Number(deliveries) ? entry : undefined;
  };
  return {
    answered,
    released,
    receives,
    send(body: string) {
      stored.set(body, { message: message(body), claimableAt: 0, deliveries: 0 });
    },
    receive: async (_g: string, input: { park?: boolean; waitSeconds?: number } = {}) => (await answer(input)).messages,
    receiveAndCommit: async (_g: string, _handles: string[], input: { park?: boolean; waitSeconds?: number } = {}) => answer(input),
    commit: async (_g: string, entries: Array<string | { receiptHandle: string }>) => ({
      results: entries.map((e) => {
        const receiptHandle = typeof e === 'string' ? e : e.receiptHandle;
        if (entryOf(receiptHandle)) stored.delete(receiptHandle.split(':')[1]!);
        return { receiptHandle, status: 'committed' as const };
      }),
    }),
    changeVisibility: async (_g: string, handle: string, seconds: number) => {
      const entry = entryOf(handle);
      if (!entry) return;
      const { initialSeconds, multiplier, maxSeconds } = group.retryPolicy;
      const backoff = Math.min(maxSeconds, initialSeconds * multiplier ** (entry.deliveries - 1));
      entry.claimableAt = Date.now() + (seconds === 0 ? backoff : seconds) * 1000;
      if (seconds === 0) released.push({ handle, at: Date.now() });
    },
    getGroup: async (name: string) => ({ name, maxDeliveries: 16, ...group }),
    awsCredentials: async () => credentials,
  };
}

async function until(condition: () => boolean, what: string, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

let sqs: FakeSqs;
let consumer: Consumer | undefined;
afterEach(async () => {
  await consumer?.stop();
  consumer = undefined;
  await sqs?.stop();
});

/** A consumer whose doorbell answers `status` with SQS error `errorType` until a test changes it; what it reported and handled. */
async function onFailingDoorbell(status: number, errorType: string, receiveEveryMs: number, recreate?: () => void) {
  sqs = await new FakeSqs().start();
  sqs.status = status;
  sqs.errorType = errorType;
  const client = fakeClient(`${sqs.url}/123456789012/sluice-bell-abc`, recreate);
  const errors: Array<{ kind: ConsumerErrorKind; error: unknown }> = [];
  const handled: string[] = [];
  consumer = new Consumer(client as never, {
    group: 'g',
    handler: (m) => void handled.push(m.body),
    doorbell: { region: 'eu-west-1', receiveEveryMs },
    onError: (error, kind) => errors.push({ kind, error }),
  });
  await consumer.start();
  return { client, errors, handled };
}

describe('Consumer on an SQS doorbell', () => {
  it('parks, long-polls the doorbell signed for SQS, and receives when it rings', async () => {
    sqs = await new FakeSqs().start();
    const queueUrl = `${sqs.url}/123456789012/sluice-bell-abc`;
    const client = fakeClient(queueUrl);
    const handled: string[] = [];
    consumer = new Consumer(client as never, { group: 'g', handler: (m) => void handled.push(m.body), doorbell: { region: 'eu-west-1' } });
    await consumer.start();
    await until(() => sqs.count('AmazonSQS.ReceiveMessage') >= 1, 'the doorbell long poll');
    expect(client.receives).toEqual([{ park: true, waitSeconds: 10 }]);
    const poll = sqs.calls[0];
    expect(poll?.body).toEqual({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 20 });
    expect(poll?.authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/\d{8}\/eu-west-1\/sqs\/aws4_request, SignedHeaders=[^,]*x-amz-target/);

    client.pending.push(message('one'));
    sqs.ring();
    await until(() => handled.includes('one'), 'the message after the ring');
    expect(sqs.calls.find((c) => c.target === 'AmazonSQS.DeleteMessageBatch')?.body).toEqual({ QueueUrl: queueUrl, Entries: [{ Id: '0', ReceiptHandle: 'rh0' }] });
    // Idle again: back on the doorbell, with no HTTP receive in between but the one after the ring (and the empty one that parks).
    await until(() => sqs.count('AmazonSQS.ReceiveMessage') >= 2, 'the next doorbell long poll');
    expect(client.receives.length).toBeLessThanOrEqual(3);
    expect(client.receives.every((r) => r.park === true)).toBe(true);
  });

  it('receives for real every receiveEveryMs while the doorbell stays quiet, polling it in between', async () => {
    sqs = await new FakeSqs().start();
    sqs.holdMs = 20;
    const client = fakeClient(`${sqs.url}/123456789012/sluice-bell-abc`);
    consumer = new Consumer(client as never, { group: 'g', handler: () => undefined, doorbell: { region: 'eu-west-1', receiveEveryMs: 1_000 } });
    const started = Date.now();
    await consumer.start();
    await until(() => client.receives.length >= 3, 'three real receives', 20_000);
    // No ring: the second and third receive come from the period, each after polls of the doorbell.
    expect(Date.now() - started).toBeGreaterThanOrEqual(2_000);
    expect(sqs.count('AmazonSQS.ReceiveMessage')).toBeGreaterThanOrEqual(2 * 2);
    expect(sqs.count('AmazonSQS.DeleteMessageBatch')).toBe(0);
    expect(client.receives.every((r) => r.park === true)).toBe(true);
  });

  it('reports a doorbell that was denied and long-polls over HTTP from then on', async () => {
    sqs = await new FakeSqs().start();
    sqs.status = 403;
    const client = fakeClient(`${sqs.url}/123456789012/sluice-bell-abc`);
    const errors: Array<{ kind: ConsumerErrorKind; error: unknown }> = [];
    // A short period: a transient failure would park again after 300 ms; a denial never does.
    consumer = new Consumer(client as never, { group: 'g', handler: () => undefined, doorbell: { region: 'eu-west-1', receiveEveryMs: 300 }, onError: (error, kind) => errors.push({ kind, error }) });
    const started = Date.now();
    await consumer.start();
    await until(() => client.receives.length >= 3 && Date.now() - started >= 1_500, 'HTTP receives over five periods after the failure');
    expect(errors.map((e) => e.kind)).toEqual(['doorbell']);
    expect(errors[0]?.error).toBeInstanceOf(SqsDoorbellError);
    expect((errors[0]?.error as SqsDoorbellError).denied).toBe(true);
    expect(String(errors[0]?.error)).toContain('AccessDenied');
    expect(client.receives[0]).toEqual({ park: true, waitSeconds: 10 });
    expect(client.receives.slice(1).every((r) => r.park === undefined)).toBe(true);
    expect(sqs.count('AmazonSQS.ReceiveMessage')).toBe(1);
  });

  it('after a transient doorbell failure long-polls over HTTP until the next period, then parks on the doorbell again', async () => {
    const { client, errors, handled } = await onFailingDoorbell(500, 'InternalError', 1_000);
    await until(() => errors.length === 1, 'the failed doorbell poll');
    expect((errors[0]?.error as SqsDoorbellError).status).toBe(500);
    expect((errors[0]?.error as SqsDoorbellError).denied).toBe(false);
    // SQS recovers; the consumer long-polls over HTTP meanwhile, then parks and polls the doorbell again.
    sqs.status = 200;
    await until(() => sqs.count('AmazonSQS.ReceiveMessage') >= 2, 'the doorbell polled again');
    const parkAgain = client.receives.findIndex((r, i) => i > 0 && r.park === true);
    expect(parkAgain).toBeGreaterThan(1);
    expect(client.receives.slice(1, parkAgain).every((r) => r.park === undefined)).toBe(true);
    client.pending.push(message('after'));
    sqs.ring();
    await until(() => handled.includes('after'), 'the message after a ring');
    expect(errors).toHaveLength(1);
  });

  it('a doorbell gone (QueueDoesNotExist) is asked back by the next receive, which parks at once; the consumer stays on the doorbell', async () => {
    // The server creates the queue again before it answers the receive that asks.
    const { client, errors, handled } = await onFailingDoorbell(400, 'com.amazonaws.sqs#QueueDoesNotExist', 60_000, () => (sqs.status = 200));
    await until(() => client.receives.length >= 2, 'the receive after the missing doorbell');
    expect((errors[0]?.error as SqsDoorbellError).missing).toBe(true);
    expect((errors[0]?.error as SqsDoorbellError).denied).toBe(false);
    // The server created the queue again (the same URL): the consumer polls it, with no HTTP long poll in between.
    await until(() => sqs.count('AmazonSQS.ReceiveMessage') >= 2, 'the doorbell polled again');
    expect(client.receives.slice(0, 2)).toEqual([
      { park: true, waitSeconds: 10, doorbellMissing: undefined },
      { park: true, waitSeconds: 10, doorbellMissing: true },
    ]);
    client.pending.push(message('after'));
    sqs.ring();
    await until(() => handled.includes('after'), 'the message after a ring');
    // Asked once: later parks do not ask again.
    expect(client.receives.filter((r) => r.doorbellMissing === true)).toHaveLength(1);
    expect(errors).toHaveLength(1);
  });

  it('a doorbell still missing after it was asked back is a failure as any other: HTTP until the next period, which asks again', async () => {
    // A period of 2 s: longer than the second a just-asked doorbell is given before it counts as still missing.
    const { client } = await onFailingDoorbell(400, 'com.amazonaws.sqs#QueueDoesNotExist', 2_000);
    await until(() => client.receives.filter((r) => r.doorbellMissing === true).length >= 2, 'a second ask, a period later', 20_000);
    const asks = client.receives.flatMap((r, i) => (r.doorbellMissing === true ? [i] : []));
    // Receive 0 parks, 1 asks (the doorbell is polled, then once more a second later: still missing), then HTTP
    // long polls without park until the period ends.
    expect(asks[0]).toBe(1);
    expect(asks[1]).toBeGreaterThan(3);
    expect(client.receives.slice(2, asks[1]).some((r) => r.park === undefined)).toBe(true);
    expect(client.receives.slice(2, asks[1]).every((r) => r.doorbellMissing === undefined)).toBe(true);
    // No loop: one doorbell poll per park, and one more after each ask.
    expect(sqs.count('AmazonSQS.ReceiveMessage')).toBeLessThanOrEqual(client.receives.filter((r) => r.park === true).length + asks.length);
  });

  it('a receive that cannot carry the ask (a server without doorbellMissing answers 400) asks once: the consumer goes on, and falls back for the period', async () => {
    sqs = await new FakeSqs().start();
    sqs.status = 400;
    sqs.errorType = 'com.amazonaws.sqs#QueueDoesNotExist';
    const client = fakeClient(`${sqs.url}/123456789012/sluice-bell-abc`);
    const refused: boolean[] = [];
    const receiveAndCommit = client.receiveAndCommit;
    client.receiveAndCommit = async (g: string, handles: string[], input: { park?: boolean; waitSeconds?: number; doorbellMissing?: boolean } = {}) => {
      if (input.doorbellMissing) {
        refused.push(true);
        const problem = { type: 'urn:sluice:problem:InvalidArgument', title: 'Invalid argument', status: 400, code: 'InvalidArgument', detail: 'Invalid body: unrecognized key doorbellMissing.' };
        throw new SluiceApiError(problem, { method: 'POST', url: '/v1/groups/g/receive' });
      }
      return receiveAndCommit(g, handles, input);
    };
    const errors: ConsumerErrorKind[] = [];
    consumer = new Consumer(client as never, { group: 'g', handler: () => undefined, doorbell: { region: 'eu-west-1', receiveEveryMs: 60_000 }, onError: (_e, kind) => errors.push(kind) });
    await consumer.start();
    // Missing → the ask (refused) → a receive without it parks → missing again within the period → HTTP long polls.
    await until(() => client.receives.length >= 3 && client.receives.at(-1)?.park === undefined, 'the HTTP long polls after the fallback', 15_000);
    expect(refused).toEqual([true]);
    expect(errors.slice(0, 3)).toEqual(['doorbell', 'receive', 'doorbell']);
    expect(client.receives.every((r) => r.doorbellMissing === undefined)).toBe(true);
  });

  it('a doorbell asked back that is still missing for its first second is polled again a second later: the consumer stays on it', async () => {
    // The server created the queue again, but SQS answers it only a moment later.
    const { client, errors, handled } = await onFailingDoorbell(400, 'com.amazonaws.sqs#QueueDoesNotExist', 60_000, () => setTimeout(() => (sqs.status = 200), 300));
    await until(() => sqs.count('AmazonSQS.ReceiveMessage') >= 3, 'the doorbell polled a second later');
    client.pending.push(message('after'));
    sqs.ring();
    await until(() => handled.includes('after'), 'the message after a ring');
    expect(client.receives.every((r) => r.park === true)).toBe(true);
    expect(errors).toHaveLength(1);
  });

  it('an ask whose receive got no answer (network) is carried by the next receive', async () => {
    sqs = await new FakeSqs().start();
    sqs.status = 400;
    sqs.errorType = 'com.amazonaws.sqs#QueueDoesNotExist';
    const client = fakeClient(`${sqs.url}/123456789012/sluice-bell-abc`, () => (sqs.status = 200));
    let failures = 0;
    const receiveAndCommit = client.receiveAndCommit;
    client.receiveAndCommit = async (g: string, handles: string[], input: { park?: boolean; waitSeconds?: number; doorbellMissing?: boolean } = {}) => {
      if (input.doorbellMissing && failures === 0) {
        failures++;
        throw new TypeError('fetch failed');
      }
      return receiveAndCommit(g, handles, input);
    };
    consumer = new Consumer(client as never, { group: 'g', handler: () => undefined, doorbell: { region: 'eu-west-1', receiveEveryMs: 60_000 }, onError: () => undefined });
    await consumer.start();
    await until(() => client.receives.some((r) => r.doorbellMissing === true), 'the ask carried again', 10_000);
    expect(failures).toBe(1);
    await until(() => sqs.count('AmazonSQS.ReceiveMessage') >= 2, 'the doorbell polled again');
    expect(client.receives.every((r) => r.park === true)).toBe(true);
  });

  it('tells a missing queue by its error type, in either protocol, from a denial and from other failures', () => {
    const error = (status: number, code: string) => new SqsDoorbellError('x', status, code);
    expect(error(400, 'com.amazonaws.sqs#QueueDoesNotExist').missing).toBe(true);
    expect(error(400, 'AWS.SimpleQueueService.NonExistentQueue').missing).toBe(true);
    expect(error(400, 'com.amazonaws.sqs#QueueDoesNotExist').denied).toBe(false);
    expect(error(403, 'com.amazonaws.sqs#AccessDenied').missing).toBe(false);
    expect(error(500, 'InternalError').missing).toBe(false);
    expect(new SqsDoorbellError('unreachable', undefined, undefined).missing).toBe(false);
  });

  it('never parks with doorbell: false', async () => {
    sqs = await new FakeSqs().start();
    const client = fakeClient(`${sqs.url}/123456789012/sluice-bell-abc`);
    consumer = new Consumer(client as never, { group: 'g', handler: () => undefined, doorbell: false });
    await consumer.start();
    await until(() => client.receives.length >= 2, 'two HTTP receives');
    expect(client.receives.every((r) => r.park === undefined)).toBe(true);
    expect(sqs.calls).toEqual([]);
  });

  it('receives for real when a message it released ends its retry back-off, with no ring', async () => {
    sqs = await new FakeSqs().start();
    const client = leasingClient(`${sqs.url}/123456789012/sluice-bell-abc`, { visibilityTimeoutSeconds: 30, retryPolicy: { initialSeconds: 1, multiplier: 2, maxSeconds: 600 } });
    client.send('one');
    const attempts: number[] = [];
    consumer = new Consumer(client as never, {
      group: 'g',
      handler: (m) => {
        attempts.push(m.deliveryCount);
        if (m.deliveryCount === 1) throw new Error('first attempt fails');
      },
      doorbell: { region: 'eu-west-1' },
      onError: () => undefined,
    });
    await consumer.start();
    await until(() => client.released.length === 1, 'the release of the failed attempt');
    const pollsBefore = sqs.count('AmazonSQS.ReceiveMessage');
    // The back-off is 1 s; the doorbell's own long poll is 20 s and the periodic receive 5 minutes.
    await until(() => attempts.length === 2, 'the second attempt, without a ring');
    expect(attempts).toEqual([1, 2]);
    expect(sqs.count('AmazonSQS.DeleteMessageBatch')).toBe(0);
    const redelivery = client.receives.find((r) => r.found > 0 && r.at > client.released[0]!.at);
    expect(redelivery?.park).toBe(true);
    expect(redelivery!.at - client.released[0]!.at).toBeGreaterThanOrEqual(1_000);
    // Polls of the doorbell after the release waited at most until the back-off's end (whole seconds).
    const after = sqs.calls.filter((c) => c.target === 'AmazonSQS.ReceiveMessage').slice(pollsBefore);
    const untilRedelivery = after.slice(0, Math.max(0, after.length - 1));
    expect(untilRedelivery.every((c) => Number(c.body.WaitTimeSeconds) <= 2)).toBe(true);
  });

  it('receives for real when a lease it held ends uncommitted, with no ring', async () => {
    sqs = await new FakeSqs().start();
    const client = leasingClient(`${sqs.url}/123456789012/sluice-bell-abc`, { visibilityTimeoutSeconds: 1, retryPolicy: { initialSeconds: 1, multiplier: 2, maxSeconds: 600 } });
    client.send('slow');
    let finish!: () => void;
    const finished = new Promise<void>((resolve) => (finish = resolve));
    // The handler outlives its 1 s lease (no extensions): the message becomes claimable again when the lease ends.
    consumer = new Consumer(client as never, { group: 'g', handler: () => finished, extendLeases: false, doorbell: { region: 'eu-west-1' }, onError: () => undefined });
    try {
      await consumer.start();
      await until(() => client.answered.length === 1 && sqs.count('AmazonSQS.ReceiveMessage') >= 1, 'the lease and the park');
      await until(() => client.answered.length === 2, 'the message again after its lease ended, without a ring');
      expect(client.answered.map((m) => m.deliveryCount)).toEqual([1, 2]);
      expect(sqs.count('AmazonSQS.DeleteMessageBatch')).toBe(0);
    } finally {
      // Lets stop() in afterEach end, whatever the outcome.
      finish();
    }
  });

  it('stops at once while parked on the doorbell', async () => {
    sqs = await new FakeSqs().start();
    const client = fakeClient(`${sqs.url}/123456789012/sluice-bell-abc`);
    const parked = new Consumer(client as never, { group: 'g', handler: () => undefined, doorbell: { region: 'eu-west-1' } });
    await parked.start();
    await until(() => sqs.count('AmazonSQS.ReceiveMessage') >= 1, 'the doorbell long poll');
    const started = Date.now();
    await parked.stop();
    expect(Date.now() - started).toBeLessThan(5_000);
  });
  it('refuses a receiveEveryMs that would let the doorbell entry lapse (over 5 minutes) or is not a positive number', () => {
    const make = (receiveEveryMs: number) => new Consumer({} as never, { group: 'g', handler: () => undefined, doorbell: { region: 'eu-west-1', receiveEveryMs } });
    expect(() => make(5 * 60_000 + 1)).toThrow(RangeError);
    expect(() => make(0)).toThrow(RangeError);
    expect(() => make(Number.NaN)).toThrow(RangeError);
    expect(() => make(5 * 60_000)).not.toThrow();
  });
});
