/**
 * The per-container cursor cache (docs/design.md, Receive: the cursor cache) on DynamoDB Local,
 * with two "containers": two service instances on one table, each with its own stores and cache,
 * sharing one clock. A stale entry may cost a failed claim and a consistent read, never a message:
 * nothing is lost or delivered twice within a lease, and seeks and purges made after a cached read
 * behave as without the cache.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { beforeEach, describe, expect, it } from 'vitest';
import { Seeker } from '../../lib/services/seeker.js';
import type { DeliveredMessage } from '../../lib/domain/model.js';
import { FakeClock, harness, send, testTable, type Harness } from '../helpers/stores.js';
import * as build from '../helpers/builders.js';

const CACHE_MS = 2000;
let a: Harness;
let b: Harness;
let client: DynamoDBClient;

const receive = (h: Harness, maxMessages = 10) => h.queue.receive('g', { maxMessages, waitSeconds: 0 });
const commit = async (h: Harness, handle: string) => {
  const [result] = await h.queue.commit('g', [handle]);
  return result && 'status' in result ? result.status : result?.error.code;
};

async function containers(partitions = 1, visibilityTimeoutSeconds = 30) {
  const created = await testTable();
  const { doc, table } = created;
  client = created.client;
  const clock = new FakeClock();
  a = harness(doc, table, { clock, cursorCacheMs: CACHE_MS });
  b = harness(doc, table, { clock, cursorCacheMs: CACHE_MS });
  await a.admin.putTopic('t', build.topic({ partitions }));
  await a.admin.putGroup('g', build.group('t', { visibilityTimeoutSeconds, maxDeliveries: 10 }));
}

describe('the cursor cache', () => {
  describe('one partition', () => {
    beforeEach(async () => containers(1));

    it('a steady consumer reads no cursor: its claims return the cursor they leave', async () => {
      for (let i = 0; i < 3; i++) await a.queue.send('t', send(`m${i}`));
      const first = await receive(a, 1);
      expect(first.map((m) => m.body)).toEqual(['m0']);
      expect(a.stores.cursors.cache.get('g', 't:t/p:0', (await a.stores.catalog.group('g'))!.createdAt)?.next).toBe(2);
      // From here on the receive plans from the entry its claim left.
      const reads = countBatchGets();
      expect((await receive(a, 1)).map((m) => m.body)).toEqual(['m1']);
      expect(await commit(a, first[0]!.receiptHandle)).toBe('committed');
      expect((await receive(a, 1)).map((m) => m.body)).toEqual(['m2']);
      expect(reads()).toBe(0);
      // Past its age the entry is read again.
      a.clock.advance(CACHE_MS + 1);
      expect(await receive(a)).toEqual([]);
      expect(reads()).toBe(1);
    });

    it('another container claimed meanwhile: the stale claim fails, reads again, and nothing is delivered twice', async () => {
      for (let i = 0; i < 4; i++) await a.queue.send('t', send(`m${i}`));
      expect((await receive(a, 1)).map((m) => m.body)).toEqual(['m0']);
      // B takes m1 and m2; A's entry still says nx = 2.
      expect((await receive(b, 2)).map((m) => m.body)).toEqual(['m1', 'm2']);
      expect((await receive(a, 10)).map((m) => m.body)).toEqual(['m3']);
      expect(await receive(a)).toEqual([]);
      expect(await receive(b)).toEqual([]);
    });

    it('a lease another container released is renewed here once the entry is older than the cache age, at the latest', async () => {
      await a.queue.send('t', send('m'));
      const [held] = await receive(a, 1);
      // B reads the cursor with A's lease in it (not expired).
      expect(await receive(b)).toEqual([]);
      // A gives the message back: claimable after the retry back-off (1 s).
      await a.queue.changeVisibility('g', held!.receiptHandle, 0);
      a.clock.advance(1001);
      // B's entry (1 s old) still shows the long lease: B waits for its entry to age.
      expect(await receive(b)).toEqual([]);
      a.clock.advance(CACHE_MS);
      const again = await receive(b);
      expect(again.map((m) => [m.body, m.deliveryCount])).toEqual([['m', 2]]);
      expect(await commit(b, again[0]!.receiptHandle)).toBe('committed');
      expect(await commit(a, held!.receiptHandle)).toBe('ReceiptHandleExpired');
    });

    it('a seek by another container after a cached read: latest skips what the seek skipped', async () => {
      for (let i = 0; i < 3; i++) await a.queue.send('t', send(`old${i}`));
      expect((await receive(a, 1)).map((m) => m.body)).toEqual(['old0']);
      await new Seeker(b.stores, b.clock).seek('g', 'latest', undefined);
      await a.queue.send('t', send('new'));
      // A's entry says nx = 2: its claim of old1 fails its nx condition, it reads again.
      expect((await receive(a)).map((m) => m.body)).toEqual(['new']);
    });

    it('a seek by another container after a cached read: earliest delivers everything again, at deliveryCount 1', async () => {
      for (let i = 0; i < 3; i++) await a.queue.send('t', send(`m${i}`));
      const before = await receive(a, 10);
      expect(before.map((m) => m.body)).toEqual(['m0', 'm1', 'm2']);
      await new Seeker(b.stores, b.clock).seek('g', 'earliest', undefined);
      // A's entry (nx past m2, nothing new there) plans no claim, so nothing fails: the seek reaches
      // A's receives when the entry has aged (a seek by A's own container, at once: next test).
      expect(await receive(a, 10)).toEqual([]);
      a.clock.advance(CACHE_MS + 1);
      const after = await receive(a, 10);
      expect(after.map((m) => [m.body, m.deliveryCount])).toEqual([['m0', 1], ['m1', 1], ['m2', 1]]);
      for (const m of before) expect(await commit(a, m.receiptHandle)).toBe('ReceiptHandleExpired');
      for (const m of after) expect(await commit(a, m.receiptHandle)).toBe('committed');
    });

    it('a seek by this container reaches its own receives at once', async () => {
      for (let i = 0; i < 2; i++) await a.queue.send('t', send(`m${i}`));
      expect((await receive(a, 10)).map((m) => m.body)).toEqual(['m0', 'm1']);
      await new Seeker(a.stores, a.clock).seek('g', 'earliest', undefined);
      expect((await receive(a, 10)).map((m) => [m.body, m.deliveryCount])).toEqual([['m0', 1], ['m1', 1]]);
    });

    it('a seek and later claims that bring nx back to the cached value: the claim fails its seek-epoch condition', async () => {
      for (let i = 0; i < 3; i++) await a.queue.send('t', send(`m${i}`));
      // A's entry: nx = 2, epoch 0.
      expect((await receive(a, 1)).map((m) => m.body)).toEqual(['m0']);
      // B leases m1 in epoch 0 (never committed), seeks back, and takes m0 again: nx = 2 once more.
      const [stale] = await receive(b, 1);
      expect(stale?.body).toBe('m1');
      await new Seeker(b.stores, b.clock).seek('g', 'earliest', undefined);
      expect((await receive(b, 1)).map((m) => [m.body, m.deliveryCount])).toEqual([['m0', 1]]);
      // A plans m1 from its entry (nx = 2 matches). Without the seek-epoch condition it would lease m1
      // in epoch 0, and its commit would let B's pre-seek handle pass for committed.
      const [replay] = await receive(a, 1);
      expect([replay?.body, replay?.deliveryCount]).toEqual(['m1', 1]);
      expect(await commit(a, replay!.receiptHandle)).toBe('committed');
      expect(await commit(b, stale!.receiptHandle)).toBe('ReceiptHandleExpired');
    });

    it('a purge after a cached read: the purged messages are not delivered', async () => {
      for (let i = 0; i < 3; i++) await a.queue.send('t', send(`old${i}`));
      expect((await receive(a, 1)).map((m) => m.body)).toEqual(['old0']);
      await b.admin.purgeTopic('t');
      a.clock.advance(1);
      await a.queue.send('t', send('new'));
      expect((await receive(a)).map((m) => m.body)).toEqual(['new']);
    });

    it('a group deleted and created again: the old group’s cached cursor is not used', async () => {
      for (let i = 0; i < 2; i++) await a.queue.send('t', send(`old${i}`));
      expect((await receive(a, 1)).map((m) => m.body)).toEqual(['old0']);
      const oldIncarnation = (await a.stores.catalog.group('g'))!.createdAt;
      await b.admin.deleteGroup('g');
      a.clock.advance(1);
      await b.admin.putGroup('g', build.group('t', { visibilityTimeoutSeconds: 30 }));
      await a.queue.send('t', send('new'));
      // Container a still holds the old group's entry; it serves that incarnation only.
      const newIncarnation = (await b.stores.catalog.getGroup('g'))!.createdAt;
      expect(newIncarnation).not.toBe(oldIncarnation);
      expect(a.stores.cursors.cache.get('g', 't:t/p:0', oldIncarnation)).toBeDefined();
      expect(a.stores.cursors.cache.get('g', 't:t/p:0', newIncarnation)).toBeUndefined();
      // The new group starts at the head: only what was sent after it exists.
      expect((await receive(a)).map((m) => m.body)).toEqual(['new']);
    });
  });

  it('two containers, three receivers each, racing on four partitions: every message once, nothing lost', async () => {
    await containers(4, 300);
    const total = 120;
    for (let i = 0; i < total; i += 10) {
      await a.queue.sendBatch('t', Array.from({ length: 10 }, (_, k) => send(`m${i + k}`)));
    }
    const seen = new Map<string, number>();
    const consumer = async (h: Harness) => {
      for (let empty = 0; empty < 6; ) {
        const got: DeliveredMessage[] = await receive(h, 1 + Math.floor(Math.random() * 5));
        empty = got.length === 0 ? empty + 1 : 0;
        for (const m of got) seen.set(m.body, (seen.get(m.body) ?? 0) + 1);
        if (got.length > 0) {
          const results = await h.queue.commit('g', got.map((m) => m.receiptHandle));
          expect(results.every((r) => 'status' in r && r.status === 'committed')).toBe(true);
        }
        // Time moves (entries age, by less than the visibility timeout in all).
        h.clock.advance(50);
      }
    };
    await Promise.all([a, a, a, b, b, b].map(consumer));
    expect(seen.size).toBe(total);
    expect([...seen.values()].every((n) => n === 1)).toBe(true);
    expect(await a.admin.getGroup('g')).toMatchObject({ backlog: 0, inFlight: 0 });
  }, 120_000);
});

/** Counts the BatchGetItem requests on the test table from now on (both containers share its client). */
function countBatchGets(): () => number {
  let n = 0;
  client.middlewareStack.add(
    (next, context) => async (args) => {
      // Cursor keys only (topics are read with BatchGetItem too: the harness has no catalog cache).
      // Keys may still be plain values here (the document client marshals them later) or marshalled.
      const input = args.input as { RequestItems?: Record<string, { Keys?: Array<{ pk?: string | { S?: string } }> }> };
      const keys = Object.values(input.RequestItems ?? {}).flatMap((r) => r.Keys ?? []);
      const pk = (k: { pk?: string | { S?: string } }) => (typeof k.pk === 'string' ? k.pk : k.pk?.S) ?? '';
      if (context.commandName === 'BatchGetItemCommand' && keys.some((k) => pk(k).startsWith('C#'))) n++;
      return next(args);
    },
    { step: 'initialize', name: `count-batch-gets-${Math.random()}` },
  );
  return () => n;
}
