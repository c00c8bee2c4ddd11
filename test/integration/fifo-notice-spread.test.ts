/**
 * Notices go to any notice stream (issue 19, docs/design.md, FIFO, "Notices go to any notice stream"):
 * a send's notices, whatever their shard keys, are one segment on the notice stream its container
 * picked — sticky, and moved at once after a lost race, as a standard topic's partitions. So a shard
 * is announced on several notice streams, read in any order: a receive raises it once, however many
 * announced it, and a group's new shard cursor starts at the shard's first message after the group
 * was created however far below the notice read first it is.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { DeleteCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { DeliveryMode } from '../../lib/domain/model.js';
import { NOTICE_BUCKETS, noticeStream } from '../../lib/domain/streams.js';
import { countWrites } from '../helpers/index-units.js';
import { harness, newHarness, send, type Harness } from '../helpers/stores.js';
import { NOTICE_SHARDS_PER_RECEIVE } from '../../lib/services/receiver.js';
import * as build from '../helpers/builders.js';

let h: Harness;

beforeEach(async () => {
  h = await newHarness();
});

const subscribe = (g: string, topic: string, mode: DeliveryMode = 'concurrent') =>
  h.admin.putGroup(g, build.group([{ topic, tags: undefined, startFrom: 'latest' }], { deliveryMode: mode, visibilityTimeoutSeconds: 30 }));

/** The last sequence number of each notice stream of `t:<topic>` (0: none). */
const noticeHeads = (topic: string, count: number) =>
  Promise.all(
    Array.from({ length: count }, async (_, b) => {
      const head = await h.stores.log.head(noticeStream(`t:${topic}`, b));
      return head.kind === 'segment' ? head.seq + head.count - 1 : 0;
    }),
  );

/** Deletes every notice segment of `t:<topic>`: as if they were on notice streams the group has not read yet. */
async function hideNotices(topic: string, count: number): Promise<number> {
  let hidden = 0;
  for (let b = 0; b < count; b++) {
    const pk = `S#${noticeStream(`t:${topic}`, b)}`;
    const { Items = [] } = await h.doc.send(new QueryCommand({ TableName: h.table, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': pk }, ConsistentRead: true }));
    for (const item of Items) {
      if (item.sk === '#') continue;
      await h.doc.send(new DeleteCommand({ TableName: h.table, Key: { pk: item.pk, sk: item.sk } }));
      hidden++;
    }
  }
  return hidden;
}

/** Receives (up to 100) and commits through `queue` until `count` arrived or a receive brings nothing; bodies in delivery order. */
async function drain(queue: Harness['queue'], g: string, count: number): Promise<string[]> {
  const out: string[] = [];
  for (let round = 0; round < 40 && out.length < count; round++) {
    const got = await queue.receive(g, { maxMessages: 100, waitSeconds: 0 });
    if (got.length === 0) break;
    out.push(...got.map((m) => m.body));
    expect((await queue.commit(g, got.map((m) => m.receiptHandle))).every((r) => 'status' in r && r.status === 'committed')).toBe(true);
  }
  return out;
}

describe('notices go to any notice stream', () => {
  it('a container sticks to the notice stream it picked; a lost race there moves its notices to another one, which it then sticks to', async () => {
    await h.admin.putTopic('ledger', build.topic({ type: 'fifo' }));
    await h.queue.send('ledger', send('a', { shardKey: 'A' }));
    const first = (await noticeHeads('ledger', NOTICE_BUCKETS)).findIndex((n) => n === 1);
    expect(first).toBeGreaterThanOrEqual(0);
    await h.queue.send('ledger', send('b', { shardKey: 'B' }));
    expect(await noticeHeads('ledger', NOTICE_BUCKETS)).toEqual(Array.from({ length: NOTICE_BUCKETS }, (_, b) => (b === first ? 2 : 0)));
    // Another container (its own stream log, hints and picker, on the same table) announces on that
    // stream: this one's head hint there is stale now.
    for (let i = 0; ; i++) {
      await harness(h.doc, h.table, { clock: h.clock }).queue.send('ledger', send(`other-${i}`, { shardKey: 'C' }));
      if ((await noticeHeads('ledger', NOTICE_BUCKETS))[first] === 3) break;
      expect(i).toBeLessThan(50);
    }
    const before = await noticeHeads('ledger', NOTICE_BUCKETS);
    await h.queue.send('ledger', send('c', { shardKey: 'A' }));
    const after = await noticeHeads('ledger', NOTICE_BUCKETS);
    // The notice did not retry the stream where it lost: it went to another one.
    expect(after[first]).toBe(before[first]);
    const moved = after.findIndex((n, b) => n !== before[b]);
    expect(moved).not.toBe(first);
    await h.queue.send('ledger', send('d', { shardKey: 'B' }));
    expect((await noticeHeads('ledger', NOTICE_BUCKETS))[moved]).toBe(after[moved]! + 1);
  });

  it('a shard announced on several notice streams, by several containers, is delivered once, in order, to consumers in two containers', async () => {
    await h.admin.putTopic('wide', build.topic({ type: 'fifo', partitions: 16 }));
    await subscribe('g', 'wide');
    // Sent after the group was created (a message of its very millisecond counts as before it).
    h.clock.advance(1);
    const producers = Array.from({ length: 4 }, () => harness(h.doc, h.table, { clock: h.clock }));
    const keys = ['x', 'y', 'z'];
    const sent: string[] = [];
    for (let n = 0; n < 8; n++) {
      for (const [p, producer] of producers.entries()) {
        const key = keys[(n + p) % keys.length]!;
        const body = `${key}-${n}-${p}`;
        expect((await producer.queue.sendBatch('wide', [send(body, { shardKey: key })])).filter((r) => 'error' in r)).toEqual([]);
        sent.push(body);
      }
    }
    const used = (await noticeHeads('wide', 16)).filter((n) => n > 0).length;
    expect(used).toBeGreaterThan(1);
    const consumers = [h.queue, harness(h.doc, h.table, { clock: h.clock }).queue];
    const got: string[] = [];
    for (let round = 0; round < 60 && got.length < sent.length; round++) got.push(...(await drain(consumers[round % 2]!, 'g', sent.length)));
    expect([...got].sort()).toEqual([...sent].sort());
    for (const key of keys) expect(got.filter((b) => b.startsWith(`${key}-`))).toEqual(sent.filter((b) => b.startsWith(`${key}-`)));
    // Nothing is left, and nothing comes again.
    expect(await drain(h.queue, 'g', 1)).toEqual([]);
    expect((await h.admin.getGroup('g')).backlog).toBe(0);
  });

  it('a new shard cursor starts at the shard\'s first message even 20 segments below the notice read first (past the 4-segment walk)', async () => {
    await h.admin.putTopic('ledger', build.topic({ type: 'fifo' }));
    await subscribe('g', 'ledger', 'serialized');
    h.clock.advance(1);
    for (let i = 1; i <= 20; i++) await h.queue.send('ledger', send(`m${i}`, { shardKey: 'k' }));
    // Their notices are on notice streams this group has not read yet; the one it reads first announces m121.
    expect(await hideNotices('ledger', NOTICE_BUCKETS)).toBe(20);
    await harness(h.doc, h.table, { clock: h.clock }).queue.send('ledger', send('m21', { shardKey: 'k' }));
    const got: string[] = [];
    for (let round = 0; round < 30 && got.length < 21; round++) {
      const batch = await drain(h.queue, 'g', 1);
      if (batch.length === 0) break;
      got.push(...batch);
    }
    expect(got).toEqual(Array.from({ length: 21 }, (_, i) => `m${i + 1}`));
  }, 120_000);

  it('… and at the first message after the group was created, 20 segments below, with 20 older ones before it', async () => {
    await h.admin.putTopic('ledger', build.topic({ type: 'fifo' }));
    for (let i = 1; i <= 20; i++) await h.queue.send('ledger', send(`old${i}`, { shardKey: 'k' }));
    h.clock.advance(1_000);
    await subscribe('g', 'ledger');
    h.clock.advance(1_000);
    for (let i = 1; i <= 20; i++) await h.queue.send('ledger', send(`new${i}`, { shardKey: 'k' }));
    expect(await hideNotices('ledger', NOTICE_BUCKETS)).toBe(40);
    await harness(h.doc, h.table, { clock: h.clock }).queue.send('ledger', send('new21', { shardKey: 'k' }));
    expect(await drain(h.queue, 'g', 21)).toEqual(Array.from({ length: 21 }, (_, i) => `new${i + 1}`));
  }, 120_000);

  it('a FIFO topic added `latest` to an existing group delivers only what was sent after it was added (a review\'s case)', async () => {
    await h.admin.putTopic('other', build.topic({ type: 'fifo' }));
    await h.admin.putTopic('ledger', build.topic({ type: 'fifo' }));
    const settings = { deliveryMode: 'concurrent' as const, visibilityTimeoutSeconds: 30 };
    await h.admin.putGroup('g', build.group([{ topic: 'other', tags: undefined, startFrom: 'latest' }], settings));
    h.clock.advance(1_000);
    for (let i = 1; i <= 20; i++) await h.queue.send('ledger', send(`old${i}`, { shardKey: 'k' }));
    h.clock.advance(1_000);
    await h.admin.putGroup('g', build.group([{ topic: 'other', tags: undefined, startFrom: 'latest' }, { topic: 'ledger', tags: undefined, startFrom: 'latest' }], settings));
    h.clock.advance(1_000);
    await h.queue.send('ledger', send('new', { shardKey: 'k' }));
    // Bounded by the group's creation, the search went down to old1 (the old 100-segment walk: up to 100 segments of it).
    expect(await drain(h.queue, 'g', 200)).toEqual(['new']);
  }, 120_000);

  it('an epoch\'s first notice read after a later notice of its shard still notes the epoch (statistics count from it; a review\'s case)', async () => {
    await h.admin.putTopic('ledger', build.topic({ type: 'fifo', retentionSeconds: 3600 }));
    await subscribe('c', 'ledger');
    h.clock.advance(1);
    await h.queue.send('ledger', send('a1', { shardKey: 'A' }));
    expect(await drain(h.queue, 'c', 1)).toEqual(['a1']);
    h.clock.advance(2 * 3_600_000); // past retention: the next send opens an epoch
    const [b1] = await h.queue.sendBatch('ledger', [send('b1', { shardKey: 'A' })]);
    const opened = b1 && 'result' in b1 ? b1.result.sequence! : 0;
    // The epoch's notice waits on a notice stream the group reads later (taken away here, put back below).
    await hideNotices('ledger', NOTICE_BUCKETS);
    await h.queue.sendBatch('ledger', [send('b2', { shardKey: 'A' }), ...Array.from({ length: 30 }, (_, i) => send(`z${i}`, { shardKey: `Z${i}` }))]);
    // One message wanted: one shard claimed from; A most likely raised on its own, its epoch unknown.
    await h.queue.receive('c', { maxMessages: 1, waitSeconds: 0 });
    await h.stores.log.appendNotices(noticeStream('t:ledger', 0), [{ shardKey: 'A', from: opened, to: opened, epoch: true }], Math.ceil(h.clock.now() / 1000) + 3600, ['ledger']);
    await h.queue.receive('c', { maxMessages: 1, waitSeconds: 0 });
    const cursor = await h.stores.cursors.get('c', 't:ledger/k:A', h.clock.now());
    // Still in the old epoch (A not claimed from): `ke` is the new epoch's start, and the backlog
    // counts the 2 + 30 messages, not the ≈ 7.2 × 10^9 numbers the epoch jumped.
    if (cursor!.next < opened) expect(cursor!.epochStart).toBe(opened);
    expect((await h.admin.getGroup('c')).backlog).toBeLessThanOrEqual(32);
  }, 60_000);

  it('a notice this container raised past itself, from another notice stream, does not put the stream in shared mode (no cursor write per receive)', async () => {
    await h.admin.putTopic('ledger', build.topic({ type: 'fifo' }));
    await subscribe('g', 'ledger');
    h.clock.advance(1);
    const [first] = await h.queue.sendBatch('ledger', [send('m1', { shardKey: 'k' })]);
    await h.queue.send('ledger', send('m2', { shardKey: 'k' }));
    expect(await drain(h.queue, 'g', 2)).toEqual(['m1', 'm2']);
    const sticky = (await noticeHeads('ledger', NOTICE_BUCKETS)).findIndex((n) => n > 0);
    const other = (sticky + 1) % NOTICE_BUCKETS;
    // m1's notice again, on another stream (as another container's would be, read late): the shard knows m2.
    const seq = first && 'result' in first ? first.result.sequence! : 0;
    const noticeNext = async () => (await h.stores.cursors.get('g', noticeStream('t:ledger', other), h.clock.now()))!.next;
    const before = await noticeNext();
    await h.stores.log.appendNotices(noticeStream('t:ledger', other), [{ shardKey: 'k', from: seq, to: seq }], Math.ceil(h.clock.now() / 1000) + 3600, ['ledger']);
    const writes: string[] = [];
    countWrites(h.doc, (command) => writes.push(command));
    expect(await drain(h.queue, 'g', 1)).toEqual([]);
    // Not read as another container's doing: the notice cursor lags (absorbed in this container's memo), no write.
    expect(writes).toEqual([]);
    expect(await noticeNext()).toBe(before);
    // Another container reading the same group still finds it out: it moves the cursor at once.
    expect(await drain(harness(h.doc, h.table, { clock: h.clock }).queue, 'g', 1)).toEqual([]);
    expect(await noticeNext()).toBeGreaterThan(before);
  }, 60_000);

  it('a notice below its own raise still claims a shard the ready index lists: another container\'s commit made it ready (a review\'s case)', async () => {
    await h.admin.putTopic('ledger', build.topic({ type: 'fifo' }));
    await subscribe('g', 'ledger', 'serialized');
    h.clock.advance(1);
    // This container keeps its cursor cache (tests turn it off by default; 60 s: the test's span).
    const a = harness(h.doc, h.table, { clock: h.clock, cursorCacheMs: 60_000 });
    const [m0] = await a.queue.sendBatch('ledger', [send('m0', { shardKey: 'K' })]);
    await a.queue.send('ledger', send('m1', { shardKey: 'K' }));
    // This container raises K to m1 and claims m0 (serialized: one at a time).
    const first = await a.queue.receive('g', { maxMessages: 10, waitSeconds: 0 });
    expect(first.map((m) => m.body)).toEqual(['m0']);
    // Another container commits m0: K is ready now on the ready index; this container's cache entry
    // still shows m0 leased.
    const other = harness(h.doc, h.table, { clock: h.clock });
    expect((await other.queue.commit('g', [first[0]!.receiptHandle]))[0]).toMatchObject({ status: 'committed' });
    // m0's notice again, on another notice stream (read late): below this container's own raise.
    const sticky = (await noticeHeads('ledger', NOTICE_BUCKETS)).findIndex((n) => n > 0);
    const seq = m0 && 'result' in m0 ? m0.result.sequence! : 0;
    await h.stores.log.appendNotices(noticeStream('t:ledger', (sticky + 1) % NOTICE_BUCKETS), [{ shardKey: 'K', from: seq, to: seq }], Math.ceil(h.clock.now() / 1000) + 3600, ['ledger']);
    // The receive reads the cursor (the index lists K ready) and delivers m1 now, not a receive later.
    expect((await a.queue.receive('g', { maxMessages: 10, waitSeconds: 0 })).map((m) => m.body)).toEqual(['m1']);
  }, 60_000);

  it('a send of 100 shard keys is one notice segment: after two, a receive absorbs notices of at most 100 shards (O(batch) raises), and every message arrives once', async () => {
    // Found by the scale bench: ten sends of 100 new shard keys put 1,000 notices in 10 segments of
    // one notice stream; a receive raised all of them at once (1,000 concurrent cursor writes) and
    // answered 503 when the connections ran out.
    await h.admin.putTopic('wide', build.topic({ type: 'fifo' }));
    await subscribe('g', 'wide');
    for (let i = 0; i < 200; i += 100) {
      const results = await h.queue.sendBatch('wide', Array.from({ length: 100 }, (_, j) => send(`m${i + j}`, { shardKey: `k${i + j}` })));
      expect(results.filter((r) => 'error' in r)).toEqual([]);
    }
    const shardCursors = async () => {
      const { Items = [] } = await h.doc.send(
        new QueryCommand({ TableName: h.table, KeyConditionExpression: 'pk = :pk AND begins_with(sk, :s)', ExpressionAttributeValues: { ':pk': 'C#g', ':s': 't:wide/k:' }, ConsistentRead: true }),
      );
      return Items.length;
    };
    const first = await h.queue.receive('g', { maxMessages: 1, waitSeconds: 0 });
    expect(first).toHaveLength(1);
    expect(await shardCursors()).toBe(NOTICE_SHARDS_PER_RECEIVE);
    await h.queue.commit('g', first.map((m) => m.receiptHandle));
    const rest = await drain(h.queue, 'g', 199);
    const all = [first[0]!.body, ...rest];
    expect(all).toHaveLength(200);
    expect(new Set(all).size).toBe(200);
    expect(await shardCursors()).toBe(200);
  }, 300_000);

  it('a notice stream the shard budget cut leads the next receive, even one that starts after the productive window (an npm start smoke: rounds 6, 39 and 71)', async () => {
    // 256 notice streams: a receive samples 8 of them. Three sends of 100 new shard keys from one
    // container are three segments of one notice stream; each receive absorbs 100 shards of it. A
    // receive that raises and claims 100 shards takes longer than the sampler's 5 s productive
    // window on AWS: here each DynamoDB call of a receive moves the clock by 40 ms (~300 calls).
    await h.admin.putTopic('wide', build.topic({ type: 'fifo', partitions: 256 }));
    await subscribe('g', 'wide');
    for (let i = 0; i < 300; i += 100) {
      const results = await h.queue.sendBatch('wide', Array.from({ length: 100 }, (_, j) => send(`m${i + j}`, { shardKey: `k${i + j}` })));
      expect(results.filter((r) => 'error' in r)).toEqual([]);
    }
    expect((await noticeHeads('wide', 256)).filter((head) => head > 0)).toEqual([300]);
    let slow = false;
    h.doc.middlewareStack.add(
      (next) => async (args) => {
        if (slow) h.clock.advance(40);
        return next(args);
      },
      { step: 'initialize', name: 'slowReceive' },
    );
    const delivered: string[] = [];
    const rounds: number[] = [];
    for (let round = 0; round < 80 && delivered.length < 300; round++) {
      slow = true;
      const got = await h.queue.receive('g', { maxMessages: 100, waitSeconds: 0 });
      slow = false;
      if (got.length === 0) continue;
      rounds.push(round);
      delivered.push(...got.map((m) => m.body));
      expect((await h.queue.commit('g', got.map((m) => m.receiptHandle))).every((r) => 'status' in r && r.status === 'committed')).toBe(true);
    }
    expect(new Set(delivered).size).toBe(300);
    expect(delivered).toHaveLength(300);
    // Once the stream is found (within the rotation: ≤ 32 looks), the rest follows in the next receives.
    expect(rounds.at(-1)! - rounds[0]!).toBeLessThanOrEqual(4);
  }, 300_000);

  it('… and of at most 100 shards over all the FIFO topics a receive reads (a review\'s case: three topics of 75 shards each)', async () => {
    const topics = ['wa', 'wb', 'wc'];
    for (const topic of topics) await h.admin.putTopic(topic, build.topic({ type: 'fifo' }));
    await h.admin.putGroup('g', build.group(topics.map((topic) => ({ topic, tags: undefined, startFrom: 'latest' as const })), { deliveryMode: 'concurrent', visibilityTimeoutSeconds: 30 }));
    for (const topic of topics) {
      const results = await h.queue.sendBatch(topic, Array.from({ length: 75 }, (_, j) => send(`${topic}-${j}`, { shardKey: `k${j}` })));
      expect(results.filter((r) => 'error' in r)).toEqual([]);
    }
    const { Items = [] } = await h.doc.send(new QueryCommand({ TableName: h.table, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': 'C#g' }, ConsistentRead: true }));
    const before = Items.length;
    expect(await h.queue.receive('g', { maxMessages: 1, waitSeconds: 0 })).toHaveLength(1);
    const after = await h.doc.send(new QueryCommand({ TableName: h.table, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': 'C#g' }, ConsistentRead: true }));
    expect((after.Items ?? []).filter((item) => String(item.sk).includes('/k:'))).toHaveLength(NOTICE_SHARDS_PER_RECEIVE);
    expect((after.Items ?? []).length - before).toBe(NOTICE_SHARDS_PER_RECEIVE);
    const all = await drain(h.queue, 'g', 224);
    expect(new Set(all).size).toBe(224);
  }, 300_000);
});
