/**
 * Fault injection (issue 9) at every kind of call site:
 * - DynamoDB, under the HTTP API: throttling, timeouts, 5xx, lost answers after
 *   a write, transaction conflicts and ConditionalCheckFailed races, injected by
 *   a middleware on the container's client inside the SDK's retry loop. Faults
 *   the SDK and the services do not absorb must reach the client as 429/503
 *   problem+json with Retry-After — never a 500 — and a retried workload
 *   completes with nothing lost, nothing committed twice and no order broken.
 * - The Lambda deadline: a request that runs out of time answers 503.
 * - EventBridge Scheduler and SQS adapters (aws-sdk-client-mock).
 * - Checker webhooks: timeouts, 500s, refused connections, slow drip, bad answers.
 */
import { ConflictException, CreateScheduleCommand, SchedulerClient } from '@aws-sdk/client-scheduler';
import { SendMessageBatchCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { mockClient } from 'aws-sdk-client-mock';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { container } from '../../functions/commons/container.js';
import { lambdaContext } from '../../local/gateway.js';
import { SqsCheckDispatcher } from '../../lib/adapters/aws/check-dispatcher.js';
import { SqsDelayQueue } from '../../lib/adapters/aws/delay-queue.js';
import { EventBridgeScheduler } from '../../lib/adapters/aws/scheduler.js';
import { SluiceError, ThrottledError, UnavailableError } from '../../lib/domain/errors.js';
import { toProblem } from '../../lib/http/problem.js';
import type { LocalRuntime } from '../../local/runtime.js';
import { startChecker, type TestChecker } from '../helpers/checker.js';
import { startRuntime, TOKEN } from '../helpers/local.js';
import { newHarness, send, type Harness } from '../helpers/stores.js';
import { group, topic } from '../helpers/builders.js';
import { Http, SCALE, scaled, seeded, sleep } from './support.js';

const figures: Record<string, unknown> = {};
afterAll(() => console.log(`faults (${SCALE}): ${JSON.stringify(figures, null, 1)}`));

const WRITES = new Set(['PutItemCommand', 'UpdateItemCommand', 'TransactWriteItemsCommand', 'DeleteItemCommand']);

/** An AWS-SDK-shaped service error. */
function awsError(name: string, status: number, extra: Record<string, unknown> = {}) {
  return Object.assign(new Error(`injected ${name}`), { name, $fault: status >= 500 ? 'server' : 'client', $metadata: { httpStatusCode: status, attempts: 1 }, ...extra });
}

describe('DynamoDB faults under the HTTP API', () => {
  let runtime: LocalRuntime;
  let http: Http;
  let armed = false;
  let rate = 0;
  const injected: Record<string, number> = {};
  const random = seeded(Number(process.env.SLUICE_RELIABILITY_SEED ?? 7));

  const count = (kind: string) => (injected[kind] = (injected[kind] ?? 0) + 1);

  beforeAll(async () => {
    runtime = await startRuntime();
    http = new Http(runtime.url, TOKEN);
    // Inside the SDK's retry loop (finalizeRequest, after the retry middleware): the SDK absorbs
    // what it can (3 attempts, retry quota), the services absorb what they can, the rest reaches the edge.
    container().dynamo.middlewareStack.add(
      (next, context) => async (args) => {
        const command = String(context.commandName);
        const input = (args as { input?: Record<string, any> }).input ?? {};
        if (!armed || random.next() >= rate) return next(args);
        const roll = random.next();
        const write = WRITES.has(command);
        if (roll < 0.15) throw (count('ProvisionedThroughputExceededException'), awsError('ProvisionedThroughputExceededException', 400));
        if (roll < 0.3) throw (count('ThrottlingException'), awsError('ThrottlingException', 400));
        if (roll < 0.42) throw (count('InternalServerError 500'), awsError('InternalServerError', 500));
        if (roll < 0.5) throw (count('ServiceUnavailable 503'), awsError('ServiceUnavailable', 503));
        if (roll < 0.58) throw (count('TimeoutError'), Object.assign(new Error('injected socket timeout'), { name: 'TimeoutError' }));
        if (roll < 0.64) throw (count('ECONNRESET'), Object.assign(new Error('injected socket hang up'), { code: 'ECONNRESET' }));
        if (write && roll < 0.8) {
          // The write took effect but its answer is lost (a timeout after the fact): the SDK retries it.
          const result = await next(args);
          count('answer lost after the write');
          throw Object.assign(new Error('injected: answer lost after the write'), { name: 'TimeoutError', result });
        }
        if (command === 'TransactWriteItemsCommand' && roll < 0.9) {
          const items = (input.TransactItems ?? []) as Array<Record<string, any>>;
          // The client below the document client sees marshalled items: { pk: { S: … } }.
          const segment = items.findIndex((i) => String(i.Put?.Item?.pk?.S ?? '').startsWith('S#') && i.Put?.Item?.sk?.S !== '#');
          if (segment >= 0 && random.next() < 0.5) {
            // A racing appender took this sequence number first.
            count('ConditionalCheckFailed race (segment)');
            throw awsError('TransactionCanceledException', 400, {
              CancellationReasons: items.map((_, i) => ({ Code: i === segment ? 'ConditionalCheckFailed' : 'None' })),
            });
          }
          count('TransactionConflict');
          throw awsError('TransactionCanceledException', 400, { CancellationReasons: items.map((_, i) => ({ Code: i === 0 ? 'TransactionConflict' : 'None' })) });
        }
        if (command === 'PutItemCommand' && String(input.Item?.pk?.S ?? '').startsWith('S#') && input.Item?.sk?.S !== '#' && roll < 0.9) {
          count('ConditionalCheckFailed race (segment)');
          throw awsError('ConditionalCheckFailedException', 400);
        }
        return next(args);
      },
      { step: 'finalizeRequest', priority: 'low', name: 'reliabilityFaults' },
    );
  });
  afterAll(async () => {
    armed = false;
    await runtime?.stop();
  });

  it('answers unabsorbed faults with 429/503 and Retry-After, never 500, and a retried workload loses nothing', async () => {
    const SHARDS = 8;
    const PER_SHARD = scaled(60, 10);
    const STANDARD = scaled(1200, 200);
    await http.call('PUT', '/v1/topics/std', { type: 'standard' });
    await http.call('PUT', '/v1/topics/fifo', { type: 'fifo' });
    await http.call('PUT', '/v1/groups/g-std', { subscriptions: [{ topic: 'std' }], visibilityTimeoutSeconds: 5, maxDeliveries: 1000 });
    await http.call('PUT', '/v1/groups/g-ser', { subscriptions: [{ topic: 'fifo' }], visibilityTimeoutSeconds: 5, maxDeliveries: 1000 });
    await http.call('PUT', '/v1/groups/g-pro', { subscriptions: [{ topic: 'fifo' }], deliveryMode: 'protected', visibilityTimeoutSeconds: 5, maxDeliveries: 1000 });
    armed = true;
    rate = 0.25;
    const started = Date.now();

    // Produce: standard in batches of 50, FIFO one shard per producer in batches of 10; dedupIds; retry until acknowledged.
    const acked = new Map<string, string>();
    const seqOf = new Map<string, number>();
    const sendAll = async (topic: string, entries: Array<{ body: string; shardKey?: string }>) => {
      let pending = entries;
      for (let round = 0; pending.length && round < 100; round++) {
        const res = await http.call('POST', `/v1/topics/${topic}/messages/batch`, { entries: pending.map((e) => ({ ...e, dedupId: e.body })) });
        expect(res.status, JSON.stringify(res.body)).toBe(200);
        const again: typeof entries = [];
        for (const r of res.body.results) {
          const e = pending[r.index]!;
          if (r.messageId) {
            acked.set(e.body, r.messageId);
            if (r.sequence) seqOf.set(e.body, r.sequence);
          } else {
            expect([429, 503], JSON.stringify(r)).toContain(r.error.status);
            again.push(e);
          }
        }
        pending = again;
      }
      expect(pending).toEqual([]);
    };
    const singles = Array.from({ length: 40 }, (_, i) => `single-${i}`);
    await Promise.all([
      (async () => {
        for (let b = 0; b < STANDARD / 50; b++) await sendAll('std', Array.from({ length: 50 }, (_, i) => ({ body: `std-${b * 50 + i}` })));
      })(),
      (async () => {
        for (const body of singles) {
          const res = await http.call('POST', '/v1/topics/std/messages', { body, dedupId: body });
          expect(res.status, JSON.stringify(res.body)).toBe(201);
          acked.set(body, res.body.messageId);
        }
      })(),
      ...Array.from({ length: SHARDS }, async (_, s) => {
        for (let b = 0; b < PER_SHARD / 10; b++) await sendAll('fifo', Array.from({ length: 10 }, (_, i) => ({ body: `f${s}-${b * 10 + i}`, shardKey: `s${s}` })));
      }),
    ]);
    for (let s = 0; s < SHARDS; s++) {
      // A shard's sequence is consecutive while it is in use; its first number comes from the clock (docs/design.md, Idle shards expire).
      const seqs = Array.from({ length: PER_SHARD }, (_, i) => seqOf.get(`f${s}-${i}`) ?? 0);
      expect(seqs).toEqual(Array.from({ length: PER_SHARD }, (_, i) => (seqs[0] ?? 0) + i));
      expect(seqs[0]).toBeGreaterThan(0);
    }

    // Consume under faults: serialized checks order; protected commits newest first.
    const expectCount = { 'g-std': STANDARD + singles.length, 'g-ser': SHARDS * PER_SHARD, 'g-pro': SHARDS * PER_SHARD };
    const seen: Record<string, Map<string, string>> = { 'g-std': new Map(), 'g-ser': new Map(), 'g-pro': new Map() };
    const violations: string[] = [];
    // Serialized: message s may only be delivered after a commit request for s - 1 was sent (a sound check:
    // an answer may be lost and retried, and another consumer may legitimately get s before that answer).
    const commitSent = new Map<string, number>(); // `${shard}#${seq}` → when its first commit request was sent
    const consumer = async (group: keyof typeof expectCount) => {
      for (let round = 0; round < 5000 && Date.now() - started < scaled(8, 4) * 60_000; round++) {
        const stats = round % 10 === 9 ? (await http.call('GET', `/v1/groups/${group}`)).body : undefined;
        if (stats && stats.committed === expectCount[group] && stats.inFlight === 0 && stats.pending === 0) return;
        const res = await http.call('POST', `/v1/groups/${group}/receive`, { maxMessages: 10, waitSeconds: 1 });
        expect(res.status, JSON.stringify(res.body)).toBe(200);
        const got = res.body.messages as Array<{ body: string; messageId: string; receiptHandle: string; shardKey: string; sequence: number }>;
        for (const m of got) {
          seen[group]!.set(m.body, m.messageId);
          // A shard's first sequence comes from the clock: only later ones have a predecessor to wait for.
          if (group === 'g-ser' && m.sequence > (seqOf.get(`f${String(m.shardKey).slice(1)}-0`) ?? 1)) {
            const previous = commitSent.get(`${m.shardKey}#${m.sequence - 1}`);
            if (previous === undefined || previous >= res.at) violations.push(`${m.shardKey}: #${m.sequence} delivered before #${m.sequence - 1} was committed`);
          }
        }
        for (const m of group === 'g-pro' ? [...got].reverse() : got) {
          if (group === 'g-ser' && !commitSent.has(`${m.shardKey}#${m.sequence}`)) commitSent.set(`${m.shardKey}#${m.sequence}`, Date.now());
          const c = await http.call('POST', `/v1/groups/${group}/commit`, { entries: [{ receiptHandle: m.receiptHandle }] });
          expect(c.status, JSON.stringify(c.body)).toBe(200);
          const r = c.body.results[0];
          if (!r.status) expect(r.error.code).toBe('ReceiptHandleExpired');
        }
      }
    };
    await Promise.all([consumer('g-std'), consumer('g-std'), consumer('g-ser'), consumer('g-ser'), consumer('g-pro'), consumer('g-pro')]);
    armed = false;
    // Drain what the faults left leased (lost answers): the leases expire and the consumers finish.
    await Promise.all([consumer('g-std'), consumer('g-ser'), consumer('g-pro')]);

    for (const group of Object.keys(expectCount) as Array<keyof typeof expectCount>) {
      const stats = (await http.call('GET', `/v1/groups/${group}`)).body;
      expect(stats, group).toMatchObject({ backlog: 0, inFlight: 0, pending: 0, deadLettered: 0 });
      expect(stats.committed, `${group}: each message committed exactly once`).toBe(expectCount[group]);
      const missing = [...acked.keys()].filter((body) => (group === 'g-std') === !body.startsWith('f') && !seen[group]!.has(body));
      expect(missing, group).toEqual([]);
      // Delivered under the acknowledged messageId: no duplicate stored by a retried send.
      expect([...seen[group]!].filter(([body, id]) => acked.get(body) !== id), group).toEqual([]);
    }
    expect(violations).toEqual([]);
    expect(http.counters.serverErrors).toEqual([]);
    const total = Object.values(injected).reduce((a, b) => a + b, 0);
    expect(total).toBeGreaterThan(100);
    expect(http.counters.retryable).toBeGreaterThan(0);
    figures.dynamo = {
      injected,
      injectedTotal: total,
      requests: http.counters.requests,
      answered429or503: http.counters.retryable,
      retryableDetails: http.counters.retryableDetails,
      serverErrors: http.counters.serverErrors.length,
      messages: acked.size,
      seconds: (Date.now() - started) / 1000,
    };
  }, 15 * 60_000);

  it('answers 503 with Retry-After when a request runs out of Lambda time', async () => {
    const { handler } = (await import('../../functions/api/get-topic.js')) as { handler: (e: unknown, c: unknown) => Promise<any> };
    const slow = (next: any) => async (args: any) => {
      await sleep(1500);
      return next(args);
    };
    container().dynamo.middlewareStack.add(slow, { step: 'initialize', name: 'slowDown' });
    try {
      const context = { ...lambdaContext('get-topic', 'deadline-test'), getRemainingTimeInMillis: () => 300 };
      const deadline = Date.now() + 300;
      context.getRemainingTimeInMillis = () => Math.max(0, deadline - Date.now());
      const result = await handler(
        { version: '2.0', routeKey: 'GET /v1/topics/{topic}', rawPath: '/v1/topics/std', rawQueryString: '', headers: {}, pathParameters: { topic: 'std' }, isBase64Encoded: false, requestContext: { http: { method: 'GET' } } },
        context,
      );
      expect(result.statusCode).toBe(503);
      expect(result.headers['retry-after']).toBe('1');
      expect(result.headers['content-type']).toBe('application/problem+json');
      expect(JSON.parse(result.body)).toMatchObject({ status: 503, code: 'ServiceUnavailable' });
    } finally {
      container().dynamo.middlewareStack.remove('slowDown');
    }
  });
});

describe('EventBridge Scheduler and SQS call sites', () => {
  const target = { groupName: 'g', functionArn: 'arn:aws:lambda:us-east-1:1:function:f', roleArn: 'arn:aws:iam::1:role/r' };
  const payload = { kind: 'minute' as const, minute: 29_000_000 };

  it('absorbs Scheduler throttling with backoff, treats ConflictException as armed, and answers 429 when throttling persists', async () => {
    const scheduler = mockClient(SchedulerClient);
    try {
      const client = new SchedulerClient({ region: 'us-east-1' });
      scheduler
        .on(CreateScheduleCommand)
        .rejectsOnce(awsError('ThrottlingException', 400))
        .rejectsOnce(awsError('ThrottlingException', 400))
        .resolves({ ScheduleArn: 'arn' });
      await new EventBridgeScheduler(client, target).scheduleAt('sluice-m1', Date.now(), payload);
      expect(scheduler.commandCalls(CreateScheduleCommand)).toHaveLength(3);

      scheduler.reset().on(CreateScheduleCommand).rejects(new ConflictException({ message: 'exists', Message: 'exists', $metadata: {} }));
      await new EventBridgeScheduler(client, target).scheduleAt('sluice-m1', Date.now(), payload);

      scheduler.reset().on(CreateScheduleCommand).rejects(awsError('ThrottlingException', 400));
      const persistent = await new EventBridgeScheduler(client, target).scheduleAt('sluice-m1', Date.now(), payload).catch((e: unknown) => e);
      expect(persistent).toBeInstanceOf(ThrottledError);
      expect(toProblem(persistent)).toMatchObject({ problem: { status: 429 }, headers: { 'retry-after': '2' } });
      expect(scheduler.commandCalls(CreateScheduleCommand)).toHaveLength(6);
    } finally {
      scheduler.restore();
    }
  });

  it('turns Scheduler and SQS 5xx, timeouts and throttling into 503/429, never a 500', async () => {
    const scheduler = mockClient(SchedulerClient);
    const sqs = mockClient(SQSClient);
    const outcomes: string[] = [];
    try {
      const faults = [
        awsError('InternalServerException', 500),
        awsError('ServiceUnavailableException', 503),
        Object.assign(new Error('socket timeout'), { name: 'TimeoutError' }),
        Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }),
      ];
      for (const fault of faults) {
        scheduler.reset().on(CreateScheduleCommand).rejects(fault);
        const e1 = await new EventBridgeScheduler(new SchedulerClient({ region: 'us-east-1' }), target).scheduleAt('sluice-m2', Date.now(), payload).catch((e: unknown) => e);
        sqs.reset().on(SendMessageCommand).rejects(fault);
        const e2 = await new SqsDelayQueue(new SQSClient({ region: 'us-east-1' }), 'https://sqs.local/q').send({ kind: 'release', minute: 1, second: 60 }, 5000).catch((e: unknown) => e);
        for (const e of [e1, e2]) {
          const { problem, headers } = toProblem(e);
          outcomes.push(`${fault.name}: ${problem.status}`);
          expect([429, 503], `${fault.name} → ${problem.status}`).toContain(problem.status);
          expect(headers['retry-after']).toBeDefined();
        }
      }
      for (const name of ['RequestThrottled', 'ThrottlingException']) {
        sqs.reset().on(SendMessageCommand).rejects(awsError(name, 400));
        const e = await new SqsDelayQueue(new SQSClient({ region: 'us-east-1' }), 'https://sqs.local/q').send({ kind: 'release', minute: 1, second: 60 }, 5000).catch((x: unknown) => x);
        expect(e, name).toBeInstanceOf(SluiceError);
        expect(toProblem(e).problem.status, name).toBe(429);
        outcomes.push(`SQS ${name}: 429`);
      }
      figures.schedulerAndSqs = outcomes;
    } finally {
      scheduler.restore();
      sqs.restore();
    }
  });

  it('dispatches check-backs through SQS, tolerating partial failures (the next sweep dispatches the rest)', async () => {
    const sqs = mockClient(SQSClient);
    try {
      const dispatcher = new SqsCheckDispatcher(new SQSClient({ region: 'us-east-1' }), 'https://sqs.local/checks');
      sqs.on(SendMessageBatchCommand).resolves({ Successful: [{ Id: '0', MessageId: 'a', MD5OfMessageBody: 'x' }], Failed: [{ Id: '1', Code: 'InternalError', SenderFault: false }] });
      await dispatcher.dispatch(['t1', 't2']);
      sqs.reset().on(SendMessageBatchCommand).resolves({ Successful: [], Failed: [{ Id: '0', Code: 'InternalError', SenderFault: false }] });
      await expect(dispatcher.dispatch(['t1'])).rejects.toThrow();
      sqs.reset().on(SendMessageBatchCommand).rejects(awsError('RequestThrottled', 400));
      await expect(dispatcher.dispatch(Array.from({ length: 25 }, (_, i) => `t${i}`))).rejects.toThrow();
    } finally {
      sqs.restore();
    }
  });

  it('a scheduled send whose timer cannot be armed answers 503, and its retry arms it and delivers', async () => {
    const h = await newHarness();
    await h.admin.putTopic('jobs', topic());
    await h.admin.putGroup('w', group('jobs', { visibilityTimeoutSeconds: 30 }));
    const original = h.recorded.send.bind(h.recorded);
    let failures = 1;
    h.recorded.send = async (wake, delay) => {
      if (failures-- > 0) throw new UnavailableError('injected: delay queue down', 1);
      return original(wake, delay);
    };
    const input = send('later', { delaySeconds: 5, dedupId: 'later-1' });
    const first = await h.queue.send('jobs', input).catch((e: unknown) => e);
    expect(toProblem(first).problem.status).toBe(503);
    const retried = await h.queue.send('jobs', input);
    expect(retried.state).toBe('scheduled');
    h.clock.advance(6000);
    await h.fire();
    const got = await h.queue.receive('w', { maxMessages: 10, waitSeconds: 0 });
    expect(got.map((m) => m.body)).toEqual(['later']);
  });
});

describe('checker webhook faults', () => {
  let h: Harness;
  let checker: TestChecker;
  const servers: Server[] = [];

  beforeAll(async () => {
    h = await newHarness({ checkTimeoutMs: 500 });
    checker = await startChecker(() => 'commit');
    await h.admin.putTopic('orders', topic());
    await h.admin.putGroup('g', group('orders', { visibilityTimeoutSeconds: 30 }));
  });
  afterAll(async () => {
    await checker.close();
    for (const s of servers) await new Promise<void>((resolve) => s.close(() => resolve()));
  });

  const serve = async (handler: Parameters<typeof createServer>[1]) => {
    const server = createServer(handler);
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}/checks`;
  };

  it('counts timeouts, 500s, refused connections, slow drips and bad answers as unknown, and checks again until answered', async () => {
    const closed = await serve(() => undefined);
    const refusedUrl = closed;
    await new Promise<void>((resolve) => servers.pop()!.close(() => resolve()));
    const faulty: Array<[string, string]> = [
      ['timeout', await serve(() => undefined)],
      ['500', await serve((_req, res) => res.writeHead(500).end('{"status":"commit"}'))],
      ['refused', refusedUrl],
      [
        'slow drip',
        await serve((_req, res) => {
          res.writeHead(200, { 'content-type': 'application/json' });
          let i = 0;
          const drip = setInterval(() => {
            if (i >= 20 || res.destroyed) {
              clearInterval(drip);
              return res.end();
            }
            res.write(' '.repeat(1) + (i++ === 0 ? '{"status":' : ''));
          }, 100);
        }),
      ],
      ['not JSON', await serve((_req, res) => res.writeHead(200).end('commit'))],
      ['no status', await serve((_req, res) => res.writeHead(200).end('{"state":"commit"}'))],
      ['huge answer', await serve((_req, res) => res.writeHead(200).end(`{"status":"commit","pad":"${'x'.repeat(1100 * 1024)}"}`))],
      ['reset', await serve((req) => req.socket.destroy())],
    ];
    const created = await h.transactions.putProducer('shop', { checkerUrl: faulty[0]![1], checkIntervalSeconds: 10, maxChecks: 20, onMaxChecks: 'keep' });
    checker.secrets = [(created as { signingSecret: string }).signingSecret];
    const sent = await h.queue.send('orders', send('order-1', { transaction: { producerGroup: 'shop', checkAfterSeconds: 5 } }));
    const results: string[] = [];
    for (const [name, url] of faulty) {
      await h.transactions.putProducer('shop', { checkerUrl: url, checkIntervalSeconds: 10, maxChecks: 20, onMaxChecks: 'keep' });
      h.clock.advance(10_000);
      const started = Date.now();
      const outcome = await h.transactions.check(sent.transactionId!);
      results.push(`${name}: ${outcome} in ${Date.now() - started} ms`);
      expect(outcome, name).toBe('unknown');
      expect(Date.now() - started, `${name} respects the 500 ms check timeout`).toBeLessThan(3000);
    }
    // Then the checker answers: the half message is committed by the check-back.
    await h.transactions.putProducer('shop', { checkerUrl: checker.url, checkIntervalSeconds: 10, maxChecks: 20, onMaxChecks: 'keep' });
    h.clock.advance(10_000);
    expect(await h.transactions.check(sent.transactionId!)).toBe('commit');
    const view = await h.transactions.get(sent.transactionId!);
    expect(view.state).toBe('committed');
    expect(view.checks.map((c) => c.status)).toEqual([...faulty.map(() => 'unknown'), 'commit']);
    expect(view.checks.slice(0, faulty.length).every((c) => c.error !== null)).toBe(true);
    expect((await h.queue.receive('g', { maxMessages: 10, waitSeconds: 0 })).map((m) => m.body)).toEqual(['order-1']);
    figures.webhooks = { faults: results, checks: view.checks.length };
  }, 60_000);
});
