/**
 * FIFO topics with more notice streams (issue 19): `partitions` on a FIFO topic is its notice-stream
 * count, set at creation (1–256, default 4), fixed after; a time-order group's topics keep 4. At the
 * maximum: creation, a group's 256 notice cursors, sends over many shards, receives that read at most
 * 8 notice streams a look and still find every shard, order per shard, and a seek that moves every
 * notice cursor.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { ConflictError, InvalidArgumentError } from '../../lib/domain/errors.js';
import { Limits } from '../../lib/domain/model.js';
import { noticeStream } from '../../lib/domain/streams.js';
import { SAMPLE_SIZE } from '../../lib/services/partition-sampler.js';
import { Seeker } from '../../lib/services/seeker.js';
import { StreamLog } from '../../lib/adapters/dynamodb/stream-log.js';
import { harness, newHarness, send, type Harness } from '../helpers/stores.js';
import * as build from '../helpers/builders.js';

const MAX = Limits.partitionsMax;
let h: Harness;

beforeEach(async () => {
  h = await newHarness();
});

const noticeCursors = async (group: string, namespace: string) =>
  (await h.stores.cursors.list(group, h.clock.now())).filter((c) => c.stream.startsWith(`${namespace}/n:`));

/** Notice streams of `namespace` that hold a notice (one head read each). */
async function noticeStreamsWritten(namespace: string, count: number): Promise<number> {
  let n = 0;
  for (let b = 0; b < count; b++) if (StreamLog.nextAfter(await h.stores.log.head(noticeStream(namespace, b))) > 1) n++;
  return n;
}

/**
 * Receives and commits until `count` arrived, counting the notice cursors each receive read (they
 * are read with one BatchGetItem a receive: `getMany`).
 */
async function receiveAll(group: string, count: number, maxLooks: number) {
  const messages: Array<{ body: string; shardKey: string | null }> = [];
  const noticeReads: number[] = [];
  const getMany = h.stores.cursors.getMany.bind(h.stores.cursors);
  h.stores.cursors.getMany = (async (g: string, streams: string[], options: never) => {
    const notices = streams.filter((s) => s.includes('/n:')).length;
    if (notices > 0) noticeReads.push(notices);
    return getMany(g, streams, options);
  }) as typeof h.stores.cursors.getMany;
  let looks = 0;
  try {
    while (messages.length < count && looks < maxLooks) {
      looks++;
      const got = await h.queue.receive(group, { maxMessages: 100, waitSeconds: 0 });
      messages.push(...got.map((m) => ({ body: m.body, shardKey: m.shardKey })));
      if (got.length > 0) await h.queue.commit(group, got.map((m) => m.receiptHandle));
    }
  } finally {
    h.stores.cursors.getMany = getMany;
  }
  return { messages, looks, noticeReads };
}

describe('the notice-stream count of a FIFO topic', () => {
  it('is set at creation (default 4), kept by a PUT without it, and refused when changed (409) or on a time-order group topic (400)', async () => {
    expect((await h.admin.putTopic('plain', build.topic({ type: 'fifo' }))).topic.partitions).toBe(4);
    expect((await h.admin.putTopic('wide', build.topic({ type: 'fifo', partitions: 16 }))).topic.partitions).toBe(16);
    // A PUT without partitions keeps them; the same count is no change.
    expect((await h.admin.putTopic('wide', build.topic({ type: 'fifo' }))).topic.partitions).toBe(16);
    expect((await h.admin.putTopic('wide', build.topic({ type: 'fifo', partitions: 16 }))).topic.partitions).toBe(16);
    // Another count, higher or lower: 409 saying why, nothing written.
    for (const partitions of [4, 32]) {
      const put = h.admin.putTopic('wide', build.topic({ type: 'fifo', partitions }));
      await expect(put).rejects.toBeInstanceOf(ConflictError);
      await expect(put).rejects.toThrow(/fixed at creation.*hand-off/);
    }
    await expect(h.admin.patchTopic('wide', { partitions: 64 })).rejects.toBeInstanceOf(ConflictError);
    expect((await h.admin.getTopic('wide')).partitions).toBe(16);

    // A time-order group's topics share its 4 notice streams.
    expect((await h.admin.putTopic('og-a', build.topic({ type: 'fifo', orderGroup: 'og' }))).topic.partitions).toBe(4);
    expect((await h.admin.putTopic('og-b', build.topic({ type: 'fifo', orderGroup: 'og', partitions: 4 }))).topic.partitions).toBe(4);
    const joined = h.admin.putTopic('og-c', build.topic({ type: 'fifo', orderGroup: 'og', partitions: 8 }));
    await expect(joined).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(joined).rejects.toThrow(/time-order group 'og'.*partitions must be 4/);
    await expect(h.admin.getTopic('og-c')).rejects.toThrow();
  });

  it('announces a container\'s sends, whatever their shard keys, on the one notice stream it picked, in one notice segment a send', async () => {
    await h.admin.putTopic('wide', build.topic({ type: 'fifo', partitions: 16 }));
    await h.admin.putGroup('g', build.group('wide'));
    expect((await noticeCursors('g', 't:wide')).map((c) => c.stream).sort()).toEqual(Array.from({ length: 16 }, (_, b) => `t:wide/n:${b}`).sort());
    for (const key of ['A', 'B', 'shard-42']) await h.queue.send('wide', send(`${key}-1`, { shardKey: key }));
    // A batch over 5 shard keys: 5 shard segments, one notice segment of 5 notices.
    const results = await h.queue.sendBatch('wide', ['C', 'D', 'E', 'F', 'G'].map((key) => send(`${key}-1`, { shardKey: key })));
    expect(results.filter((r) => 'error' in r)).toEqual([]);
    expect(await noticeStreamsWritten('t:wide', 16)).toBe(1);
    const written = (await Promise.all(Array.from({ length: 16 }, (_, b) => h.stores.log.readNotices(noticeStream('t:wide', b), 0, 10)))).flat();
    expect(written.map((segment) => segment.notices.map((n) => n.shardKey).sort())).toEqual([['A'], ['B'], ['shard-42'], ['C', 'D', 'E', 'F', 'G']]);
    const { messages } = await receiveAll('g', 8, 8);
    expect(messages.map((m) => m.body).sort()).toEqual(['A-1', 'B-1', 'C-1', 'D-1', 'E-1', 'F-1', 'G-1', 'shard-42-1']);
  });
});

describe(`a FIFO topic at the maximum (${MAX} notice streams)`, () => {
  it('is created with a group\'s 256 notice cursors; sends over many shards are all received, in order per shard, by receives that read ≤ 8 notice streams; a seek moves every notice cursor', async () => {
    expect((await h.admin.putTopic('wide', build.topic({ type: 'fifo', partitions: MAX }))).topic.partitions).toBe(MAX);
    await h.admin.putGroup('g', build.group('wide', { deliveryMode: 'concurrent' }));
    expect(await noticeCursors('g', 't:wide')).toHaveLength(MAX);
    // Sent after the group was created (a message of its very millisecond counts as before it: a new
    // shard cursor may start above it when a later notice of its shard is read first).
    h.clock.advance(1);

    // 256 shards, two messages each (in two rounds, so each shard's order is tested across sends).
    const SHARDS = 256;
    const keys = Array.from({ length: SHARDS }, (_, i) => `s${i}`);
    for (const round of [1, 2]) {
      // Batches of 32 shards (each shard a segment of its own: 100 at once open more connections than a
      // loaded DynamoDB Local accepts in the client's 2 s).
      // Each batch from a container of its own: each announces on the notice stream it picked.
      for (let i = 0; i < SHARDS; i += 32) {
        const container = harness(h.doc, h.table, { clock: h.clock });
        const results = await container.queue.sendBatch('wide', keys.slice(i, i + 32).map((k) => send(`${k}-${round}`, { shardKey: k })));
        expect(results.filter((r) => 'error' in r)).toEqual([]);
      }
    }
    // 16 containers, each on a notice stream picked at random among 256: ≈ 15.5 distinct ones.
    expect(await noticeStreamsWritten('t:wide', MAX)).toBeGreaterThanOrEqual(8);

    // 8 notice streams a look (productive ones first, then a rotation): every stream is visited
    // within 2 × 256 / 8 = 64 looks; each look then claims from announced and ready shards.
    const first = await receiveAll('g', 2 * SHARDS, 6 * (MAX / SAMPLE_SIZE));
    console.log(`${2 * SHARDS} messages over ${SHARDS} shards and ${MAX} notice streams: received in ${first.looks} receives`);
    expect(first.messages).toHaveLength(2 * SHARDS);
    expect(new Set(first.messages.map((m) => m.body)).size).toBe(2 * SHARDS);
    expect(Math.max(...first.noticeReads)).toBeLessThanOrEqual(SAMPLE_SIZE);
    for (const key of keys) expect(first.messages.filter((m) => m.shardKey === key).map((m) => m.body)).toEqual([`${key}-1`, `${key}-2`]);
    expect((await h.admin.getGroup('g')).backlog).toBe(0);

    // Seek back to the earliest: every notice cursor moves (bounded in flight), and every shard is
    // announced again and delivered again.
    const seek = await new Seeker(h.stores, h.clock).seek('g', 'earliest', undefined);
    expect(seek.shards).toEqual([{ topics: ['wide'], moved: SHARDS }]);
    const cursors = await noticeCursors('g', 't:wide');
    expect(cursors).toHaveLength(MAX);
    expect(cursors.every((c) => c.seek !== undefined)).toBe(true);
    const again = await receiveAll('g', 2 * SHARDS, 6 * (MAX / SAMPLE_SIZE));
    expect(again.messages).toHaveLength(2 * SHARDS);
    expect(Math.max(...again.noticeReads)).toBeLessThanOrEqual(SAMPLE_SIZE);

    // A new shard: the rotation takes at least 4 notice streams a look (the other 4 may be streams
    // with news — here the notices the seek made unread again, read again now), so it is found
    // within 2 × 256 / 8 = 64 receives of this container.
    h.clock.advance(6_000);
    await h.queue.send('wide', send('late', { shardKey: 'late-key' }));
    const late = await receiveAll('g', 1, (2 * MAX) / SAMPLE_SIZE);
    expect(late.messages.map((m) => m.body)).toEqual(['late']);
    expect(Math.max(...late.noticeReads)).toBeLessThanOrEqual(SAMPLE_SIZE);
    console.log(`a new shard on a ${MAX}-notice-stream topic after a seek: found in ${late.looks} receives`);
  }, 540_000);
});
