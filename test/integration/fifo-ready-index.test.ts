/**
 * The FIFO ready index (gsi1, `R#<group>`) is written only when a shard's
 * readiness changes: claims and commits on a busy shard leave its entry alone,
 * a drained shard leaves the index at its last commit, and every way a shard
 * becomes ready again (a new notice, a lease expiry, a commit that unblocks
 * it, a visibility change) puts it back (docs/design.md, Ready index).
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { newHarness, send, type Harness } from '../helpers/stores.js';
import { countWrites } from '../helpers/index-units.js';
import * as build from '../helpers/builders.js';
import { readyAtKey, readyNowKey } from '../../lib/adapters/dynamodb/keys.js';
import { GSI1 } from '../../lib/adapters/dynamodb/table.js';
import type { DeliveryMode } from '../../lib/domain/model.js';

let h: Harness;
/** Index write units reported for gsi1 since the test began (DynamoDB Local fills ConsumedCapacity). */
let gsiUnits = 0;

const topic = (name: string) => h.admin.putTopic(name, build.topic({ type: 'fifo' }));
// Index times below are lease expiries without a retry back-off; the back-off's own case is the last test.
const group = (name: string, topics: string[], mode: DeliveryMode, initialSeconds = 0) =>
  h.admin.putGroup(name, build.group(topics, { deliveryMode: mode, visibilityTimeoutSeconds: 30, retryPolicy: { initialSeconds } }));
const receive = (g: string, max = 10) => h.queue.receive(g, { maxMessages: max, waitSeconds: 0, topics: undefined });
const commit = (g: string, ...handles: string[]) => h.queue.commit(g, handles);
const bodies = (ms: Array<{ body: string }>) => ms.map((m) => m.body);
const shard = (key: string, t = 'ledger') => `t:${t}/k:${key}`;

/** The shard cursor's ready-index sort key (undefined: off the index). */
const indexKey = async (g: string, key: string): Promise<string | undefined> => {
  const { Item } = await h.doc.send(new GetCommand({ TableName: h.table, Key: { pk: `C#${g}`, sk: shard(key) }, ConsistentRead: true }));
  return Item?.g1sk as string | undefined;
};
const indexed = async (g: string): Promise<string[]> => {
  const { Items } = await h.doc.send(
    new QueryCommand({ TableName: h.table, IndexName: GSI1, KeyConditionExpression: 'g1pk = :pk', ExpressionAttributeValues: { ':pk': `R#${g}` } }),
  );
  return (Items ?? []).map((i) => String(i.sk));
};

beforeEach(async () => {
  h = await newHarness();
  gsiUnits = 0;
  countWrites(h.doc, (_, units) => {
    gsiUnits += units;
  });
  await topic('ledger');
});

describe('FIFO ready index', () => {
  for (const mode of ['concurrent', 'protected'] as const) {
    it(`${mode}: claims and commits on a shard with more work leave its index entry alone`, async () => {
      await group('g', ['ledger'], mode);
      await h.queue.sendBatch('ledger', ['a1', 'a2', 'a3', 'a4'].map((b) => send(b, { shardKey: 'A' })));
      const [a1] = await receive('g', 1);
      expect(a1?.body).toBe('a1');
      expect(await indexKey('g', 'A')).toBe(readyNowKey(shard('A')));

      const before = gsiUnits;
      const [a2] = await receive('g', 1);
      expect(a2?.body).toBe('a2');
      expect((await commit('g', a1!.receiptHandle))[0]).toMatchObject({ status: 'committed' });
      expect((await commit('g', a2!.receiptHandle))[0]).toMatchObject({ status: 'committed' });
      expect(bodies(await receive('g', 1))).toEqual(['a3']);
      expect(gsiUnits - before).toBe(0);
      expect(await indexKey('g', 'A')).toBe(readyNowKey(shard('A')));
    });
  }

  for (const mode of ['serialized', 'concurrent', 'protected'] as const) {
    it(`${mode}: a shard whose last message is committed leaves the index; a later send puts it back`, async () => {
      await group('g', ['ledger'], mode);
      await h.queue.send('ledger', send('a1', { shardKey: 'A' }));
      const [a1] = await receive('g');
      expect(a1?.body).toBe('a1');
      // Waiting for its lease: indexed at the lease's expiry.
      expect(await indexKey('g', 'A')).toBe(readyAtKey(h.clock.now() + 30_000));
      expect((await commit('g', a1!.receiptHandle))[0]).toMatchObject({ status: 'committed' });
      expect(await indexKey('g', 'A')).toBeUndefined();
      expect(await indexed('g')).toEqual([]);

      await h.queue.send('ledger', send('a2', { shardKey: 'A' }));
      const [a2] = await receive('g');
      // The shard's next number (its first came from the clock: docs/design.md, Idle shards expire).
      expect(a2).toMatchObject({ body: 'a2', sequence: a1!.sequence! + 1 });
      expect((await commit('g', a2!.receiptHandle))[0]).toMatchObject({ status: 'committed' });
      expect(await indexed('g')).toEqual([]);
    });
  }

  it('a drained shard leaves the index whatever the order of its commits, and with publish outputs', async () => {
    await topic('out');
    await group('g', ['ledger'], 'concurrent');
    await h.queue.sendBatch('ledger', ['a1', 'a2', 'a3'].map((b) => send(b, { shardKey: 'A' })));
    const got = await receive('g');
    expect(bodies(got)).toEqual(['a1', 'a2', 'a3']);
    await commit('g', got[2]!.receiptHandle);
    expect(await indexKey('g', 'A')).toBeDefined(); // two leases left
    const out = await h.queue.commit('g', [{ receiptHandle: got[0]!.receiptHandle, publish: [{ topic: 'out', ...send('o1', { shardKey: 'X' }) }] }]);
    expect(out[0]).toMatchObject({ status: 'committed' });
    expect(await indexKey('g', 'A')).toBeDefined(); // one lease left
    await commit('g', got[1]!.receiptHandle);
    expect(await indexed('g')).toEqual([]);

    await h.queue.send('ledger', send('a4', { shardKey: 'A' }));
    expect(bodies(await receive('g'))).toEqual(['a4']);
  });

  it('protected: a commit racing with a later one going pending still completes it (or leaves the shard ready)', async () => {
    await group('g', ['ledger'], 'protected');
    await h.queue.sendBatch('ledger', ['a1', 'a2', 'a3'].map((b) => send(b, { shardKey: 'A' })));
    const [a1, a2, a3] = await receive('g');
    // a1's commit reads the cursor; a2's commit goes pending right after that read.
    const cursors = h.stores.cursors;
    const get = cursors.get.bind(cursors);
    let raced = false;
    cursors.get = async (g, stream, now) => {
      const read = await get(g, stream, now);
      if (!raced) {
        raced = true;
        expect((await commit('g', a2!.receiptHandle))[0]).toMatchObject({ status: 'pending' });
      }
      return read;
    };
    expect((await commit('g', a1!.receiptHandle))[0]).toMatchObject({ status: 'committed' });
    cursors.get = get;
    expect(raced).toBe(true);
    expect((await h.admin.getGroup('g')).pending).toBe(0);
    expect((await commit('g', a3!.receiptHandle))[0]).toMatchObject({ status: 'committed' });
    expect(await indexed('g')).toEqual([]);
  });

  it('an expired lease makes its shard ready again at the expiry time', async () => {
    await group('g', ['ledger'], 'concurrent');
    await h.queue.send('ledger', send('a1', { shardKey: 'A' }));
    const [first] = await receive('g');
    const expiry = h.clock.now() + 30_000;
    expect(await indexKey('g', 'A')).toBe(readyAtKey(expiry));
    h.clock.advance(29_000);
    expect(await receive('g')).toEqual([]);
    h.clock.advance(1_000);
    const [again] = await receive('g');
    expect(again).toMatchObject({ body: 'a1', deliveryCount: 2, sequence: first!.sequence });
    expect(await indexKey('g', 'A')).toBe(readyAtKey(h.clock.now() + 30_000));
    // The stale handle cannot commit; the fresh one takes the shard off the index.
    expect((await commit('g', first!.receiptHandle))[0]).toHaveProperty('error');
    expect((await commit('g', again!.receiptHandle))[0]).toMatchObject({ status: 'committed' });
    expect(await indexed('g')).toEqual([]);
  });

  it('serialized: a commit unblocks the shard; a notice for a blocked shard does not lose it', async () => {
    await group('g', ['ledger'], 'serialized');
    await h.queue.send('ledger', send('a1', { shardKey: 'A' }));
    const [a1] = await receive('g');
    expect(await indexKey('g', 'A')).toBe(readyAtKey(h.clock.now() + 30_000));
    // A new message while a1 is in flight: the notice makes the shard ready, the claim finds it blocked.
    await h.queue.send('ledger', send('a2', { shardKey: 'A' }));
    expect(await receive('g')).toEqual([]);
    expect(await indexKey('g', 'A')).toBe(readyAtKey(h.clock.now() + 30_000));
    await commit('g', a1!.receiptHandle);
    expect(await indexKey('g', 'A')).toBe(readyNowKey(shard('A')));
    const [a2] = await receive('g');
    expect(a2?.body).toBe('a2');
    await commit('g', a2!.receiptHandle);
    expect(await indexed('g')).toEqual([]);
  });

  it('visibility changes: longer leaves the entry, shorter lowers it, zero makes the shard ready now', async () => {
    await group('g', ['ledger'], 'concurrent');
    await h.queue.sendBatch('ledger', ['a1', 'a2'].map((b) => send(b, { shardKey: 'A' })));
    const [a1, a2] = await receive('g');
    const t0 = h.clock.now();
    expect(await indexKey('g', 'A')).toBe(readyAtKey(t0 + 30_000));
    await h.queue.changeVisibility('g', a2!.receiptHandle, 300);
    expect(await indexKey('g', 'A')).toBe(readyAtKey(t0 + 30_000));
    await h.queue.changeVisibility('g', a1!.receiptHandle, 5);
    expect(await indexKey('g', 'A')).toBe(readyAtKey(t0 + 5_000));
    h.clock.advance(5_000);
    expect(bodies(await receive('g'))).toEqual(['a1']);
    // Only a2's lease is left to wait for... and a1's new one.
    expect(await indexKey('g', 'A')).toBe(readyAtKey(h.clock.now() + 30_000));
    await h.queue.changeVisibility('g', a2!.receiptHandle, 0);
    expect(await indexKey('g', 'A')).toBe(readyNowKey(shard('A')));
    expect(bodies(await receive('g'))).toEqual(['a2']);
  });

  it('retry back-off: a lease is indexed at its expiry plus the delay; a release lowers the entry to the delay’s end, not to now', async () => {
    await group('g', ['ledger'], 'concurrent', 4);
    await h.queue.sendBatch('ledger', ['a1', 'a2'].map((b) => send(b, { shardKey: 'A' })));
    const [a1, a2] = await receive('g');
    const t0 = h.clock.now();
    expect(await indexKey('g', 'A')).toBe(readyAtKey(t0 + 30_000 + 4_000));
    await h.queue.changeVisibility('g', a1!.receiptHandle, 0);
    expect(await indexKey('g', 'A')).toBe(readyAtKey(t0 + 4_000));
    h.clock.advance(3_999);
    expect(await receive('g')).toEqual([]);
    h.clock.advance(1);
    const [again] = await receive('g');
    expect(again).toMatchObject({ body: 'a1', deliveryCount: 2 });
    // a1's new lease: 30 s + 8 s (its second delivery); a2's: 30 s + 4 s from t0 — the earlier one.
    expect(await indexKey('g', 'A')).toBe(readyAtKey(t0 + 34_000));
    await commit('g', again!.receiptHandle, a2!.receiptHandle);
    expect(await indexed('g')).toEqual([]);
  });

  it('serves every ready shard, not only the first page of the index', async () => {
    await group('g', ['ledger'], 'concurrent');
    const keys = Array.from({ length: 30 }, (_, i) => `S${i}`);
    await h.queue.sendBatch('ledger', keys.flatMap((k) => ['1', '2', '3', '4'].map((n) => send(`${k}-${n}`, { shardKey: k }))));
    const served = new Set<string>();
    for (let i = 0; i < 60; i++) for (const m of await receive('g', 1)) served.add(String(m.shardKey));
    // 20 ready entries per page: a fixed first page would serve at most 20 shards.
    expect(served.size).toBeGreaterThan(20);
  });
});
