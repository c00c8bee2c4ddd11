/**
 * A group's `oldestMessageAgeSeconds` reads, per stream with work, the segment holding its oldest
 * message (lib/services/group-figures.ts). Where the cursor names that segment — a lease's own,
 * or the cursor's read position for its next message — it is read by key, 100 a BatchGetItem, so
 * that a FIFO group with many shards with work costs O(shards ÷ 100) calls, not a Query a shard
 * (≈ 10^5 shards with work would pass the HTTP API's 30 s). On DynamoDB Local: the age equals the
 * one a Query per stream gives, and the reads are counted.
 */
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { beforeEach, describe, expect, it } from 'vitest';
import { queryAll } from '../../lib/adapters/dynamodb/call.js';
import { cursorPk } from '../../lib/adapters/dynamodb/keys.js';
import { GroupFigures, NOTICE_FIGURE_SEGMENTS } from '../../lib/services/group-figures.js';
import { Seeker } from '../../lib/services/seeker.js';
import { cryptoRandom, type Random } from '../../lib/ports/random.js';
import { harness, newHarness, send, type Harness } from '../helpers/stores.js';
import { group, topic } from '../helpers/builders.js';

/** Shards with a message waiting: three BatchGetItem requests of 100 keys. */
const SHARDS = 250;

let h: Harness;
/** Segment reads (stream keys `S#…`) while `recording`: Queries and BatchGetItem requests; and cursor keys read by BatchGetItem. */
const reads = { queries: 0, batches: 0, keys: 0, cursorKeys: 0, recording: false };

beforeEach(async () => {
  h = await newHarness();
  await h.admin.putTopic('f', topic({ type: 'fifo' }));
  await h.admin.putTopic('s', topic());
  await h.admin.putGroup('g', group(['f', 's'], { deliveryMode: 'concurrent', visibilityTimeoutSeconds: 600 }));
  reads.queries = reads.batches = reads.keys = reads.cursorKeys = 0;
  h.doc.middlewareStack.add(
    (next, context) => async (args) => {
      if (!reads.recording) return next(args);
      const input = args.input as { ExpressionAttributeValues?: Record<string, unknown>; ScanIndexForward?: boolean; RequestItems?: Record<string, { Keys: Array<{ pk: string }> }> };
      // A message segment looked up by a sequence number it holds (segmentContaining: backwards, up
      // to it), not a head read nor a read of notices.
      const values = input.ExpressionAttributeValues ?? {};
      const pk = String(values[':pk'] ?? '');
      if (context.commandName === 'QueryCommand' && pk.startsWith('S#') && !pk.includes('/n:') && ':to' in values && input.ScanIndexForward === false) reads.queries++;
      if (context.commandName === 'BatchGetCommand' || context.commandName === 'BatchGetItemCommand') {
        const all = Object.values(input.RequestItems ?? {}).flatMap((r) => r.Keys);
        reads.cursorKeys += all.filter((k) => String(k.pk).startsWith('C#')).length;
        const keys = all.filter((k) => String(k.pk).startsWith('S#'));
        if (keys.length > 0) {
          reads.batches++;
          reads.keys += keys.length;
        }
      }
      return next(args);
    },
    { step: 'initialize', name: 'countSegmentReads' },
  );
});

async function figures(by: 'key' | 'query', pagesMax = 1) {
  const g = (await h.stores.catalog.getGroup('g'))!;
  reads.queries = reads.batches = reads.keys = reads.cursorKeys = 0;
  reads.recording = true;
  try {
    return { figures: await new GroupFigures(h.stores, h.clock, pagesMax, by).of(g), reads: { ...reads } };
  } finally {
    reads.recording = false;
  }
}

describe('the oldest message of a group with many streams with work', () => {
  it('is read by key, 100 segments a call, and is the age a Query per stream gives', async () => {
    // The oldest: one message on shard k17, a minute before the others.
    await h.queue.send('f', send('oldest', { shardKey: 'k17' }));
    h.clock.advance(60_000);
    for (let i = 0; i < SHARDS; i++) if (i !== 17) await h.queue.send('f', send(`m${i}`, { shardKey: `k${i}` }));
    await h.queue.send('s', send('standard'));
    h.clock.advance(5_000);

    // No receive yet: the shards' cursors know nothing; the notices announce every message.
    const undiscovered = await figures('key');
    expect(undiscovered.figures).toMatchObject({ backlog: SHARDS + 1, inFlight: 0, oldestMessageAgeSeconds: 65 });
    // The oldest candidate of each notice stream with notices unread, and the partition's: by key.
    expect(undiscovered.reads.queries).toBe(0);
    expect((await figures('query')).figures).toEqual(undiscovered.figures);

    // Receives discover the shards (at most 100 a receive) and lease a few messages.
    let leased = 0;
    for (let i = 0; i < 4; i++) leased += (await h.queue.receive('g', { maxMessages: 1, waitSeconds: 0 })).length;
    const byKey = await figures('key');
    expect(byKey.figures).toMatchObject({ backlog: SHARDS + 1 - leased, inFlight: leased, oldestMessageAgeSeconds: 65 });
    // Every stream's oldest message by key, 100 a request, no Query of a stream.
    expect(byKey.reads.queries).toBe(0);
    // (the shards the receives discovered, the partition, the first notice of a stream still unread)
    expect(byKey.reads.keys).toBeGreaterThan(100);
    expect(byKey.reads.batches).toBe(Math.ceil(byKey.reads.keys / 100));
    const byQuery = await figures('query');
    expect(byQuery.figures).toEqual(byKey.figures);
    expect(byQuery.reads.queries).toBe(byKey.reads.keys);
  });

  it('reads a leased oldest message by its lease\'s segment, the next one by the cursor\'s position', async () => {
    for (let i = 0; i < 20; i++) {
      await h.queue.send('f', send(`a${i}`, { shardKey: `k${i % 5}` }));
      h.clock.advance(1_000);
    }
    // Leases on some shards (their oldest message is leased), waiting messages on the others.
    const got = await h.queue.receive('g', { maxMessages: 7, waitSeconds: 0 });
    expect(got.length).toBeGreaterThan(0);
    h.clock.advance(2_000);
    const byKey = await figures('key');
    expect(byKey.figures.inFlight).toBe(got.length);
    expect(byKey.figures.oldestMessageAgeSeconds).toBe(22);
    expect(byKey.reads.queries).toBe(0);
    expect((await figures('query')).figures).toEqual(byKey.figures);
    // Commit the oldest (k0's first message): the age is the next oldest's.
    const oldest = got.find((m) => m.body === 'a0');
    if (oldest) {
      await h.queue.commit('g', [oldest.receiptHandle]);
      const after = await figures('key');
      expect(after.figures.oldestMessageAgeSeconds).toBe(21);
      expect(after.reads.queries).toBe(0);
      expect((await figures('query')).figures).toEqual(after.figures);
    }
  });
});

/** Receives (and commits) until nothing is left: what the group's consumers would get. */
async function drain(): Promise<string[]> {
  const bodies: string[] = [];
  for (;;) {
    const got = await h.queue.receive('g', { maxMessages: 100, waitSeconds: 0 });
    if (got.length === 0) return bodies;
    bodies.push(...got.map((m) => m.body));
    await h.queue.commit('g', got.map((m) => m.receiptHandle));
  }
}

/** A container whose notices go to one notice stream (its picker starts at `fraction` of them). */
const pinned = (fraction: number): Harness => harness(h.doc, h.table, { clock: h.clock, random: { ...cryptoRandom, fraction: () => fraction } satisfies Random });

describe('messages no receive has discovered', () => {
  it('count once per shard whose notices sit on several notice streams in any order, from its oldest (a review\'s probe)', async () => {
    h.clock.advance(1);
    // Two sending containers: the shard's first four notices on the last stream, its fifth on the first.
    const high = pinned(0.99);
    const low = pinned(0);
    for (let i = 1; i <= 4; i++) await high.queue.send('f', send(`m${i}`, { shardKey: 'k' }));
    h.clock.advance(60_000);
    await low.queue.send('f', send('m5', { shardKey: 'k' }));
    h.clock.advance(5_000);
    for (const by of ['key', 'query'] as const) {
      for (const pagesMax of [0, 1]) expect((await figures(by, pagesMax)).figures, `${by} ${pagesMax}`).toMatchObject({ backlog: 5, oldestMessageAgeSeconds: 65 });
    }
    expect((await drain()).sort()).toEqual(['m1', 'm2', 'm3', 'm4', 'm5']);
    expect((await figures('key')).figures).toMatchObject({ backlog: 0, oldestMessageAgeSeconds: 0 });
  });

  it('after a seek to a time, do not count shards the group has no cursor for (they start at the seek\'s time; a review\'s probe)', async () => {
    for (let i = 1; i <= 3; i++) await h.queue.send('f', send(`old${i}`, { shardKey: 'k' }));
    h.clock.advance(3_600_000);
    await new Seeker(h.stores, h.clock).seek('g', h.clock.now() - 1_000, undefined);
    h.clock.advance(5_000);
    for (const pagesMax of [0, 1]) expect((await figures('key', pagesMax)).figures).toMatchObject({ backlog: 0, oldestMessageAgeSeconds: 0 });
    expect(await drain()).toEqual([]);
  });

  it('purged and dead-generation messages are no one\'s oldest message (a review\'s probe)', async () => {
    for (let i = 1; i <= 3; i++) await h.queue.send('f', send(`p${i}`, { shardKey: `k${i}` }));
    h.clock.advance(600_000);
    await h.admin.purgeTopic('f');
    h.clock.advance(5_000);
    // Their notices still count them (as a shard cursor counts the purged messages it knows of) until a receive passes them.
    expect((await figures('key')).figures.oldestMessageAgeSeconds).toBe(0);
    expect(await drain()).toEqual([]);
    expect((await figures('key')).figures).toMatchObject({ backlog: 0, oldestMessageAgeSeconds: 0 });
  });

  it('read shard cursors by key only on the active path, at most 100 a notice stream (a review\'s probe)', async () => {
    // 250 new shard keys in sends of 50: 5 notice segments on one stream, all read (up to 10 are).
    for (let b = 0; b < 5; b++) await h.queue.sendBatch('f', Array.from({ length: 50 }, (_, i) => send(`b${b}.${i}`, { shardKey: `n${b * 50 + i}` })));
    h.clock.advance(7_000);
    const whole = await figures('key', 1);
    expect(whole.figures).toMatchObject({ backlog: 250, oldestMessageAgeSeconds: 7 });
    // Every live shard cursor was folded: none is read again.
    expect(whole.reads.cursorKeys).toBe(0);
    const active = await figures('key', 0);
    expect({ ...active.figures, committed: whole.figures.committed }).toEqual(whole.figures);
    expect(active.reads.cursorKeys).toBe(100);
  });

  it('count the notices past the page one message each while the page ends among notices no receive absorbed, not once it ends among absorbed ones', async () => {
    // One container: every notice on one stream, one segment a send.
    const sends = NOTICE_FIGURE_SEGMENTS + 15;
    const noticeCursors = async () =>
      (await queryAll(h.doc, { TableName: h.table, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': cursorPk('g') } })).filter((i) => String(i.sk).includes('/n:'));
    const before = await noticeCursors();
    for (let i = 0; i < sends; i++) await h.queue.send('f', send(`q${i}`, { shardKey: `q${i}` }));
    h.clock.advance(3_000);
    // Nobody received: the page's 10 notices, and the 15 past it from the head.
    for (const pagesMax of [0, 1]) expect((await figures('key', pagesMax)).figures).toMatchObject({ backlog: sends, oldestMessageAgeSeconds: 3 });
    expect(await drain()).toHaveLength(sends);
    // The group's notice cursors as they were before the receives: as if the writes that move them
    // had failed (a container moves them lagging, and a crash can keep them back). Every notice is absorbed.
    for (const item of before) await h.doc.send(new PutCommand({ TableName: h.table, Item: item }));
    for (const pagesMax of [0, 1]) expect((await figures('key', pagesMax)).figures).toMatchObject({ backlog: 0, inFlight: 0, oldestMessageAgeSeconds: 0 });
  });
});
