/**
 * The SDK's Consumer against the real local runtime: shard order with
 * concurrency, commit with publish in protected mode, lease extension,
 * redelivery after a handler error, graceful stop.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalRuntime } from '../../local/runtime.js';
import { Consumer, SluiceClient, type ConsumerErrorKind, type Delivered } from '../../lib/client/index.js';
import { TOKEN, startRuntime } from '../helpers/local.js';

let runtime: LocalRuntime;
let client: SluiceClient;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(condition: () => boolean, timeoutMs: number, what: string) {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(25);
  }
}

function errorsOf(errors: Array<{ kind: ConsumerErrorKind; error: unknown }>) {
  return errors.map((e) => `${e.kind}: ${e.error instanceof Error ? e.error.message : String(e.error)}`);
}

beforeAll(async () => {
  runtime = await startRuntime();
  client = new SluiceClient({ endpoint: runtime.url, token: TOKEN });
});
afterAll(async () => runtime?.stop());

describe('Consumer', () => {
  it('runs shards in parallel and each shard in sequence order, publishing atomically with each commit', async () => {
    await client.putTopic('c-in', { type: 'fifo' });
    await client.putTopic('c-out', { type: 'fifo' });
    // `protected` lets several messages of a shard be in flight at once: handling them in order is up to the consumer.
    await client.putGroup('c-enricher', { subscriptions: [{ topic: 'c-in' }], deliveryMode: 'protected', visibilityTimeoutSeconds: 30 });
    await client.putGroup('c-audit', { subscriptions: [{ topic: 'c-out' }], deliveryMode: 'concurrent' });
    const SHARDS = 4;
    const PER_SHARD = 6;
    const entries = [];
    for (let i = 1; i <= PER_SHARD; i++) for (let s = 0; s < SHARDS; s++) entries.push({ body: `s${s}-${i}`, shardKey: `s${s}` });
    const sent = await client.sendBatch('c-in', entries);
    expect(sent.results.every((r) => 'messageId' in r)).toBe(true);

    const handled = new Map<string, number[]>();
    const runningShards = new Set<string>();
    const violations: string[] = [];
    let running = 0;
    let maxRunning = 0;
    const errors: Array<{ kind: ConsumerErrorKind; error: unknown }> = [];
    let committed = 0;
    const consumer = new Consumer(client, {
      group: 'c-enricher',
      concurrency: 4,
      waitSeconds: 1,
      handler: async (m) => {
        const shard = m.shardKey ?? '?';
        if (runningShards.has(shard)) violations.push(`${shard}#${m.sequence} overlapped`);
        runningShards.add(shard);
        maxRunning = Math.max(maxRunning, ++running);
        await sleep(20 + Math.random() * 40);
        handled.set(shard, [...(handled.get(shard) ?? []), m.sequence ?? -1]);
        running--;
        runningShards.delete(shard);
        return { publish: [{ topic: 'c-out', body: `enriched ${m.body}`, shardKey: shard }] };
      },
      onError: (error, kind) => errors.push({ kind, error }),
      onCommitted: () => void committed++,
    });
    await consumer.start();
    await until(() => committed === SHARDS * PER_SHARD, 60_000, 'every message committed');
    await consumer.stop();

    expect(errorsOf(errors)).toEqual([]);
    expect(violations).toEqual([]);
    // Each shard in order, gap-free from its first number (which comes from the clock: docs/design.md, Idle shards expire).
    for (let s = 0; s < SHARDS; s++) {
      const seqs = handled.get(`s${s}`) ?? [];
      expect(seqs.map((seq) => seq - (seqs[0] ?? 0) + 1)).toEqual([1, 2, 3, 4, 5, 6]);
    }
    expect(maxRunning).toBeGreaterThan(1);
    expect(await client.getGroup('c-enricher')).toMatchObject({ backlog: 0, pending: 0, committed: SHARDS * PER_SHARD });

    // The outputs exist, per shard in input order.
    const outputs = new Map<string, string[]>();
    for (let idle = 0, seen = 0; seen < SHARDS * PER_SHARD && idle < 5; ) {
      const got = await client.receive('c-audit', { maxMessages: 100, waitSeconds: 1 });
      if (got.length === 0) idle++;
      seen += got.length;
      for (const m of got) outputs.set(m.shardKey ?? '?', [...(outputs.get(m.shardKey ?? '?') ?? []), m.body]);
      if (got.length) await client.commit('c-audit', got.map((m) => m.receiptHandle));
    }
    for (let s = 0; s < SHARDS; s++) {
      expect(outputs.get(`s${s}`)).toEqual(Array.from({ length: PER_SHARD }, (_, i) => `enriched s${s}-${i + 1}`));
    }
  }, 120_000);

  it('extends the lease while a handler runs longer than half the visibility timeout', async () => {
    await client.putTopic('c-slow', { type: 'standard' });
    await client.putGroup('c-slow-group', { subscriptions: [{ topic: 'c-slow' }], visibilityTimeoutSeconds: 4 });
    const sent = await client.send('c-slow', { body: 'slow' });
    const deliveries: Delivered[] = [];
    const errors: Array<{ kind: ConsumerErrorKind; error: unknown }> = [];
    let committed = false;
    let peeked: Delivered[] | undefined;
    const consumer = new Consumer(client, {
      group: 'c-slow-group',
      concurrency: 1,
      waitSeconds: 1,
      handler: async (m) => {
        deliveries.push(m);
        await sleep(4500);
        // Past the 4 s visibility timeout: without extension the message would be free to take now.
        peeked = await client.receive('c-slow-group', { waitSeconds: 0 });
        await sleep(700);
      },
      onError: (error, kind) => errors.push({ kind, error }),
      onCommitted: () => void (committed = true),
    });
    await consumer.start();
    await until(() => committed, 30_000, 'the slow message to be committed');
    await consumer.stop();
    expect(errorsOf(errors)).toEqual([]);
    expect(peeked).toEqual([]);
    expect(deliveries.map((d) => [d.messageId, d.deliveryCount])).toEqual([[sent.messageId, 1]]);
    expect((await client.getMessage('c-slow', sent.messageId)).groups).toMatchObject([{ state: 'committed', deliveryCount: 1 }]);
  });

  it('releases the lease when a handler throws, so the message is redelivered after the retry back-off, not the visibility timeout', async () => {
    await client.putTopic('c-flaky', { type: 'standard' });
    await client.putGroup('c-flaky-group', { subscriptions: [{ topic: 'c-flaky' }], visibilityTimeoutSeconds: 60 });
    await client.send('c-flaky', { body: 'flaky' });
    const counts: number[] = [];
    const errors: ConsumerErrorKind[] = [];
    let committed = false;
    const consumer = new Consumer(client, {
      group: 'c-flaky-group',
      concurrency: 2,
      waitSeconds: 1,
      handler: async (m) => {
        counts.push(m.deliveryCount);
        if (m.deliveryCount === 1) throw new Error('first attempt fails');
      },
      onError: (_error, kind) => errors.push(kind),
      onCommitted: () => void (committed = true),
    });
    const started = Date.now();
    await consumer.start();
    await until(() => committed, 30_000, 'the redelivered message to be committed');
    await consumer.stop();
    expect(counts).toEqual([1, 2]);
    expect(errors).toEqual(['handler']);
    expect(Date.now() - started).toBeLessThan(30_000); // far below the 60 s visibility timeout
  });

  it('a handler failing through a 1 s outage is retried per the group’s back-off (1 s, then 2 s): 2 deliveries, no dead letter', async () => {
    await client.putTopic('c-outage', { type: 'standard' });
    await client.putGroup('c-outage-group', { subscriptions: [{ topic: 'c-outage' }], visibilityTimeoutSeconds: 60, maxDeliveries: 16 });
    expect((await client.getGroup('c-outage-group')).retryPolicy).toEqual({ initialSeconds: 1, multiplier: 2, maxSeconds: 600 });
    await client.send('c-outage', { body: 'charge' });
    const calls: Array<{ deliveryCount: number; at: number }> = [];
    let committed = false;
    let outageEnds = Infinity;
    const consumer = new Consumer(client, {
      group: 'c-outage-group',
      waitSeconds: 1,
      handler: async (m) => {
        const at = Date.now();
        if (calls.length === 0) outageEnds = at + 1_000;
        calls.push({ deliveryCount: m.deliveryCount, at });
        if (at < outageEnds) throw new Error('downstream unavailable');
      },
      onError: () => undefined,
      onCommitted: () => void (committed = true),
    });
    await consumer.start();
    await until(() => committed, 30_000, 'the message to be committed after the outage');
    await consumer.stop();
    // Without a back-off the release loop took all 16 deliveries within the outage and dead-lettered it.
    expect(calls.map((c) => c.deliveryCount)).toEqual([1, 2]);
    expect(calls[1]!.at - calls[0]!.at).toBeGreaterThanOrEqual(1_000);
    expect(await client.getGroup('c-outage-group')).toMatchObject({ deadLettered: 0, committed: 1 });
  });

  it('stops gracefully: waits for running handlers and their commits, gives queued messages back', async () => {
    await client.putTopic('c-stop', { type: 'fifo' });
    await client.putGroup('c-stop-group', { subscriptions: [{ topic: 'c-stop' }], deliveryMode: 'concurrent', visibilityTimeoutSeconds: 60 });
    await client.sendBatch('c-stop', [1, 2, 3].map((i) => ({ body: `m${i}`, shardKey: 'one' })));
    let started = 0;
    let finished = 0;
    const consumer = new Consumer(client, {
      group: 'c-stop-group',
      concurrency: 2,
      waitSeconds: 1,
      handler: async () => {
        started++;
        await sleep(1000);
        finished++;
      },
      onError: () => undefined,
    });
    await consumer.start();
    await until(() => started === 1, 30_000, 'the first handler to start');
    await until(() => consumer.inFlight === 3, 15_000, 'the other messages of the shard to be queued behind it');
    await consumer.stop();
    // stop() returned only after the running handler finished and its message was committed.
    expect(finished).toBe(1);
    expect(started).toBe(1);
    expect(consumer.inFlight).toBe(0);
    // The queued two were given back unhandled (not left leased for 60 s, not failed attempts: no
    // back-off, their delivery not counted); the first was committed.
    const rest = await client.receive('c-stop-group', { maxMessages: 10, waitSeconds: 2 });
    expect(rest.map((m) => [m.body, m.deliveryCount])).toEqual([
      ['m2', 1],
      ['m3', 1],
    ]);
    await client.commit('c-stop-group', rest.map((m) => m.receiptHandle));
    expect(await client.getGroup('c-stop-group')).toMatchObject({ backlog: 0, inFlight: 0, committed: 3 });
  });

  it('refuses to start on a group that does not exist', async () => {
    const consumer = new Consumer(client, { group: 'c-missing', handler: () => undefined });
    await expect(consumer.start()).rejects.toMatchObject({ status: 404, code: 'GroupNotFound' });
  });
});
