/**
 * Idle FIFO shards expire (docs/design.md, Idle shards expire; issue 14 item 7):
 * a shard's sentinel and its group cursors carry `ttl`; a shard that becomes
 * active again gets larger sequence numbers than ever before and is delivered
 * in order to every group, whether TTL has deleted its old items or not yet.
 *
 * DynamoDB Local does not run TTL deletion reliably: `deleteExpired` deletes
 * what TTL would (every item whose `ttl` has passed by the test's clock).
 */
import { describe, expect, it } from 'vitest';
import { BatchWriteCommand, QueryCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { cursorPk, streamPk } from '../../lib/adapters/dynamodb/keys.js';
import { noticeBucket, noticeStream } from '../../lib/domain/streams.js';
import { Seeker } from '../../lib/services/seeker.js';
import { newHarness, send, type Harness } from '../helpers/stores.js';
import { group, topic } from '../helpers/builders.js';

const DAY = 86_400_000;

/** Deletes every item whose `ttl` has passed, as DynamoDB's TTL would (a test-only Scan). */
async function deleteExpired(h: Harness): Promise<number> {
  let deleted = 0;
  let start: Record<string, unknown> | undefined;
  do {
    const page = await h.doc.send(new ScanCommand({ TableName: h.table, ExclusiveStartKey: start, ProjectionExpression: 'pk, sk, #t', ExpressionAttributeNames: { '#t': 'ttl' } }));
    const expired = (page.Items ?? []).filter((item) => item.ttl !== undefined && Number(item.ttl) * 1000 <= h.clock.now());
    // BatchWriteItem, 25 deletes a request (DynamoDB Local serves one request at a time).
    const chunks = [];
    for (let i = 0; i < expired.length; i += 25) chunks.push(expired.slice(i, i + 25).map((item) => ({ DeleteRequest: { Key: { pk: item.pk, sk: item.sk } } })));
    for (let i = 0; i < chunks.length; i += 4) {
      await Promise.all(
        chunks.slice(i, i + 4).map(async (requests) => {
          for (let left = requests; left.length > 0; ) {
            const { UnprocessedItems } = await h.doc.send(new BatchWriteCommand({ RequestItems: { [h.table]: left } }));
            left = (UnprocessedItems?.[h.table] ?? []) as typeof left;
          }
        }),
      );
    }
    deleted += expired.length;
    start = page.LastEvaluatedKey;
  } while (start !== undefined);
  return deleted;
}

/** Every item of one partition key, page by page. */
async function items(h: Harness, pk: string) {
  const out: Record<string, unknown>[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const page = await h.doc.send(
      new QueryCommand({ TableName: h.table, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': pk }, ExclusiveStartKey: start }),
    );
    out.push(...(page.Items ?? []));
    start = page.LastEvaluatedKey;
  } while (start !== undefined);
  return out;
}

async function receiveAll(h: Harness, g: string, n: number) {
  const got = [];
  for (let i = 0; i < 50 && got.length < n; i++) {
    const batch = await h.queue.receive(g, { maxMessages: 10, waitSeconds: 0 });
    for (const m of batch) {
      got.push(m);
      await h.queue.commit(g, [m.receiptHandle]);
    }
  }
  return got;
}

/** A shard used, left idle past its retention and past its cursors' ttl (15 days), then used again. */
async function idleShard(h: Harness) {
  await h.admin.putTopic('ledger', topic({ type: 'fifo', retentionSeconds: 3600 }));
  await h.admin.putGroup('c', group('ledger', { deliveryMode: 'concurrent', visibilityTimeoutSeconds: 60 }));
  await h.admin.putGroup('s', group('ledger', { deliveryMode: 'serialized', visibilityTimeoutSeconds: 60 }));
  h.clock.advance(1);
  const old = await h.queue.sendBatch('ledger', ['a1', 'a2'].map((b) => send(b, { shardKey: 'A' })));
  const oldSeqs = old.map((r) => ('result' in r ? r.result.sequence! : 0));
  expect(bodiesOf(await receiveAll(h, 'c', 2))).toEqual(['a1', 'a2']);
  // Group s commits a1 and keeps a2 leased: its handle goes stale with the shard.
  const [s1] = await h.queue.receive('s', { maxMessages: 10, waitSeconds: 0 });
  await h.queue.commit('s', [s1!.receiptHandle]);
  const [s2] = await h.queue.receive('s', { maxMessages: 10, waitSeconds: 0 });
  expect(s2?.body).toBe('a2');
  h.clock.advance(16 * DAY);
  return { oldSeqs, staleHandle: s2!.receiptHandle, oldId: s1!.messageId };
}

const bodiesOf = (messages: Array<{ body: string }>) => messages.map((m) => m.body);

async function reactivated(h: Harness, oldSeqs: number[]) {
  const sent = await h.queue.sendBatch('ledger', ['b1', 'b2', 'b3'].map((b) => send(b, { shardKey: 'A' })));
  const seqs = sent.map((r) => ('result' in r ? r.result.sequence! : 0));
  // Larger than every number the shard had, gap-free among themselves.
  expect(seqs[0]).toBeGreaterThan(Math.max(...oldSeqs));
  expect(seqs[0]).toBeGreaterThan(h.clock.now() * 1000 - 1);
  expect(seqs.map((s) => s - seqs[0]!)).toEqual([0, 1, 2]);
  const c = await receiveAll(h, 'c', 3);
  const s = await receiveAll(h, 's', 3);
  expect(c.map((m) => [m.body, m.sequence])).toEqual(seqs.map((seq, i) => [`b${i + 1}`, seq]));
  expect(s.map((m) => [m.body, m.sequence])).toEqual(seqs.map((seq, i) => [`b${i + 1}`, seq]));
  return { seqs, ids: sent.map((r) => ('result' in r ? r.result.messageId : '')) };
}

describe('idle FIFO shards expire', () => {
  it('deleted by TTL: the shard reopens above every old sequence, in order for every group; old handles 409', async () => {
    const h = await newHarness();
    const { oldSeqs, staleHandle, oldId } = await idleShard(h);
    expect(await deleteExpired(h)).toBeGreaterThan(0);
    // Nothing of the shard is left: segments, sentinel, both groups' cursors.
    expect(await items(h, streamPk('t:ledger/k:A'))).toEqual([]);
    expect((await items(h, cursorPk('c'))).filter((i) => String(i.sk).includes('/k:'))).toEqual([]);
    // A late commit of a lease whose cursor is gone answers cleanly and creates nothing.
    expect((await h.queue.commit('s', [staleHandle]))[0]).toMatchObject({ error: { code: 'ReceiptHandleExpired' } });
    expect((await items(h, cursorPk('s'))).filter((i) => String(i.sk).includes('/k:'))).toEqual([]);
    await expect(h.queue.getMessage('ledger', oldId)).rejects.toMatchObject({ code: 'MessageNotFound' });
    const { ids } = await reactivated(h, oldSeqs);
    for (const g of ['c', 's']) expect(await h.admin.getGroup(g)).toMatchObject({ backlog: 0, inFlight: 0 });
    const query = await h.queue.getMessage('ledger', ids[1]!);
    expect(query.groups.map((d: { group: string; state: string }) => [d.group, d.state]).sort()).toEqual([
      ['c', 'committed'],
      ['s', 'committed'],
    ]);
  }, 120_000);

  it('expired but not yet deleted: read as absent, never refreshed; the new epoch is closed off from the old one', async () => {
    const h = await newHarness();
    const { oldSeqs, staleHandle } = await idleShard(h);
    // Still stored: the cursors (ttl passed) and the old segments.
    expect((await items(h, cursorPk('s'))).filter((i) => String(i.sk).includes('/k:'))).toHaveLength(1);
    expect((await h.queue.commit('s', [staleHandle]))[0]).toMatchObject({ error: { code: 'ReceiptHandleExpired' } });
    // Statistics skip expired cursors: nothing waits, nothing is in flight.
    expect(await h.admin.getGroup('s')).toMatchObject({ backlog: 0, inFlight: 0 });
    const { seqs } = await reactivated(h, oldSeqs);
    // The new epoch opened with a closing marker right after the old head (no late writer lands there).
    const shard = await items(h, streamPk('t:ledger/k:A'));
    const marker = shard.find((i) => i.sk !== '#' && Number(i.n) === 0);
    expect(Number(marker?.sk)).toBe(Math.max(...oldSeqs) + 1);
    expect(shard.find((i) => i.sk === '#')).toMatchObject({ eb: seqs[0]! - 1, ttl: expect.any(Number) });
    for (const g of ['c', 's']) expect(await h.admin.getGroup(g)).toMatchObject({ backlog: 0, inFlight: 0 });
  }, 120_000);

  it('a live cursor over a shard whose messages expired: the backlog counts the new epoch, not the jump', async () => {
    const h = await newHarness();
    await h.admin.putTopic('ledger', topic({ type: 'fifo', retentionSeconds: 3600 }));
    await h.admin.putGroup('c', group('ledger', { deliveryMode: 'concurrent', visibilityTimeoutSeconds: 60 }));
    h.clock.advance(1);
    const [a1] = await h.queue.sendBatch('ledger', [send('a1', { shardKey: 'A' })]);
    expect(bodiesOf(await receiveAll(h, 'c', 1))).toEqual(['a1']);
    h.clock.advance(2 * 3_600_000); // past retention, far below the cursor's ttl
    const b = await h.queue.sendBatch('ledger', ['b1', 'b2'].map((x) => send(x, { shardKey: 'A' })));
    const first = 'result' in b[0]! ? b[0].result.sequence! : 0;
    expect(first).toBeGreaterThan('result' in a1! ? a1.result.sequence! : 0);
    // The receive that absorbs the notice takes one message; one still waits.
    const [got] = await h.queue.receive('c', { maxMessages: 1, waitSeconds: 0 });
    expect([got?.body, got?.sequence]).toEqual(['b1', first]);
    expect(await h.admin.getGroup('c')).toMatchObject({ backlog: 1, inFlight: 1 });
  }, 60_000);

  it('at scale: 2,000 shards sent once each all expire; stats and receive then read O(batch), not O(shards)', async () => {
    const h = await newHarness();
    await h.admin.putTopic('ledger', topic({ type: 'fifo', retentionSeconds: 3600 }));
    await h.admin.putGroup('g', group('ledger', { deliveryMode: 'concurrent', visibilityTimeoutSeconds: 60 }));
    h.clock.advance(1);
    for (let b = 0; b < 20; b++) {
      await h.queue.sendBatch('ledger', Array.from({ length: 100 }, (_, i) => send(`m${b * 100 + i}`, { shardKey: `customer-${b * 100 + i}` })));
      // Each receive absorbs the batch's notices: a cursor per shard (most left on the ready index).
      await h.queue.receive('g', { maxMessages: 10, waitSeconds: 0 });
    }
    // A shard cursor's creation that conflicts with another on its notice cursor's `sv` check is
    // refused and its notices are read again by the next receive (docs/design.md, Seek on FIFO topics).
    const shardCursors = async () => (await items(h, cursorPk('g'))).filter((i) => String(i.sk).includes('/k:')).length;
    for (let i = 0; i < 10 && (await shardCursors()) < 2000; i++) await h.queue.receive('g', { maxMessages: 10, waitSeconds: 0 });
    expect(await shardCursors()).toBe(2000);
    h.clock.advance(16 * DAY);
    const counted = countRequests(h);
    // Expired, not deleted: stats read the cursors once and count none of them.
    expect(await h.admin.getGroup('g')).toMatchObject({ backlog: 0, inFlight: 0 });
    const statsRequests = counted.take();
    expect(await h.queue.receive('g', { maxMessages: 10, waitSeconds: 0 })).toEqual([]);
    const receiveRequests = counted.take();
    await deleteExpired(h);
    counted.take();
    expect(await h.admin.getGroup('g')).toMatchObject({ backlog: 0, inFlight: 0 });
    const statsAfter = counted.take();
    expect(await h.queue.receive('g', { maxMessages: 10, waitSeconds: 0 })).toEqual([]);
    const receiveAfter = counted.take();
    console.log(
      `2,000 expired shards: stats ${statsRequests} requests before TTL deletion, ${statsAfter} after; ` +
        `a receive ${receiveRequests} before (it removes the expired cursors it meets), ${receiveAfter} after`,
    );
    // After deletion nothing of the 2,000 shards is read: the same requests as a group that never had
    // them (with the notice cursors' Query and the 4 notice streams read for messages no receive
    // has discovered: group-figures.ts).
    expect(statsAfter).toBeLessThanOrEqual(11);
    expect(receiveAfter).toBeLessThanOrEqual(12);
    // A receive before deletion reads at most a page of the ready index (40 entries for 10 messages).
    expect(receiveRequests).toBeLessThanOrEqual(12 + 2 * 40);
    // An old shard and a new one both deliver.
    await h.queue.sendBatch('ledger', [send('again', { shardKey: 'customer-7' }), send('new', { shardKey: 'customer-x' })]);
    expect(bodiesOf(await receiveAll(h, 'g', 2)).sort()).toEqual(['again', 'new']);
  }, 600_000); // ~150 s alone on 2 cores; 300 s was passed on a machine loaded to ~11
});

/** Counts the DynamoDB requests the harness's client sends. */
function countRequests(h: Harness) {
  let n = 0;
  h.doc.middlewareStack.add((next) => async (args) => {
    n++;
    return next(args);
  }, { step: 'initialize', name: `count-${Math.random()}` });
  return {
    take: () => {
      const out = n;
      n = 0;
      return out;
    },
  };
}

describe('idle FIFO shards expire, with seeks (docs/design.md, Seek: shards whose state expired)', () => {
  /** Group `c` and `s` know shard A (expired, not deleted) and shard B (live, sent after the idle time). */
  async function expiredAndLive(h: Harness) {
    const idle = await idleShard(h);
    await h.queue.sendBatch('ledger', [send('b0', { shardKey: 'B' })]);
    expect(bodiesOf(await receiveAll(h, 'c', 1))).toEqual(['b0']);
    expect(bodiesOf(await receiveAll(h, 's', 1))).toEqual(['b0']);
    return idle;
  }
  const shardCursors = async (h: Harness, g: string) => (await items(h, cursorPk(g))).filter((i) => String(i.sk).includes('/k:'));

  it('a seek moves only live shard cursors; an expired one stays absent, never refreshed, and its old handle stays stale', async () => {
    const h = await newHarness();
    const seeker = new Seeker(h.stores, h.clock);
    const { staleHandle } = await expiredAndLive(h);
    // Group c committed shard A, so no receive met its expired cursor: still stored, past its ttl.
    const expired = (await shardCursors(h, 'c')).find((i) => String(i.sk).endsWith('/k:A'));
    expect(Number(expired?.ttl) * 1000).toBeLessThanOrEqual(h.clock.now());
    expect(await seeker.seek('c', 'earliest', undefined)).toMatchObject({ shards: [{ topics: ['ledger'], moved: 1 }] });
    // Not moved, so not refreshed: the same item, still past its ttl.
    expect((await shardCursors(h, 'c')).find((i) => String(i.sk).endsWith('/k:A'))).toEqual(expired);
    // Earliest replays what is retained: B's message, not A's (past retention).
    expect(bodiesOf(await receiveAll(h, 'c', 2))).toEqual(['b0']);
    expect(await h.queue.receive('c', { maxMessages: 10, waitSeconds: 0 })).toEqual([]);
    // Group s held a lease on A; a receive met its expired cursor and removed it (as TTL would).
    expect(await seeker.seek('s', 'earliest', undefined)).toMatchObject({ shards: [{ topics: ['ledger'], moved: 1 }] });
    expect((await h.queue.commit('s', [staleHandle]))[0]).toMatchObject({ error: { code: 'ReceiptHandleExpired' } });
    expect(bodiesOf(await receiveAll(h, 's', 2))).toEqual(['b0']);
    expect(await h.queue.receive('s', { maxMessages: 10, waitSeconds: 0 })).toEqual([]);
  }, 120_000);

  it.each([false, true])('an expired shard used again after a seek starts where the seek put the group (TTL deleted: %s)', async (deleted) => {
    const h = await newHarness();
    const seeker = new Seeker(h.stores, h.clock);
    const { oldSeqs } = await expiredAndLive(h);
    if (deleted) expect(await deleteExpired(h)).toBeGreaterThan(0);
    // c: latest (its floor is now + 1); s: a time after B's message (nothing retained is at or after it).
    await seeker.seek('c', 'latest', undefined);
    h.clock.advance(1000);
    await seeker.seek('s', h.clock.now(), undefined);
    h.clock.advance(1000);
    // Messages sent after both seeks are delivered to both, in order, above every old sequence:
    // the new cursor of shard A is created under the seek count `sv` the notice cursor holds.
    const sent = await h.queue.sendBatch('ledger', ['a3', 'a4', 'a5'].map((b) => send(b, { shardKey: 'A' })));
    const seqs = sent.map((r) => ('result' in r ? r.result.sequence! : 0));
    expect(seqs[0]).toBeGreaterThan(Math.max(...oldSeqs));
    for (const g of ['c', 's']) {
      const got = await receiveAll(h, g, 3);
      expect(got.map((m) => [m.body, m.sequence, m.deliveryCount])).toEqual(seqs.map((seq, i) => [`a${i + 3}`, seq, 1]));
      expect(await h.queue.receive(g, { maxMessages: 10, waitSeconds: 0 })).toEqual([]);
      expect(await h.admin.getGroup(g)).toMatchObject({ backlog: 0, inFlight: 0 });
    }
  }, 120_000);

  it('a shard cursor to replace an expired one, planned from notices read before a seek, is refused and replaced under the seek', async () => {
    const h = await newHarness();
    const seeker = new Seeker(h.stores, h.clock);
    await expiredAndLive(h);
    const notices = noticeStream('t:ledger', noticeBucket('A'));
    const before = await h.stores.cursors.get('s', notices, h.clock.now());
    await seeker.seek('s', 'latest', undefined);
    // The expired cursor does not make the stale creation pass: the seek count check refuses it.
    expect(await h.stores.cursors.raiseKnown('s', 't:ledger/k:A', 1, 2, h.clock.now(), { noticeStream: notices, version: before?.seek?.version })).toBe(false);
    expect(await h.stores.cursors.get('s', 't:ledger/k:A', h.clock.now())).toBeUndefined();
    const after = await h.stores.cursors.get('s', notices, h.clock.now());
    expect(await h.stores.cursors.raiseKnown('s', 't:ledger/k:A', 7, 8, h.clock.now(), { noticeStream: notices, version: after?.seek?.version })).toBe(true);
    expect(await h.stores.cursors.get('s', 't:ledger/k:A', h.clock.now())).toMatchObject({ next: 7, known: 8, leases: new Map() });
  }, 120_000);
});
