/** Partitions per standard topic (issue 19, item 1) on DynamoDB Local: set, raise only, never a gap. */
import { beforeEach, describe, expect, it } from 'vitest';
import { ConflictError } from '../../lib/domain/errors.js';
import { Seeker } from '../../lib/services/seeker.js';
import { StreamLog } from '../../lib/adapters/dynamodb/stream-log.js';
import { harness, newHarness, send, type Harness } from '../helpers/stores.js';
import * as build from '../helpers/builders.js';
import { cyclingRandom } from '../helpers/random.js';

let h: Harness;


beforeEach(async () => {
  h = await newHarness({ random: cyclingRandom() });
});

const partitionStreams = async (group: string, topic: string) =>
  (await h.stores.cursors.list(group, Date.now()))
    .map((c) => c.stream)
    .filter((s) => s.startsWith(`t:${topic}/p:`))
    .sort((a, b) => Number(a.split(':').pop()) - Number(b.split(':').pop()));
const streams = (topic: string, n: number) => Array.from({ length: n }, (_, p) => `t:${topic}/p:${p}`);

/**
 * Sends in concurrent waves of 16: a send avoids partitions with an append of this process in
 * flight (PartitionPicker), so each wave covers up to 16 partitions.
 */
async function sendMany(topic: string, prefix: string, count: number): Promise<string[]> {
  const bodies = Array.from({ length: count }, (_, i) => `${prefix}-${i}`);
  for (let i = 0; i < count; i += 16) await Promise.all(bodies.slice(i, i + 16).map((body) => h.queue.send(topic, send(body))));
  return bodies;
}

/** Receives and commits until nothing comes; the bodies received. */
async function drain(group: string): Promise<string[]> {
  const out: string[] = [];
  for (let round = 0; round < 100; round++) {
    const got = await h.queue.receive(group, { maxMessages: 100, waitSeconds: 0 });
    if (got.length === 0) return out;
    out.push(...got.map((m) => m.body));
    await h.queue.commit(group, got.map((m) => m.receiptHandle));
  }
  throw new Error('did not drain');
}

/**
 * Runs `before` once, just before the first call of `target[method]`: places another request
 * exactly between a request's reads and its write. Returns whether it ran.
 */
function interleave<T extends object>(target: T, method: keyof T & string, before: () => Promise<unknown>): () => boolean {
  const original = (target[method] as (...args: unknown[]) => Promise<unknown>).bind(target);
  let ran = false;
  (target as Record<string, unknown>)[method] = async (...args: unknown[]) => {
    if (!ran) {
      ran = true;
      await before();
    }
    return original(...args);
  };
  return () => ran;
}

describe('partitions on PUT, PATCH and GET', () => {
  it('a standard topic takes 1–64 (default 4), keeps its count on a PUT without it, and only raises', async () => {
    expect((await h.admin.putTopic('plain', build.topic())).topic.partitions).toBe(4);
    expect((await h.admin.putTopic('wide', build.topic({ partitions: 16, retentionSeconds: 3600 }))).topic.partitions).toBe(16);
    expect((await h.admin.getTopic('wide')).partitions).toBe(16);
    // A PUT without partitions keeps them; one with fewer is refused before anything changes.
    expect((await h.admin.putTopic('wide', build.topic({ retentionSeconds: 3600 }))).topic.partitions).toBe(16);
    await expect(h.admin.putTopic('wide', build.topic({ partitions: 8, retentionSeconds: 7200 }))).rejects.toThrow(
      /has 16 partitions; partitions can only be raised/,
    );
    expect(await h.stores.catalog.getTopic('wide')).toMatchObject({ partitions: 16, retentionSeconds: 3600 });
    await expect(h.admin.patchTopic('wide', { partitions: 2, retentionSeconds: 7200 })).rejects.toBeInstanceOf(ConflictError);
    expect(await h.stores.catalog.getTopic('wide')).toMatchObject({ partitions: 16, retentionSeconds: 3600 });
    // Raised by PUT and by PATCH; the same count again changes nothing.
    expect((await h.admin.putTopic('wide', build.topic({ partitions: 32, retentionSeconds: 3600 }))).topic.partitions).toBe(32);
    expect((await h.admin.patchTopic('wide', { partitions: 64 })).topic.partitions).toBe(64);
    expect((await h.admin.patchTopic('wide', { partitions: 64, retentionSeconds: 7200 })).topic).toMatchObject({ partitions: 64, retentionSeconds: 7200 });
  });

  it("a FIFO topic's count (its notice streams) is set at creation, then fixed: another count answers 409 and writes nothing", async () => {
    expect((await h.admin.putTopic('eight', build.topic({ type: 'fifo', partitions: 8 }))).topic.partitions).toBe(8);
    await expect(h.admin.putTopic('eight', build.topic({ type: 'fifo', partitions: 4 }))).rejects.toThrow(/FIFO topic: its partitions .* are fixed/);
    expect(await h.stores.catalog.getTopic('eight')).toMatchObject({ partitions: 8 });
    expect((await h.admin.putTopic('ledger', build.topic({ type: 'fifo', partitions: 4 }))).topic.partitions).toBe(4);
    await expect(h.admin.patchTopic('ledger', { partitions: 16, retentionSeconds: 3600 })).rejects.toBeInstanceOf(ConflictError);
    await expect(h.admin.putTopic('ledger', build.topic({ type: 'fifo', partitions: 16 }))).rejects.toBeInstanceOf(ConflictError);
    expect(await h.stores.catalog.getTopic('ledger')).toMatchObject({ partitions: 4, retentionSeconds: 3 * 86_400 });
  });
});

describe('raising partitions', () => {
  beforeEach(async () => {
    await h.admin.putTopic('orders', build.topic());
    await h.admin.putGroup('latest', build.group('orders'));
    await h.admin.putGroup('early', { ...build.group('orders'), subscriptions: [{ topic: 'orders', tags: undefined, startFrom: 'earliest' }] });
  });

  it('creates the new partitions’ cursors for every subscribed group; messages before and after the raise all arrive', async () => {
    const before = await sendMany('orders', 'before', 8);
    await h.admin.patchTopic('orders', { partitions: 16 });
    expect(await partitionStreams('latest', 'orders')).toEqual(streams('orders', 16));
    expect(await partitionStreams('early', 'orders')).toEqual(streams('orders', 16));
    const after = await sendMany('orders', 'after', 64);
    // Every partition got messages (waves of 16 concurrent sends).
    for (const stream of streams('orders', 16)) expect((await h.stores.log.head(stream)).kind).toBe('segment');
    const topic = await h.admin.getTopic('orders');
    expect(topic.approximateMessages).toBe(72);
    for (const group of ['latest', 'early']) {
      expect((await h.admin.getGroup(group)).backlog).toBe(72);
      expect((await drain(group)).sort()).toEqual([...before, ...after].sort());
    }
  });

  it('a group subscribing while the raise runs gets cursors for every partition (the raise lands between its read and its write)', async () => {
    // The save has read the topic (4 partitions) and created those cursors; the raise runs now,
    // before the group item exists, so the raise cannot see the group.
    const raised = interleave(h.stores.catalog, 'putGroup', () => h.admin.patchTopic('orders', { partitions: 12 }));
    await h.admin.putGroup('racer', build.group('orders'));
    expect(raised()).toBe(true);
    expect(await partitionStreams('racer', 'orders')).toEqual(streams('orders', 12));
    const sent = await sendMany('orders', 'm', 64);
    expect((await drain('racer')).sort()).toEqual([...sent].sort());
  });

  it('a raise that read the groups before a new subscription was saved reads them again (the save lands between)', async () => {
    const subscribed = interleave(h.stores.catalog, 'raisePartitions', () => h.admin.putGroup('racer', build.group('orders')));
    expect((await h.admin.patchTopic('orders', { partitions: 12 })).topic.partitions).toBe(12);
    expect(subscribed()).toBe(true);
    expect(await partitionStreams('racer', 'orders')).toEqual(streams('orders', 12));
    const sent = await sendMany('orders', 'm', 64);
    expect((await drain('racer')).sort()).toEqual([...sent].sort());
  });

  it('a re-PUT or PATCH of an existing subscription does not touch the topic item (no sv)', async () => {
    await h.admin.patchGroup('latest', { visibilityTimeoutSeconds: 60 });
    await h.admin.putGroup('latest', build.group('orders'));
    const saves = (await h.stores.catalog.getTopic('orders'))?.subscriptionSaves;
    // Two new subscriptions in beforeEach; nothing since.
    expect(saves).toBe(2);
  });
});

describe('per-partition arrays after a raise', () => {
  beforeEach(async () => {
    await h.admin.putTopic('orders', build.topic());
    await h.admin.putGroup('g', build.group('orders'));
  });

  it('purge: `pw` has one entry per partition, also when a raise lands while the purge reads the heads', async () => {
    await sendMany('orders', 'old', 8);
    const raised = interleave(h.stores.catalog, 'purgeTopic', () => h.admin.patchTopic('orders', { partitions: 8 }));
    await h.admin.purgeTopic('orders');
    h.clock.advance(1);
    expect(raised()).toBe(true);
    const topic = await h.stores.catalog.getTopic('orders');
    expect(topic?.partitions).toBe(8);
    expect(topic?.purgeStarts).toHaveLength(8);
    expect((await h.admin.getGroup('g')).backlog).toBe(0);
    expect((await h.admin.getTopic('orders')).approximateMessages).toBe(0);
    // A later raise extends `pw`; what is sent afterwards counts and arrives.
    await h.admin.patchTopic('orders', { partitions: 16 });
    expect((await h.stores.catalog.getTopic('orders'))?.purgeStarts).toHaveLength(16);
    const sent = await sendMany('orders', 'new', 64);
    expect((await h.admin.getGroup('g')).backlog).toBe(64);
    expect((await h.admin.getTopic('orders')).approximateMessages).toBe(64);
    expect((await drain('g')).sort()).toEqual([...sent].sort());
  });

  it('re-created topic: `gs` is extended by a raise, so a dead generation in the new partitions counts nowhere', async () => {
    await h.admin.patchTopic('orders', { partitions: 16 });
    await sendMany('orders', 'gen1', 64);
    await h.admin.deleteTopic('orders');
    await h.admin.putTopic('orders', build.topic());
    expect((await h.stores.catalog.getTopic('orders'))?.generationStarts).toHaveLength(4);
    await h.admin.patchTopic('orders', { partitions: 16 });
    const topic = await h.stores.catalog.getTopic('orders');
    expect(topic?.generationStarts).toHaveLength(16);
    // The new partitions' entries are their heads as the raise found them (64 messages of the dead generation).
    const heads = await Promise.all(streams('orders', 16).map((stream) => h.stores.log.head(stream)));
    expect(topic?.generationStarts).toEqual(heads.map((head) => StreamLog.nextAfter(head)));
    expect(heads.reduce((n, head) => n + StreamLog.nextAfter(head) - 1, 0)).toBe(64);
    expect((await h.admin.getTopic('orders')).approximateMessages).toBe(0);
    // An `earliest` subscription and a seek to earliest start at the current generation.
    await h.admin.putGroup('early', { ...build.group('orders'), subscriptions: [{ topic: 'orders', tags: undefined, startFrom: 'earliest' }] });
    expect((await h.admin.getGroup('early')).backlog).toBe(0);
    const sent = await sendMany('orders', 'gen2', 64);
    expect((await h.admin.getGroup('early')).backlog).toBe(64);
    expect((await drain('early')).sort()).toEqual([...sent].sort());
    const answer = await new Seeker(h.stores, h.clock).seek('early', 'earliest', undefined);
    expect(answer.positions).toHaveLength(16);
    expect((await drain('early')).sort()).toEqual([...sent].sort());
  });

  it('seek to latest moves every partition, the new ones too', async () => {
    await h.admin.patchTopic('orders', { partitions: 8 });
    await sendMany('orders', 'skipped', 64);
    const answer = await new Seeker(h.stores, h.clock).seek('g', 'latest', undefined);
    expect(answer.positions.map((p) => p.partition)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(await drain('g')).toEqual([]);
    const sent = await sendMany('orders', 'after', 16);
    expect((await drain('g')).sort()).toEqual([...sent].sort());
  });
});

describe('sticky, least-contended appends', () => {
  it('a send sticks to its partition; a lost race moves it to another one, which it then sticks to', async () => {
    await h.admin.putTopic('orders', build.topic({ partitions: 4 }));
    const heads = async () =>
      Promise.all(streams('orders', 4).map(async (s) => {
        const head = await h.stores.log.head(s);
        return head.kind === 'segment' ? head.seq + head.count - 1 : 0;
      }));
    await h.queue.send('orders', send('a'));
    const first = (await heads()).findIndex((n) => n === 1);
    await h.queue.send('orders', send('b'));
    expect(await heads()).toEqual(streams('orders', 4).map((_, p) => (p === first ? 2 : 0)));
    // Another container (its own stream log, hints and picker, on the same table) appends to that
    // partition: this one's head hint is stale now.
    for (let i = 0; ; i++) {
      await harness(h.doc, h.table, { clock: h.clock }).queue.send('orders', send(`other-${i}`));
      if ((await heads())[first] === 3) break;
      expect(i).toBeLessThan(50);
    }
    const before = await heads();
    await h.queue.send('orders', send('c'));
    const after = await heads();
    // 'c' did not retry the stream where it lost: it landed in another partition.
    expect(after[first]).toBe(before[first]);
    const moved = after.findIndex((n, p) => n !== before[p]);
    expect(moved).not.toBe(first);
    await h.queue.send('orders', send('d'));
    expect((await heads())[moved]).toBe(after[moved]! + 1);
  });
});
