/**
 * FIFO shard cursors in the per-container cursor cache (docs/design.md, Receive: the cursor cache)
 * on DynamoDB Local, with two "containers" (two service instances on one table, each with its own
 * stores and cache, one clock). A steady consumer of a shard claims with one write and no cursor
 * read; a stale entry may cost a failed claim or a read, never a message, a delay or an order.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import type { DeliveryMode } from '../../lib/domain/model.js';
import { Seeker } from '../../lib/services/seeker.js';
import { FakeClock, harness, send, testTable, type Harness } from '../helpers/stores.js';
import * as build from '../helpers/builders.js';

const CACHE_MS = 2000;
const SHARD = 't:t/k:K';
let a: Harness;
let b: Harness;
let client: DynamoDBClient;

const receive = (h: Harness, maxMessages = 10) => h.queue.receive('g', { maxMessages, waitSeconds: 0 });
const bodies = async (h: Harness, maxMessages = 10) => (await receive(h, maxMessages)).map((m) => m.body);
const commit = async (h: Harness, handle: string) => {
  const [result] = await h.queue.commit('g', [handle]);
  return result && 'status' in result ? result.status : result?.error.code;
};
const sendAll = async (...names: string[]) => {
  for (const name of names) await a.queue.send('t', send(name, { shardKey: 'K' }));
};

async function containers(deliveryMode: DeliveryMode, cacheMs = CACHE_MS) {
  const created = await testTable();
  const { doc, table } = created;
  client = created.client;
  const clock = new FakeClock();
  a = harness(doc, table, { clock, cursorCacheMs: cacheMs });
  b = harness(doc, table, { clock, cursorCacheMs: cacheMs });
  await a.admin.putTopic('t', build.topic({ type: 'fifo' }));
  await a.admin.putGroup('g', build.group('t', { deliveryMode, visibilityTimeoutSeconds: 30, maxDeliveries: 10 }));
}

const incarnation = async () => (await a.stores.catalog.group('g'))!.createdAt;

describe('FIFO shard cursors in the cursor cache', () => {
  it('a steady serialized consumer reads no shard cursor: its claims and commits return the cursor they leave', async () => {
    await containers('serialized');
    await sendAll('m0', 'm1', 'm2');
    const [m0] = await receive(a);
    expect(m0?.body).toBe('m0');
    expect(a.stores.cursors.remembered('g', SHARD, await incarnation())?.next).toBe(m0!.sequence! + 1);
    const reads = countShardCursorReads();
    expect(await commit(a, m0!.receiptHandle)).toBe('committed');
    const [m1] = await receive(a);
    expect(m1?.body).toBe('m1');
    expect(await commit(a, m1!.receiptHandle)).toBe('committed');
    expect(await bodies(a)).toEqual(['m2']);
    expect(reads()).toBe(0);
  });

  it('a steady concurrent consumer of a hot shard reads no shard cursor', async () => {
    await containers('concurrent');
    await sendAll('m0', 'm1', 'm2', 'm3');
    expect(await bodies(a, 1)).toEqual(['m0']);
    const reads = countShardCursorReads();
    expect(await bodies(a, 2)).toEqual(['m1', 'm2']);
    expect(await bodies(a, 2)).toEqual(['m3']);
    expect(reads()).toBe(0);
  });

  it('the protected mode reads its shard cursor (its claims cascade pending commits first)', async () => {
    await containers('protected');
    await sendAll('m0', 'm1');
    expect(await bodies(a, 1)).toEqual(['m0']);
    const reads = countShardCursorReads();
    expect(await bodies(a, 1)).toEqual(['m1']);
    expect(reads()).toBe(1);
  });

  it('another container committed the lease the entry holds: the next message is delivered at once, not when the entry ages', async () => {
    await containers('serialized');
    await sendAll('m0', 'm1');
    const [m0] = await receive(a);
    expect(m0?.body).toBe('m0');
    // B commits A's lease; A's entry still shows m0 in flight (nothing to claim by it).
    expect(await commit(b, m0!.receiptHandle)).toBe('committed');
    expect(await bodies(a)).toEqual(['m1']);
  });

  it('a notice read again with an entry older than a commit: the shard is claimed, not passed over', async () => {
    await containers('serialized');
    await sendAll('m0', 'm1');
    const [m0] = await receive(a);
    // What a container that claimed here earlier would hold: m0 in flight, m1 known.
    const seenAt = a.clock.now();
    const snapshot = await a.stores.cursors.get('g', SHARD, seenAt);
    expect(snapshot?.known).toBe(m0!.sequence! + 1);
    expect(await commit(a, m0!.receiptHandle)).toBe('committed');
    // A third container with that entry reads the notices again (the group's notice cursor lags
    // behind what A absorbed): the shard is announced, its entry knows both messages and says busy.
    const c = harness(a.doc, a.table, { clock: a.clock, cursorCacheMs: CACHE_MS });
    c.stores.cursors.cache.put('g', SHARD, snapshot!, seenAt, await incarnation());
    expect(await bodies(c)).toEqual(['m1']);
  });

  it('another container claimed meanwhile: the stale claim fails and plans again, nothing is delivered twice, order kept', async () => {
    await containers('concurrent');
    await sendAll('m0', 'm1', 'm2', 'm3', 'm4');
    expect(await bodies(a, 1)).toEqual(['m0']);
    expect(await bodies(b, 2)).toEqual(['m1', 'm2']);
    expect(await bodies(a, 10)).toEqual(['m3', 'm4']);
    expect(await receive(a)).toEqual([]);
    expect(await receive(b)).toEqual([]);
  });

  it('a seek and later claims that bring the shard cursor back to the cached state: the claim fails its seek-epoch condition', async () => {
    await containers('concurrent');
    await sendAll('m0', 'm1', 'm2');
    // A's entry: m0 leased, nx past it, epoch 0.
    expect(await bodies(a, 1)).toEqual(['m0']);
    // B leases m1 in epoch 0 (never committed), seeks back, and takes m0 again: the cursor has the
    // same next message, known head and number of leases as A's entry.
    const [stale] = await receive(b, 1);
    expect(stale?.body).toBe('m1');
    await new Seeker(b.stores, b.clock).seek('g', 'earliest', undefined);
    expect((await receive(b, 1)).map((m) => [m.body, m.deliveryCount])).toEqual([['m0', 1]]);
    // A plans m1 from its entry. Without the seek-epoch condition it would lease m1 in epoch 0, and
    // its commit would let B's pre-seek handle pass for committed.
    const [replay] = await receive(a, 1);
    expect([replay?.body, replay?.deliveryCount]).toEqual(['m1', 1]);
    expect(await commit(a, replay!.receiptHandle)).toBe('committed');
    expect(await commit(b, stale!.receiptHandle)).toBe('ReceiptHandleExpired');
  });

  it('two containers, three receivers each, on one hot shard: every message once, in order per lease round', async () => {
    await containers('serialized');
    const total = 40;
    for (let i = 0; i < total; i += 10) {
      await a.queue.sendBatch('t', Array.from({ length: 10 }, (_, k) => send(`m${String(i + k).padStart(2, '0')}`, { shardKey: 'K' })));
    }
    const delivered: string[] = [];
    const consumer = async (h: Harness) => {
      for (let empty = 0; empty < 6; ) {
        const got = await receive(h, 1 + Math.floor(Math.random() * 3));
        empty = got.length === 0 ? empty + 1 : 0;
        delivered.push(...got.map((m) => m.body));
        if (got.length > 0) {
          const results = await h.queue.commit('g', got.map((m) => m.receiptHandle));
          expect(results.every((r) => 'status' in r && r.status === 'committed')).toBe(true);
        }
        h.clock.advance(50);
      }
    };
    await Promise.all([a, a, a, b, b, b].map(consumer));
    // Serialized: one message in flight at a time, so deliveries are the shard's order exactly.
    expect(delivered).toEqual(Array.from({ length: total }, (_, i) => `m${String(i).padStart(2, '0')}`));
  }, 120_000);
});

/** Counts consistent GetItem reads of the shard cursor on the test table from now on (both containers share its client). */
function countShardCursorReads(): () => number {
  let n = 0;
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const key = (args.input as { Key?: { pk?: string | { S?: string }; sk?: string | { S?: string } } }).Key;
      const text = (v: string | { S?: string } | undefined) => (typeof v === 'string' ? v : v?.S) ?? '';
      if (context.commandName === 'GetItemCommand' && text(key?.pk) === 'C#g' && text(key?.sk) === SHARD) n++;
      return next(args);
    },
    { step: 'initialize', name: `count-shard-cursor-reads-${Math.random()}` },
  );
  return () => n;
}
