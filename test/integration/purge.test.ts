/** Purging a topic (issue 17 item 4) on DynamoDB Local. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { TopicNotFoundError } from '../../lib/domain/errors.js';
import { FakeClock, newHarness, send, type Harness } from '../helpers/stores.js';
import * as build from '../helpers/builders.js';
import { startChecker, type TestChecker } from '../helpers/checker.js';

let h: Harness;
let checker: TestChecker | undefined;

afterEach(async () => {
  await checker?.close();
  checker = undefined;
});

const receive = (g: string, max = 100) => h.queue.receive(g, { maxMessages: max, waitSeconds: 0 });

/** Receives and commits until nothing comes; returns the bodies in delivery order. */
async function drain(g: string): Promise<string[]> {
  const out: string[] = [];
  for (let round = 0; round < 200; round++) {
    const got = await receive(g);
    if (got.length === 0) return out;
    out.push(...got.map((m) => m.body));
    await h.queue.commit(g, got.map((m) => m.receiptHandle));
  }
  throw new Error('did not drain');
}

/**
 * A purge under the fake clock, which does not move by itself: the purge waits (bounded) for
 * the clock to pass its time, then the test moves it on, as time would.
 */
async function purge(topic: string) {
  const answer = await h.admin.purgeTopic(topic);
  h.clock.advance(1);
  return answer;
}

describe('purge on a standard topic', () => {
  beforeEach(async () => {
    h = await newHarness();
    await h.admin.putTopic('orders', build.topic());
    await h.admin.putGroup('billing', build.group('orders', { visibilityTimeoutSeconds: 30 }));
    await h.admin.putGroup('audit', build.group('orders'));
  });

  it('drops deliverable and scheduled messages for every group; half messages and leases in flight stay; stats drop', async () => {
    checker = await startChecker(() => 'unknown');
    const created = await h.transactions.putProducer('shop', build.producer(checker.url));
    checker.secrets = [(created as { signingSecret: string }).signingSecret];
    for (let i = 0; i < 5; i++) await h.queue.send('orders', send(`old-${i}`));
    const [leased] = await receive('billing', 1);
    const scheduled = await h.queue.send('orders', send('scheduled', { delaySeconds: 60 }));
    const halfSent = await h.queue.send('orders', send('half', { transaction: { producerGroup: 'shop', checkAfterSeconds: 600 } }));
    expect((await h.admin.getGroup('billing')).backlog).toBe(4);
    expect((await h.admin.getTopic('orders')).approximateMessages).toBe(5);

    const answer = await purge('orders');
    expect(answer).toEqual({ topic: 'orders', purgedAt: expect.any(String) });

    const billing = await h.admin.getGroup('billing');
    expect(billing).toMatchObject({ backlog: 0, inFlight: 1 });
    expect((await h.admin.getGroup('audit')).backlog).toBe(0);
    expect((await h.admin.getTopic('orders')).approximateMessages).toBe(0);
    expect(await receive('billing')).toEqual([]);
    expect(await receive('audit')).toEqual([]);
    // A purged message is gone from queries too; the scheduled one says it is cancelled.
    await expect(h.queue.getMessage('orders', leased!.messageId)).rejects.toThrow();
    expect((await h.queue.getMessage('orders', scheduled.messageId)).state).toBe('cancelled');

    // A lease in flight may still commit.
    expect(await h.queue.commit('billing', [leased!.receiptHandle])).toMatchObject([{ status: 'committed' }]);

    // What is sent after the purge is delivered to every group.
    await h.queue.send('orders', send('after'));
    expect(await drain('billing')).toEqual(['after']);
    expect(await drain('audit')).toEqual(['after']);

    // The scheduled message falls due: cancelled, not delivered.
    h.clock.advance(61_000);
    await h.fire();
    await h.timers.sweep();
    expect(await receive('billing')).toEqual([]);
    expect((await h.queue.getMessage('orders', scheduled.messageId)).state).toBe('cancelled');

    // The half message stays; committed after the purge, it is delivered.
    await h.transactions.commit(halfSent.transactionId!);
    expect(await drain('billing')).toEqual(['half']);
    expect(await drain('audit')).toEqual(['half']);
  });

  it('a purged message whose lease expires is not delivered again', async () => {
    await h.queue.send('orders', send('x'));
    const [leased] = await receive('billing', 1);
    expect(leased).toBeDefined();
    await purge('orders');
    h.clock.advance(31_000);
    expect(await receive('billing')).toEqual([]);
    expect((await h.admin.getGroup('billing'))).toMatchObject({ backlog: 0, inFlight: 0 });
  });

  it('a scheduled message sent after the purge is delivered when due', async () => {
    await purge('orders');
    await h.queue.send('orders', send('later', { delaySeconds: 5 }));
    h.clock.advance(6_000);
    await h.fire();
    expect(await drain('billing')).toEqual(['later']);
  });

  it('a purge of an unknown or deleted topic answers TopicNotFound and writes nothing', async () => {
    await expect(h.admin.purgeTopic('nope')).rejects.toBeInstanceOf(TopicNotFoundError);
    await h.admin.deleteTopic('orders');
    await expect(h.admin.purgeTopic('orders')).rejects.toBeInstanceOf(TopicNotFoundError);
  });

  it('a topic re-created after a purge starts without the purge mark', async () => {
    await purge('orders');
    await h.admin.deleteTopic('orders');
    h.clock.advance(60_000);
    await h.admin.putTopic('orders', build.topic());
    expect((await h.stores.catalog.getTopic('orders'))?.purgedAt).toBeUndefined();
  });
});

describe('purge on a FIFO topic', () => {
  beforeEach(async () => {
    h = await newHarness();
    await h.admin.putTopic('ledger', build.topic({ type: 'fifo' }));
    await h.admin.putGroup('g', build.group('ledger', { deliveryMode: 'serialized' }));
  });

  it('drops every shard’s messages; later messages keep their sequence order', async () => {
    const base = h.clock.now() * 1000;
    await h.queue.sendBatch('ledger', ['a1', 'a2'].map((b) => send(b, { shardKey: 'A' })));
    await h.queue.send('ledger', send('b1', { shardKey: 'B' }));
    await purge('ledger');
    await h.queue.sendBatch('ledger', ['a3', 'a4'].map((b) => send(b, { shardKey: 'A' })));
    const got = await receive('g');
    expect(got.map((m) => [m.body, m.sequence! - base])).toEqual([['a3', 3]]);
    await h.queue.commit('g', [got[0]!.receiptHandle]);
    expect(await drain('g')).toEqual(['a4']);
  });
});

describe('purge during a send burst (real clock)', () => {
  class SystemClock extends FakeClock {
    override now() {
      return Date.now();
    }
  }

  it('delivers every message sent after the purge answered, never one acknowledged before it began, and batches whole', async () => {
    h = await newHarness({ clock: new SystemClock() });
    await h.admin.putTopic('burst', build.topic());
    await h.admin.putGroup('g', build.group('burst'));
    type Sent = { bodies: string[]; start: number; ack: number };
    const sent: Sent[] = [];
    let stop = false;
    const producer = async (p: number) => {
      for (let i = 0; !stop; i++) {
        const start = performance.now();
        const batch = i % 3 === 0;
        const bodies = batch ? [`${p}-${i}-a`, `${p}-${i}-b`, `${p}-${i}-c`] : [`${p}-${i}`];
        if (batch) await h.queue.sendBatch('burst', bodies.map((b) => send(b)));
        else await h.queue.send('burst', send(bodies[0]!));
        sent.push({ bodies, start, ack: performance.now() });
      }
    };
    const producers = [0, 1, 2, 3].map(producer);
    const until = async (done: () => boolean) => {
      while (!done()) await new Promise((resolve) => setTimeout(resolve, 10));
    };
    await until(() => sent.length >= 12);
    const purgeStart = performance.now();
    await h.admin.purgeTopic('burst');
    const purgeAnswered = performance.now();
    await until(() => sent.filter((s) => s.start > purgeAnswered).length >= 12);
    stop = true;
    await Promise.all(producers);

    const delivered = new Set(await drain('g'));
    const before = sent.filter((s) => s.ack < purgeStart);
    const after = sent.filter((s) => s.start > purgeAnswered);
    expect(before.length).toBeGreaterThan(0);
    expect(after.length).toBeGreaterThan(0);
    for (const s of before) for (const b of s.bodies) expect(delivered.has(b), `${b} acknowledged before the purge`).toBe(false);
    for (const s of after) for (const b of s.bodies) expect(delivered.has(b), `${b} sent after the purge answered`).toBe(true);
    // A batch racing the purge is purged or delivered as a whole.
    for (const s of sent) expect(new Set(s.bodies.map((b) => delivered.has(b))).size).toBe(1);
    console.log(
      `purge burst: ${sent.length} sends (${before.length} before, ${after.length} after, ${sent.length - before.length - after.length} racing), ` +
        `purge took ${(purgeAnswered - purgeStart).toFixed(1)} ms, ${delivered.size} messages delivered`,
    );
  });
});
