/**
 * The FIFO ready index without a hot partition key (issue 19, docs/design.md, Ready index): a wide
 * FIFO topic's shard cursors (more than 4 notice streams) are indexed under one of their group's B
 * buckets (16; 64 for 256 notice streams), `R#<group>#<fnv1a(stream) % B>` (their `rk`), not under
 * the group's one key; a receive that asks for a wide topic reads 2 random buckets, then the others
 * when they offer too few shards (a short receive of more than 16 buckets: 14 of them, in rotation),
 * so an expired lease is found by the next receive (of 16 buckets; by a long poll's next look, or
 * within 5 short receives, of 64). Cursors of earlier versions (no `rk`) keep the home key; a notice raise puts
 * a shard under its bucket. A default topic's receive makes one ready-index Query, as before.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { newHarness, send, type Harness } from '../helpers/stores.js';
import * as build from '../helpers/builders.js';
import { GSI1 } from '../../lib/adapters/dynamodb/table.js';
import { FIRST_WAVE_BUCKETS, SECOND_WAVE_SAMPLE } from '../../lib/adapters/dynamodb/ready-index.js';
import { whileAdvancing } from '../helpers/advancing.js';
import { cryptoRandom } from '../../lib/ports/random.js';
import { readyBucketCount, readyBucketPk, readyBucketPks, readyIndexPk, readyNowKey } from '../../lib/adapters/dynamodb/keys.js';
import type { DeliveredMessage, DeliveryMode } from '../../lib/domain/model.js';

let h: Harness;
/** The partition key of every ready-index Query sent since the last `take()`, per receive. */
let readyQueries: string[] = [];
/** The `Limit` of each of those Queries, by partition key. */
let readyLimits = new Map<string, number>();

beforeEach(async () => {
  h = await newHarness();
  readyQueries = [];
  readyLimits = new Map();
  h.doc.middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as { IndexName?: string; Limit?: number; ExpressionAttributeValues?: Record<string, unknown> };
      const pk = String(input.ExpressionAttributeValues?.[':pk'] ?? '');
      if (context.commandName === 'QueryCommand' && input.IndexName === GSI1 && pk.startsWith('R#')) {
        readyQueries.push(pk);
        readyLimits.set(pk, input.Limit ?? 0);
      }
      return next(args);
    },
    { step: 'initialize', name: 'countReadyQueries' },
  );
});

const WIDE = 16;
/** A 16-stream topic's buckets: 16 (keys.ts `readyBucketCount`). */
const BUCKETS = readyBucketCount(WIDE);
const wideTopic = () => h.admin.putTopic('wide', build.topic({ type: 'fifo', partitions: WIDE }));
const group = (topics: string[], mode: DeliveryMode = 'concurrent') =>
  h.admin.putGroup('g', build.group(topics, { deliveryMode: mode, visibilityTimeoutSeconds: 30, retryPolicy: { initialSeconds: 0 } }));
const receive = (max: number) => h.queue.receive('g', { maxMessages: max, waitSeconds: 0, topics: undefined });
const commit = (ms: DeliveredMessage[]) => (ms.length ? h.queue.commit('g', ms.map((m) => m.receiptHandle)) : Promise.resolve([]));
const shard = (key: string, t = 'wide') => `t:${t}/k:${key}`;
const bucketOf = (key: string, t = 'wide', buckets = BUCKETS) => readyBucketPk('g', shard(key, t), buckets);

/** 3 ready shard cursors under each of the 16 buckets, as claims and raises leave them (pk C#g, the bucket as g1pk). */
async function threeReadyPerBucket(): Promise<void> {
  const streams: string[] = [];
  for (let n = 0; streams.length < 3 * BUCKETS; n++) {
    const stream = shard(`k${n}`);
    if (streams.filter((s) => readyBucketPk('g', s, BUCKETS) === readyBucketPk('g', stream, BUCKETS)).length < 3) streams.push(stream);
  }
  for (const stream of streams) {
    await h.doc.send(new UpdateCommand({ TableName: h.table, Key: { pk: 'C#g', sk: stream }, UpdateExpression: 'SET g1pk = :pk, g1sk = :sk', ExpressionAttributeValues: { ':pk': readyBucketPk('g', stream, BUCKETS), ':sk': readyNowKey(stream) } }));
  }
}

/** Receives (`max` a call, committing nothing) until `count` messages came, within 20 receives. */
async function receiveUntil(count: number, max: number): Promise<DeliveredMessage[]> {
  const got: DeliveredMessage[] = [];
  for (let looks = 0; looks < 20 && got.length < count; looks++) got.push(...(await receive(max)));
  return got;
}

/** The group's shard cursors as stored: stream → `g1pk`, `g1sk`, `rk`. */
async function shardCursors(): Promise<Map<string, { g1pk?: string; g1sk?: string; rk?: string }>> {
  const { Items } = await h.doc.send(
    new QueryCommand({ TableName: h.table, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': 'C#g' }, ConsistentRead: true }),
  );
  return new Map((Items ?? []).filter((i) => String(i.sk).includes('/k:')).map((i) => [String(i.sk), { g1pk: i.g1pk, g1sk: i.g1sk, rk: i.rk }]));
}

/** Every indexed shard cursor of the wide topic is under its own bucket, and carries it as `rk`. */
async function expectBucketed(): Promise<number> {
  let indexed = 0;
  for (const [stream, item] of await shardCursors()) {
    const key = stream.slice(stream.indexOf('/k:') + 3);
    expect(item.rk, stream).toBe(bucketOf(key));
    if (item.g1sk !== undefined) {
      indexed++;
      expect(item.g1pk, stream).toBe(item.rk);
    }
  }
  return indexed;
}

describe('the ready index of a wide FIFO topic', () => {
  it('keeps each shard under its bucket through claims, commits and raises; shards with work left are found again there', async () => {
    await wideTopic();
    await group(['wide']);
    const keys = Array.from({ length: 8 }, (_, i) => `s${i}`);
    const PER = 3;
    // Sent in one batch: every shard's notice is read by the first receives, the rest of the work is found through the index.
    await h.queue.sendBatch('wide', keys.flatMap((key) => Array.from({ length: PER }, (_, n) => send(`${key}-${n}`, { shardKey: key }))));
    const committed = new Map<string, string[]>();
    let looks = 0;
    let indexedSeen = 0;
    while ([...committed.values()].flat().length < keys.length * PER && looks < 200) {
      looks++;
      // One message a receive: the shard it claims from keeps work after the claim (ready now).
      const got = await receive(1);
      indexedSeen = Math.max(indexedSeen, await expectBucketed());
      await commit(got);
      for (const m of got) committed.set(m.shardKey!, [...(committed.get(m.shardKey!) ?? []), m.body]);
    }
    for (const key of keys) expect(committed.get(key), key).toEqual(Array.from({ length: PER }, (_, n) => `${key}-${n}`));
    expect(indexedSeen).toBeGreaterThan(1);
    await expectBucketed();
    // Nothing under the home key, every entry gone once drained.
    expect(await h.stores.readyIndex.ready('g', h.clock.now() + 3_600_000, 100)).toEqual([]);
    for (const item of (await shardCursors()).values()) expect(item.g1sk).toBeUndefined();

    // A later notice raises a drained shard back onto its bucket (the raise's own write).
    await h.queue.send('wide', send('s0-3', { shardKey: 's0' }));
    // (Its notice is read when its stream is sampled: 8 of 16 a receive.)
    const again = await receiveUntil(1, 10);
    expect(again.map((m) => m.body)).toEqual(['s0-3']);
    await expectBucketed();
  });

  it('a shard whose lease expired is found again through its bucket by the next receive, redelivered in order', async () => {
    await wideTopic();
    await group(['wide'], 'serialized');
    const keys = ['a', 'b', 'c', 'd', 'e', 'f'];
    await h.queue.sendBatch('wide', keys.flatMap((key) => [send(`${key}-0`, { shardKey: key }), send(`${key}-1`, { shardKey: key })]));
    // Leased, never committed: each shard waits on its lease's expiry, indexed at that time in its bucket.
    // (A receive reads 8 of the 16 notice streams: a few receives hear of every shard.)
    const first = await receiveUntil(keys.length, 100);
    expect(first.map((m) => m.body).sort()).toEqual(keys.map((k) => `${k}-0`));
    const cursors = await shardCursors();
    for (const key of keys) {
      expect(cursors.get(shard(key))).toMatchObject({ g1pk: bucketOf(key), rk: bucketOf(key) });
      expect(cursors.get(shard(key))?.g1sk).not.toMatch(/^#/);
    }
    expect(await receive(100)).toEqual([]);
    h.clock.advance(31_000);
    // The first receive after the expiry reads every bucket: all six leases come back at once.
    const redelivered = await receive(100);
    expect(redelivered.map((m) => m.body).sort()).toEqual(keys.map((k) => `${k}-0`));
    expect(redelivered.every((m) => m.deliveryCount === 2)).toBe(true);
    await commit(redelivered);
    const byShard = new Map<string, DeliveredMessage[]>(keys.map((key) => [key, redelivered.filter((m) => m.shardKey === key)]));
    for (let looks = 0; looks < 40 && [...byShard.values()].flat().length < keys.length * 2; looks++) {
      const got = await receive(100);
      for (const m of got) byShard.set(m.shardKey!, [...(byShard.get(m.shardKey!) ?? []), m]);
      await commit(got);
    }
    for (const key of keys) {
      const got = byShard.get(key) ?? [];
      expect(got.map((m) => m.body), key).toEqual([`${key}-0`, `${key}-1`]);
      expect(got[0]?.deliveryCount, key).toBe(2);
    }
    await expectBucketed();
  });

  it('a backlog without new notices is served every receive, through its bucket', async () => {
    await wideTopic();
    await group(['wide']);
    const N = 6;
    await h.queue.sendBatch('wide', Array.from({ length: N }, (_, n) => send(`b${n}`, { shardKey: 'b' })));
    // The notice is read when its stream is sampled (a few receives at most); its claim takes b0.
    const [b0] = await receiveUntil(1, 1);
    expect(b0?.body).toBe('b0');
    await commit([b0!]);
    // From then on no notice: the shard is found only through its bucket, which every receive reads.
    for (let n = 1; n < N; n++) {
      h.clock.advance(4_000);
      const got = await receive(1);
      expect(got.map((m) => m.body), `receive ${n}`).toEqual([`b${n}`]);
      await commit(got);
    }
  });

  it('deleting the group takes its shards off every bucket', async () => {
    await wideTopic();
    await group(['wide']);
    const keys = ['a', 'b', 'c', 'd'];
    await h.queue.sendBatch('wide', keys.flatMap((key) => [send(`${key}-0`, { shardKey: key }), send(`${key}-1`, { shardKey: key })]));
    // Every message leased, none committed: each shard waits on its leases, indexed in its bucket.
    expect(await receiveUntil(keys.length * 2, 100)).toHaveLength(keys.length * 2);
    const everyBucket = async () => {
      const all = await Promise.all(
        readyBucketPks('g', BUCKETS).map((pk) =>
          h.doc.send(new QueryCommand({ TableName: h.table, IndexName: GSI1, KeyConditionExpression: 'g1pk = :pk', ExpressionAttributeValues: { ':pk': pk } })),
        ),
      );
      return all.flatMap((r) => (r.Items ?? []).map((i) => String(i.sk)));
    };
    expect((await everyBucket()).sort()).toEqual(keys.map((k) => shard(k)));
    await h.admin.deleteGroup('g');
    expect(await everyBucket()).toEqual([]);
    expect(await h.stores.readyIndex.ready('g', h.clock.now() + 3_600_000, 100)).toEqual([]);
  });

  it('with nothing ready, queries the home key and the 16 buckets a receive, each once, in two waves, with a default topic beside it too', async () => {
    await wideTopic();
    await h.admin.putTopic('ledger', build.topic({ type: 'fifo' }));
    await group(['wide', 'ledger']);
    const firsts = new Set<string>();
    for (let i = 0; i < 4; i++) {
      readyQueries = [];
      await receive(10);
      expect(readyQueries[0]).toBe(readyIndexPk('g'));
      expect(readyQueries.slice(1).sort()).toEqual([...readyBucketPks('g', BUCKETS)].sort());
      // 10 messages: 40 shards looked for under the home key; ⌈2 × 40 ÷ 2⌉ = 40 under each of the first
      // wave's 2 random buckets; they offer none, so ⌈2 × 40 ÷ 14⌉ = 6 under each of the other 14 —
      // each Query asking one more (a key holding exactly that many is read once: readyUnder).
      expect(readyLimits.get(readyIndexPk('g'))).toBe(41);
      const first = readyQueries.slice(1, 1 + FIRST_WAVE_BUCKETS);
      for (const pk of first) expect(readyLimits.get(pk), pk).toBe(41);
      for (const pk of readyQueries.slice(1 + FIRST_WAVE_BUCKETS)) expect(readyLimits.get(pk), pk).toBe(7);
      first.forEach((pk) => firsts.add(pk));
    }
    // The first wave's buckets are drawn at random.
    expect(firsts.size).toBeGreaterThan(FIRST_WAVE_BUCKETS);
  });

  it('with a backlog, reads the home key and only the first wave\'s 2 buckets when they offer enough shards', async () => {
    await threeReadyPerBucket();
    readyQueries = [];
    const found = await h.stores.readyIndex.readyAcross('g', readyBucketPks('g', BUCKETS), h.clock.now(), 4);
    // ⌈2 × 4 ÷ 2⌉ = 4 under each of 2 buckets that hold 3 each: 6 ≥ 4, no second wave.
    expect(readyQueries).toHaveLength(1 + FIRST_WAVE_BUCKETS);
    expect(found).toHaveLength(2 * 3);
    // Asking for more than the first wave holds reads the other 14 buckets too, ⌈2 × 1 ÷ 14⌉ = 1 each
    // (a second page each: they hold more than that, and the read spreads).
    readyQueries = [];
    expect(await h.stores.readyIndex.readyAcross('g', readyBucketPks('g', BUCKETS), h.clock.now(), 7)).toHaveLength(2 * 3 + 14 * 1);
    expect(readyQueries).toHaveLength(1 + FIRST_WAVE_BUCKETS + 2 * (BUCKETS - FIRST_WAVE_BUCKETS));
    expect(new Set(readyQueries).size).toBe(1 + BUCKETS);
  });

  it('a default topic beside a busy wide one is served from the home key; a receive for the default topic alone reads that one key', async () => {
    await wideTopic();
    await h.admin.putTopic('ledger', build.topic({ type: 'fifo' }));
    // Serialized: one lease a shard, so each claim takes one message and the shard's second waits.
    await group(['wide', 'ledger'], 'serialized');
    // 40 shards with work in each topic, all known to the index (the first receives read every notice).
    const keys = Array.from({ length: 40 }, (_, i) => `k${i}`);
    for (const t of ['wide', 'ledger']) await h.queue.sendBatch(t, keys.slice(0, 20).flatMap((key) => [send(`${t}-${key}-0`, { shardKey: key }), send(`${t}-${key}-1`, { shardKey: key })]));
    for (const t of ['wide', 'ledger']) await h.queue.sendBatch(t, keys.slice(20).flatMap((key) => [send(`${t}-${key}-0`, { shardKey: key }), send(`${t}-${key}-1`, { shardKey: key })]));
    // One message a shard, until every shard was heard of: exactly the 80 first messages.
    const first = await receiveUntil(80, 10);
    expect(first.map((m) => m.body).sort()).toEqual(['wide', 'ledger'].flatMap((t) => keys.map((key) => `${t}-${key}-0`)).sort());
    await commit(first);
    // Now 80 ready shards, 40 a topic, each with one message: both topics are served.
    readyQueries = [];
    const got = await receive(10);
    // The home key and the 16 buckets, each read once: the home key holds exactly the 40 looked for
    // (asked for 41, it answers 40: no spread read; readyUnder).
    expect(new Set(readyQueries).size).toBe(17);
    expect(readyQueries.filter((pk) => pk === readyIndexPk('g'))).toHaveLength(1);
    expect(got).toHaveLength(10);
    // Two receives take 20 of the 80 shards, in random order: all 20 from one topic has a chance of
    // 2 × C(40, 20) ÷ C(80, 20) ≈ 1e-7 (one receive's 10: ≈ 1e-3).
    got.push(...(await receive(10)));
    expect(got).toHaveLength(20);
    const ledger = got.filter((m) => m.topic === 'ledger').length;
    expect(ledger).toBeGreaterThanOrEqual(1);
    expect(ledger).toBeLessThan(20);
    // A receive asking for the default topic alone reads its one key.
    readyQueries = [];
    await h.queue.receive('g', { maxMessages: 10, waitSeconds: 0, topics: ['ledger'] });
    expect(readyQueries).toEqual([readyIndexPk('g')]);
  });

  it('a cursor of an earlier version (no rk, under R#<group>) is found through the home key by long polls and keeps it; a new notice moves it to its bucket', async () => {
    // A group of wide topics only: its short receives read the home key 1 time in 8, its long polls' looks always.
    const poll = (max: number) => whileAdvancing(h.clock, () => h.queue.receive('g', { maxMessages: max, waitSeconds: 1, topics: undefined }));
    await wideTopic();
    await group(['wide']);
    await h.queue.sendBatch('wide', ['a0', 'a1', 'a2', 'a3'].map((b) => send(b, { shardKey: 'a' })));
    const [a0] = await receiveUntil(1, 1);
    expect(a0?.body).toBe('a0');
    // As an earlier version wrote it: the home key, no rk.
    await h.doc.send(
      new UpdateCommand({ TableName: h.table, Key: { pk: 'C#g', sk: shard('a') }, UpdateExpression: 'SET g1pk = :home REMOVE rk', ExpressionAttributeValues: { ':home': 'R#g' } }),
    );
    expect(await h.stores.readyIndex.ready('g', h.clock.now(), 100)).toEqual([shard('a')]);
    const bodies = [a0!.body];
    await commit([a0!]);
    const homed = async () => {
      const item = (await shardCursors()).get(shard('a'));
      expect(item?.rk).toBeUndefined();
      if (item?.g1sk !== undefined) expect(item.g1pk).toBe('R#g');
      return item;
    };
    for (let looks = 0; looks < 10 && bodies.length < 3; looks++) {
      const got = await poll(1);
      bodies.push(...got.map((m) => m.body));
      // Claims (work left, then a lease to wait on) and commits keep the home key.
      await homed();
      await commit(got);
      await homed();
    }
    expect(bodies).toEqual(['a0', 'a1', 'a2']);
    // A lease that expires under the home key is found there too.
    const [a3] = await poll(1);
    expect(a3?.body).toBe('a3');
    expect((await homed())?.g1sk).toMatch(/^\d{13}$/);
    h.clock.advance(31_000);
    const [again] = await poll(1);
    expect(again).toMatchObject({ body: 'a3', deliveryCount: 2 });
    await commit([again!]);
    await homed();

    await h.queue.send('wide', send('a4', { shardKey: 'a' }));
    await h.doc.send(
      new UpdateCommand({ TableName: h.table, Key: { pk: 'C#g', sk: shard('a') }, UpdateExpression: 'SET g1pk = :home REMOVE rk', ExpressionAttributeValues: { ':home': 'R#g' } }),
    );
    // The raise of a4's notice puts it under its bucket.
    const raised = await receiveUntil(1, 1);
    expect(raised.map((m) => m.body)).toEqual(['a4']);
    expect((await shardCursors()).get(shard('a'))).toMatchObject({ rk: bucketOf('a'), g1pk: bucketOf('a') });
  });

  it('shards under a bucket their topic no longer has (created again with 4 notice streams) go back to the home key at their next notice', async () => {
    await h.admin.putTopic('ledger', build.topic({ type: 'fifo' }));
    await group(['ledger']);
    await h.queue.sendBatch('ledger', [send('x0', { shardKey: 'x' }), send('y0', { shardKey: 'y' })]);
    await commit(await receive(10));
    // The cursors as the 16-stream topic of that name left them: rk a bucket the 4-stream topic's receives do not read.
    const stale = 'R#g#9';
    for (const key of ['x', 'y']) {
      await h.doc.send(
        new UpdateCommand({
          TableName: h.table,
          Key: { pk: 'C#g', sk: shard(key, 'ledger') },
          UpdateExpression: 'SET rk = :b, g1pk = :b, g1sk = :now',
          ExpressionAttributeValues: { ':b': stale, ':now': readyNowKey(shard(key, 'ledger')) },
        }),
      );
    }
    await h.queue.sendBatch('ledger', ['x1', 'x2', 'y1', 'y2'].map((b) => send(b, { shardKey: b.slice(0, 1) })));
    // One message: one shard's claim takes its raise (and moves it home); the other is raised on its own.
    const [first] = await receive(1);
    expect(['x1', 'y1']).toContain(first?.body);
    for (const key of ['x', 'y']) {
      const item = (await shardCursors()).get(shard(key, 'ledger'));
      expect(item?.rk, key).toBeUndefined();
      expect(item?.g1pk, key).toBe('R#g');
    }
    const rest: string[] = [];
    for (let looks = 0; looks < 6 && rest.length < 3; looks++) {
      const got = await receive(1);
      rest.push(...got.map((m) => m.body));
      await commit(got);
    }
    expect([first!.body, ...rest].sort()).toEqual(['x1', 'x2', 'y1', 'y2']);
  });
});

describe('the ready index of a 256-stream FIFO topic', () => {
  const HUGE = 256;
  const HUGE_BUCKETS = readyBucketCount(HUGE);
  /** Receives (`max` a call, committing nothing) until `count` messages came: a receive samples 8 of the 256 notice streams. */
  async function receiveAll(count: number, max: number): Promise<DeliveredMessage[]> {
    const got: DeliveredMessage[] = [];
    for (let looks = 0; looks < 120 && got.length < count; looks++) got.push(...(await receive(max)));
    return got;
  }
  const longPoll = (max: number) => whileAdvancing(h.clock, () => h.queue.receive('g', { maxMessages: max, waitSeconds: 1, topics: undefined }));

  it('spreads its shards over 64 buckets; a long poll reads all 65 keys and finds expired leases above bucket 15 at once; a cursor keyed by 16 buckets moves at its next notice', async () => {
    expect(HUGE_BUCKETS).toBe(64);
    await h.admin.putTopic('huge', build.topic({ type: 'fifo', partitions: HUGE }));
    await group(['huge'], 'serialized');
    // Shard keys whose 64-bucket key is not one a 16-bucket topic has.
    const keys: string[] = [];
    for (let n = 0; keys.length < 4; n++) if (Number(bucketOf(`h${n}`, 'huge', HUGE_BUCKETS).split('#')[2]) >= 16) keys.push(`h${n}`);
    await h.queue.sendBatch('huge', keys.flatMap((key) => [send(`${key}-0`, { shardKey: key }), send(`${key}-1`, { shardKey: key })]));
    const first = await receiveAll(keys.length, 100);
    expect(first.map((m) => m.body).sort()).toEqual(keys.map((k) => `${k}-0`));
    const cursors = await shardCursors();
    for (const key of keys) {
      expect(cursors.get(shard(key, 'huge')), key).toMatchObject({ rk: bucketOf(key, 'huge', HUGE_BUCKETS), g1pk: bucketOf(key, 'huge', HUGE_BUCKETS) });
      expect(cursors.get(shard(key, 'huge'))?.g1sk, key).toMatch(/^\d{13}$/);
    }
    // Nothing ready: a long poll's look reads the home key and all 64 buckets, each once.
    readyQueries = [];
    expect(await longPoll(100)).toEqual([]);
    const perLook = new Map<string, number>();
    for (const pk of readyQueries) perLook.set(pk, (perLook.get(pk) ?? 0) + 1);
    expect([...perLook.keys()].sort()).toEqual([readyIndexPk('g'), ...readyBucketPks('g', HUGE_BUCKETS)].sort());
    // The leases expire: a long poll's first look finds every one of them, in order.
    h.clock.advance(31_000);
    readyQueries = [];
    const redelivered = await longPoll(100);
    expect(redelivered.map((m) => m.body).sort()).toEqual(keys.map((k) => `${k}-0`));
    expect(redelivered.every((m) => m.deliveryCount === 2)).toBe(true);
    await commit(redelivered);
    const seconds = await receiveAll(keys.length, 100);
    expect(seconds.map((m) => m.body).sort()).toEqual(keys.map((k) => `${k}-1`));
    await commit(seconds);

    // A cursor as the 16-bucket version left it: its next notice moves it to its 64-bucket key.
    const [key] = keys;
    const old = readyBucketPk('g', shard(key!, 'huge'), 16);
    await h.doc.send(new UpdateCommand({ TableName: h.table, Key: { pk: 'C#g', sk: shard(key!, 'huge') }, UpdateExpression: 'SET rk = :b', ExpressionAttributeValues: { ':b': old } }));
    await h.queue.send('huge', send(`${key}-2`, { shardKey: key }));
    const [leased] = await receiveAll(1, 1);
    expect(leased?.body).toBe(`${key}-2`);
    expect((await shardCursors()).get(shard(key!, 'huge'))).toMatchObject({ rk: bucketOf(key!, 'huge', HUGE_BUCKETS), g1pk: bucketOf(key!, 'huge', HUGE_BUCKETS) });
  });

  it('short receives read at most 17 keys each, and every bucket within 5 of them; expired leases above bucket 15 come back within 5', async () => {
    await h.admin.putTopic('huge', build.topic({ type: 'fifo', partitions: HUGE }));
    await group(['huge'], 'serialized');
    const keys: string[] = [];
    for (let n = 0; keys.length < 6; n++) if (Number(bucketOf(`s${n}`, 'huge', HUGE_BUCKETS).split('#')[2]) >= 16) keys.push(`s${n}`);
    await h.queue.sendBatch('huge', keys.map((key) => send(`${key}-0`, { shardKey: key })));
    expect((await receiveAll(keys.length, 100)).map((m) => m.body).sort()).toEqual(keys.map((k) => `${k}-0`));
    h.clock.advance(31_000);
    const seen = new Set<string>();
    const back: DeliveredMessage[] = [];
    for (let n = 0; n < 5; n++) {
      readyQueries = [];
      back.push(...(await receive(100)));
      expect(new Set(readyQueries).size, `receive ${n}`).toBe(readyQueries.length);
      expect(readyQueries.length, `receive ${n}`).toBeLessThanOrEqual(1 + FIRST_WAVE_BUCKETS + SECOND_WAVE_SAMPLE);
      readyQueries.forEach((pk) => seen.add(pk));
    }
    expect(back.map((m) => m.body).sort()).toEqual(keys.map((k) => `${k}-0`));
    expect(back.every((m) => m.deliveryCount === 2)).toBe(true);
    // Five short receives with nothing left to find read every bucket (the rotation: 5 × 14 ≥ 64).
    seen.clear();
    for (let n = 0; n < 5; n++) {
      readyQueries = [];
      expect(await receive(100)).toEqual([]);
      readyQueries.forEach((pk) => seen.add(pk));
    }
    for (const pk of readyBucketPks('g', HUGE_BUCKETS)) expect(seen.has(pk), pk).toBe(true);
  });
});

describe('the rotation of sampled second waves', () => {
  const sampled = (buckets: number) => h.stores.readyIndex.readyAcross('g', readyBucketPks('g', buckets), h.clock.now(), 20, { homeFirst: false, sample: true });
  it('covers every bucket within 5 sampled reads of 64 buckets, though reads of 20 buckets of the same group come between', async () => {
    // A group with a 256-stream and an 80-stream topic: receives narrowed to one or the other read 64 or 20 buckets.
    await sampled(64);
    await sampled(20);
    const seen = new Set<string>();
    for (let n = 0; n < 5; n++) {
      readyQueries = [];
      await sampled(64);
      readyQueries.forEach((pk) => seen.add(pk));
      await sampled(20);
    }
    expect(readyBucketPks('g', 64).filter((pk) => !seen.has(pk))).toEqual([]);
  });

  it('counts only the shards the receive can claim as the first wave\'s offer', async () => {
    // 3 ready shards of another topic under each bucket: the first wave offers 6, none wanted.
    await threeReadyPerBucket();
    readyQueries = [];
    await h.stores.readyIndex.readyAcross('g', readyBucketPks('g', BUCKETS), h.clock.now(), 4, { wanted: (stream) => stream.startsWith('t:other/') });
    expect(new Set(readyQueries).size).toBe(1 + BUCKETS);
  });
});

describe('the home key of a receive of wide topics only', () => {
  it('is read with the second wave only (when nothing ready), never with a backlog in the first wave\'s buckets', async () => {
    await threeReadyPerBucket();
    // A cursor of an earlier version under the home key.
    await h.doc.send(new UpdateCommand({ TableName: h.table, Key: { pk: 'C#g', sk: shard('old') }, UpdateExpression: 'SET g1pk = :pk, g1sk = :sk', ExpressionAttributeValues: { ':pk': readyIndexPk('g'), ':sk': readyNowKey(shard('old')) } }));
    readyQueries = [];
    const enough = await h.stores.readyIndex.readyAcross('g', readyBucketPks('g', BUCKETS), h.clock.now(), 4, { homeFirst: false });
    expect(readyQueries).toHaveLength(FIRST_WAVE_BUCKETS);
    expect(readyQueries).not.toContain(readyIndexPk('g'));
    expect(enough).toHaveLength(2 * 3);
    readyQueries = [];
    const more = await h.stores.readyIndex.readyAcross('g', readyBucketPks('g', BUCKETS), h.clock.now(), 7, { homeFirst: false });
    expect(readyQueries.slice(FIRST_WAVE_BUCKETS)).toContain(readyIndexPk('g'));
    expect(new Set(readyQueries).size).toBe(1 + BUCKETS);
    expect(more).toContain(shard('old'));
    // A short receive's second wave is a sample: without the home key.
    readyQueries = [];
    const sampled = await h.stores.readyIndex.readyAcross('g', readyBucketPks('g', BUCKETS), h.clock.now(), 7, { homeFirst: false, sample: true });
    expect(readyQueries).not.toContain(readyIndexPk('g'));
    expect(sampled).not.toContain(shard('old'));
  });

  it('is not read by every receive: a wide-only group reads it with the first wave 1 time in 8, else with a long poll\'s second wave only', async () => {
    // A fixed draw of 0.5 (≥ 1/8): the home key waits for a second wave; nothing is ready, so it comes.
    h = await newHarness({ random: { ...cryptoRandom, fraction: () => 0.5 } });
    h.doc.middlewareStack.add(
      (next, context) => async (args) => {
        const input = args.input as { IndexName?: string; ExpressionAttributeValues?: Record<string, unknown> };
        const pk = String(input.ExpressionAttributeValues?.[':pk'] ?? '');
        if (context.commandName === 'QueryCommand' && input.IndexName === GSI1 && pk.startsWith('R#')) readyQueries.push(pk);
        return next(args);
      },
      { step: 'initialize', name: 'countReadyQueries' },
    );
    await wideTopic();
    await group(['wide']);
    // A long poll's look: home last, with the second wave (nothing is ready: it comes), not the first.
    readyQueries = [];
    await whileAdvancing(h.clock, () => h.queue.receive('g', { maxMessages: 1, waitSeconds: 1, topics: undefined }));
    expect(readyQueries.slice(0, FIRST_WAVE_BUCKETS)).not.toContain(readyIndexPk('g'));
    expect(readyQueries).toContain(readyIndexPk('g'));
    // A short receive: not at all.
    readyQueries = [];
    await receive(1);
    expect(readyQueries).not.toContain(readyIndexPk('g'));
    // A group with a default topic too reads it first, whatever the draw.
    await h.admin.putTopic('ledger', build.topic({ type: 'fifo' }));
    await group(['wide', 'ledger']);
    readyQueries = [];
    await receive(1);
    expect(readyQueries[0]).toBe(readyIndexPk('g'));
  });
});

describe('the ready index of a default FIFO topic', () => {
  it('is read with exactly one Query a receive, under R#<group>, and its cursors carry no rk', async () => {
    await h.admin.putTopic('ledger', build.topic({ type: 'fifo' }));
    await group(['ledger']);
    await h.queue.sendBatch('ledger', ['a', 'b', 'c'].flatMap((key) => [send(`${key}0`, { shardKey: key }), send(`${key}1`, { shardKey: key })]));
    let delivered = 0;
    for (let i = 0; i < 8; i++) {
      readyQueries = [];
      const got = await receive(1);
      delivered += got.length;
      expect(readyQueries).toEqual([readyIndexPk('g')]);
      await commit(got);
    }
    expect(delivered).toBe(6);
    for (const item of (await shardCursors()).values()) expect(item.rk).toBeUndefined();
  });
});
