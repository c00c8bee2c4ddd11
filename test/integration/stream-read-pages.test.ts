/**
 * A receive's Query of stream segments stops at 1 MB of data read (DynamoDB Local enforces it as
 * DynamoDB does) and answers `LastEvaluatedKey`: the claim follows such a cut page, within the
 * answer's room, instead of taking it for the end of what it asked for (docs/design.md, Receive,
 * "A page cut at 1 MB").
 */
import { randomBytes } from 'node:crypto';
import { beforeEach, describe, expect, it } from 'vitest';
import { jsonBytes } from '../../lib/domain/answer-budget.js';
import { Limits } from '../../lib/domain/model.js';
import { READ_PAGES_MAX, StreamLog } from '../../lib/adapters/dynamodb/stream-log.js';
import { group, topic } from '../helpers/builders.js';
import { record } from '../helpers/records.js';
import { newHarness, send, type Harness } from '../helpers/stores.js';

let h: Harness;
/** Query calls on stream segments (`S#…` keys, not the head's `Limit: 1` reads) while counting. */
let segmentQueries: number;
let counting = false;

beforeEach(async () => {
  h = await newHarness();
  segmentQueries = 0;
  counting = false;
  h.doc.middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as { KeyConditionExpression?: string; ExpressionAttributeValues?: Record<string, unknown>; Limit?: number };
      const pk = input.ExpressionAttributeValues?.[':pk'];
      if (counting && context.commandName === 'QueryCommand' && typeof pk === 'string' && pk.startsWith('S#') && (input.Limit ?? 0) > 1) segmentQueries++;
      return next(args);
    },
    { step: 'initialize', name: 'countSegmentQueries' },
  );
});

/**
 * The largest message the API takes, stored as large as it gets: 256 KiB of incompressible bytes
 * as base64 text (≈ 342 KiB, one segment per send), so three of them pass 1 MB.
 */
const largest = (i: number) => ({ ...send(`${String(i).padStart(3, '0')}${randomBytes(256 * 1024 - 3).toString('base64')}`), encoding: 'base64' as const });

describe('a standard partition whose next segments pass 1 MB', () => {
  beforeEach(async () => {
    await h.admin.putTopic('blobs', topic({ partitions: 1 }));
    await h.admin.putGroup('readers', group('blobs'));
  });

  it('one receive returns all 6 largest messages (the first Query page holds about 3)', async () => {
    const sent = [];
    for (let i = 0; i < 6; i++) sent.push((await h.queue.send('blobs', largest(i))).messageId);
    counting = true;
    const got = await h.queue.receive('readers', { maxMessages: 10, waitSeconds: 0 });
    counting = false;
    expect(got.map((m) => m.messageId).sort()).toEqual([...sent].sort());
    expect((await h.admin.getGroup('readers')).inFlight).toBe(6);
    // 6 × 342 KiB: two pages of at most 1 MB, and a third only if the second stopped short of the end.
    expect(segmentQueries).toBeGreaterThanOrEqual(2);
    expect(segmentQueries).toBeLessThanOrEqual(3);
  });

  it('maxMessages 100 over 20 of them: the answer fills its 5 MB, and the reads stop near it', async () => {
    for (let i = 0; i < 20; i++) await h.queue.send('blobs', largest(i));
    counting = true;
    const first = await h.queue.receive('readers', { maxMessages: 100, waitSeconds: 0 });
    counting = false;
    expect(jsonBytes({ messages: first })).toBeLessThanOrEqual(Limits.answerMaxBytes);
    // ≈ 350 KB of JSON each: 5 MB holds 14 (a cut page alone gave 2 or 3).
    expect(first.length).toBeGreaterThanOrEqual(13);
    expect((await h.admin.getGroup('readers')).inFlight).toBe(first.length);
    // Pages stop once the segments read reach the answer's room (5 pages of 3 here), not at 20 segments' worth (7).
    expect(segmentQueries).toBeLessThanOrEqual(5);
    const rest = await h.queue.receive('readers', { maxMessages: 100, waitSeconds: 0 });
    const ids = new Set([...first, ...rest].map((m) => m.messageId));
    expect(ids.size).toBe(20);
  });
});

describe('a cut page that already holds what the receive wants', () => {
  it('is not followed: batched segments of 100 messages, 10 wanted, one Query', async () => {
    await h.admin.putTopic('blobs', topic({ partitions: 1 }));
    await h.admin.putGroup('readers', group('blobs'));
    // 3.2 KB of random base64 each: a batch of 100 fills about one segment (packed: ≈ 240 KB).
    const small = () => ({ ...send(randomBytes(2400).toString('base64')), encoding: 'base64' as const });
    for (let b = 0; b < 8; b++) expect((await h.queue.sendBatch('blobs', Array.from({ length: 100 }, small))).every((r) => 'result' in r)).toBe(true);
    // The stream's first Query page is cut at 1 MB before its end.
    const firstPage = await h.stores.log.readSegments('t:blobs/p:0', 0, 11, { maxPages: 1 });
    expect(firstPage.more).toBe(true);
    expect(firstPage.segments.length).toBeLessThan((await h.stores.log.read('t:blobs/p:0', 0, 100)).length);
    counting = true;
    const got = await h.queue.receive('readers', { maxMessages: 10, waitSeconds: 0 });
    counting = false;
    expect(got).toHaveLength(10);
    // The first page (≈ 1 MB, hundreds of messages) is cut, and already reaches 10 past the cursor.
    expect(segmentQueries).toBe(1);
  });
});

describe('a FIFO shard whose next segments pass 1 MB', () => {
  it('a concurrent group gets all 6 in order in one receive', async () => {
    await h.admin.putTopic('ledger', topic({ type: 'fifo' }));
    await h.admin.putGroup('auditors', group('ledger', { deliveryMode: 'concurrent' }));
    const sent = [];
    for (let i = 0; i < 6; i++) sent.push((await h.queue.send('ledger', { ...largest(i), shardKey: 'acct-1' })).messageId);
    const got = await h.queue.receive('auditors', { maxMessages: 10, waitSeconds: 0 });
    expect(got.map((m) => m.messageId)).toEqual(sent);
  });
});

describe('StreamLog.readSegments: a page cut at 1 MB is followed within its bounds', () => {
  /** 12 segments of one ≈ 342 KiB record each: a Query page holds 3 of them. */
  const fill = async () => {
    const log = new StreamLog(h.doc, h.table, h.clock);
    for (let i = 0; i < 12; i++) {
      await log.append('t:big/p:0', () => ({ records: [{ ...record(h.clock, `m${i}`), body: randomBytes(256 * 1024).toString('base64') }] }));
    }
    return log;
  };
  const ids = (read: { segments: Array<{ records: Array<{ messageId: string }> }> }) => read.segments.map((s) => s.records[0]?.messageId);

  it('reads up to its limit across pages, and says when the stream may go on', async () => {
    const log = await fill();
    counting = true;
    const all = await log.readSegments('t:big/p:0', 0, 13);
    counting = false;
    expect(ids(all)).toEqual(Array.from({ length: 12 }, (_, i) => `m${i}`));
    expect(all.more).toBe(false);
    expect(segmentQueries).toBeGreaterThanOrEqual(4);
    // Sequence numbers start at 1: m2 is seq 3.
    const some = await log.readSegments('t:big/p:0', 3, 5);
    expect(ids(some)).toEqual(['m2', 'm3', 'm4', 'm5', 'm6']);
    expect(some.more).toBe(true);
    // `read` (first(), tests, tools) follows pages too.
    expect(await log.read('t:big/p:0', 0, 13)).toHaveLength(12);
  });

  it('stops after maxPages Queries, or once maxBytes were read, with more = true', async () => {
    const log = await fill();
    const onePage = await log.readSegments('t:big/p:0', 0, 13, { maxBytes: 1 });
    expect(onePage.segments.length).toBeGreaterThanOrEqual(2);
    expect(onePage.segments.length).toBeLessThanOrEqual(3);
    expect(onePage.more).toBe(true);
    const twoPages = await log.readSegments('t:big/p:0', 0, 13, { maxPages: 2 });
    expect(twoPages.segments.length).toBeGreaterThan(onePage.segments.length);
    expect(twoPages.segments.length).toBeLessThan(12);
    expect(twoPages.more).toBe(true);
    const byBytes = await log.readSegments('t:big/p:0', 0, 13, { maxBytes: 1_500_000 });
    expect(byBytes.segments).toHaveLength(twoPages.segments.length);
    expect(byBytes.more).toBe(true);
    expect(READ_PAGES_MAX).toBe(8);
    // `reach`: the first page ends past seq 2, so it is the only one.
    const reached = await log.readSegments('t:big/p:0', 0, 13, { reach: 2 });
    expect(reached.segments).toHaveLength(onePage.segments.length);
    expect(reached.more).toBe(true);
  });
});
