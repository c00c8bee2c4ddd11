/**
 * The due index without a hot key (docs/design.md, Scheduled and delayed messages, "The due index
 * without a hot key"): a minute's entries are spread over DUE_INDEX_BUCKETS index partitions by
 * message id; the minute timer reads every bucket, and the sweep reads them in due order across
 * buckets, so one FIFO shard's scheduled messages are released in due order however they are
 * spread. Entries an earlier version wrote under the bare `T#<minute>` key are still found.
 * DynamoDB Local, injected clock.
 */
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { deferredKey, dueIndexBucketOf, dueIndexPk, dueIndexPkOf, minuteOf } from '../../lib/adapters/dynamodb/keys.js';
import { TimerService } from '../../lib/services/timer-service.js';
import { group, topic } from '../helpers/builders.js';
import { FakeClock, newHarness, send, type Harness } from '../helpers/stores.js';

/** A clock 1 s into a minute, so a test's messages share one minute. */
const minuteClock = () => new FakeClock(Math.floor(Date.now() / 60_000) * 60_000 + 1_000);
const idOf = (messageId: string) => messageId.slice(1);

/** A sweep that reads pages of `pageSize` entries, as many pages as it takes. */
const sweeper = (h: Harness, pageSize: number) =>
  new TimerService(h.stores.deferred, h.recorded, h.recorded, h.clock, (ids) => h.releaser.releaseDue(ids), undefined, undefined, {
    pageSize,
    pages: 1000,
    minutes: 1440,
    budgetMs: Number.MAX_SAFE_INTEGER,
  });

/** `n` messages of one FIFO shard due in the clock's minute at 10 + 1 s … ms apart, sent latest first. */
async function scheduleShard(h: Harness, n: number): Promise<{ due: number[]; ids: string[] }> {
  await h.admin.putTopic('orders', topic({ type: 'fifo' }));
  await h.admin.putGroup('g', group('orders', { deliveryMode: 'concurrent', visibilityTimeoutSeconds: 300 }));
  const first = h.clock.now() + 10_000;
  const due = Array.from({ length: n }, (_, i) => first + i * 700);
  const ids: string[] = [];
  for (const at of [...due].reverse()) ids.unshift(idOf((await h.queue.send('orders', send(`at ${at}`, { shardKey: 'k', deliverAt: at }))).messageId));
  return { due, ids };
}

async function receiveBodies(h: Harness, n: number): Promise<string[]> {
  const bodies: string[] = [];
  for (let i = 0; i < 50 && bodies.length < n; i++) bodies.push(...(await h.queue.receive('g', { maxMessages: 10, waitSeconds: 0 })).map((m) => m.body));
  return bodies;
}

describe('the due index spread over buckets', () => {
  it('spreads one minute over its buckets and the sweep releases one shard in due order, page by page', async () => {
    const h = await newHarness({ clock: minuteClock() });
    const { due, ids } = await scheduleShard(h, 40);
    expect(new Set(due.map(minuteOf)).size).toBe(1);
    const buckets = new Set(ids.map(dueIndexBucketOf));
    expect(buckets.size).toBeGreaterThanOrEqual(4);
    // Each entry in its own bucket's partition.
    const stored = await Promise.all(ids.map((id) => h.doc.send(new GetCommand({ TableName: h.table, Key: deferredKey(id), ConsistentRead: true }))));
    expect(stored.map((r) => r.Item?.g1pk)).toEqual(ids.map((id) => dueIndexPkOf(minuteOf(due[0]!), id)));
    // Every timer lost: only the sweep releases them, three entries a page.
    h.recorded.releases.length = 0;
    h.recorded.minutes.length = 0;
    h.clock.advance(60_000 + 30_000);
    expect(await sweeper(h, 3).sweep()).toBe(40);
    expect(await receiveBodies(h, 40)).toEqual(due.map((at) => `at ${at}`));
  });

  it('duePage walks every bucket: each entry once, in due order, with pages of any size', async () => {
    const h = await newHarness({ clock: minuteClock() });
    const { due, ids } = await scheduleShard(h, 25);
    const minute = minuteOf(due[0]!);
    for (const size of [1, 4, 7, 100]) {
      const seen: string[] = [];
      let start: Record<string, unknown> | undefined;
      let pages = 0;
      do {
        const page = await h.stores.deferred.duePage(minute, due.at(-1)!, size, start);
        expect(page.ids.length).toBeLessThanOrEqual(size);
        seen.push(...page.ids);
        start = page.next;
        pages++;
      } while (start && pages < 200);
      expect(seen).toEqual(ids);
    }
    // Up to a time: only what is due by then.
    expect((await h.stores.deferred.due(minute, due[9]!, 100))).toEqual(ids.slice(0, 10));
  });

  it('the minute timer arms a wake-up for every entry of every bucket', async () => {
    const h = await newHarness({ clock: minuteClock() });
    const { due, ids } = await scheduleShard(h, 20);
    expect((await h.stores.deferred.dueEntries(minuteOf(due[0]!))).map((e) => e.id)).toEqual(ids);
  });

  it('finds an entry an earlier version wrote under the bare minute key', async () => {
    const h = await newHarness({ clock: minuteClock() });
    const { due, ids } = await scheduleShard(h, 12);
    const minute = minuteOf(due[0]!);
    // Every entry moved back to `T#<minute>`, where versions before the buckets wrote them.
    const moved = ids.filter((id) => dueIndexBucketOf(id) !== 0);
    expect(moved.length).toBeGreaterThan(0);
    for (const id of moved) {
      await h.doc.send(new UpdateCommand({ TableName: h.table, Key: deferredKey(id), UpdateExpression: 'SET g1pk = :pk', ExpressionAttributeValues: { ':pk': dueIndexPk(minute) } }));
    }
    expect(dueIndexPk(minute)).toBe(`T#${minute}`);
    expect(dueIndexPkOf(minute, moved[0]!)).not.toBe(`T#${minute}`);
    expect((await h.stores.deferred.dueEntries(minute)).map((e) => e.id)).toEqual(ids);
    h.recorded.releases.length = 0;
    h.clock.advance(60_000 + 30_000);
    expect(await sweeper(h, 5).sweep()).toBe(12);
    expect(await receiveBodies(h, 12)).toEqual(due.map((at) => `at ${at}`));
  });
});
