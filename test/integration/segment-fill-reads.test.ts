/**
 * A receive's first Query of a stream asks for the segments its fill takes (docs/design.md, Receive,
 * "Reads sized by the segments' fill"; lib/adapters/dynamodb/segment-fill.ts): on DynamoDB Local,
 * a stream of batches of 10 is read 3 segments at a time instead of 11, every message still comes
 * once and in order, and a stream whose segments shrink is read on with a second page.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import type { DeliveredMessage } from '../../lib/domain/model.js';
import * as build from '../helpers/builders.js';
import { newHarness, send, type Harness } from '../helpers/stores.js';

let h: Harness;
/** Message segment Queries (`S#…` but notice streams' `/n:`, read forward: not the head's reads) while counting: the Limit asked, the segments got. */
let reads: Array<{ asked: number; got: number }>;
let counting = false;

beforeEach(async () => {
  h = await newHarness();
  reads = [];
  counting = false;
  h.doc.middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as { ExpressionAttributeValues?: Record<string, unknown>; Limit?: number; ScanIndexForward?: boolean };
      const pk = input.ExpressionAttributeValues?.[':pk'];
      const result = await next(args);
      if (counting && context.commandName === 'QueryCommand' && typeof pk === 'string' && pk.startsWith('S#') && !pk.includes('/n:') && input.ScanIndexForward !== false) {
        reads.push({ asked: input.Limit ?? 0, got: ((result.output as { Items?: unknown[] }).Items ?? []).length });
      }
      return result;
    },
    { step: 'initialize', name: 'countSegmentReads' },
  );
});

const receive = (max: number) => h.queue.receive('g', { maxMessages: max, waitSeconds: 0, topics: undefined });
const commit = (ms: DeliveredMessage[]) => h.queue.commit('g', ms.map((m) => m.receiptHandle));
const batchOf = (from: number, shardKey?: string) => Array.from({ length: 10 }, (_, i) => send(`m${from + i}`, shardKey === undefined ? {} : { shardKey }));

describe.each([
  ['a FIFO shard', build.topic({ type: 'fifo' }), 'hot'],
  ['a standard partition', build.topic({ partitions: 1 }), undefined],
] as const)('%s of batches of 10', (_what, spec, shardKey) => {
  beforeEach(async () => {
    await h.admin.putTopic('t', spec);
    await h.admin.putGroup('g', build.group(['t'], { deliveryMode: 'concurrent' }));
  });

  it('is read 3 segments a receive once its fill is known, and every message comes once, in order', async () => {
    for (let b = 0; b < 6; b++) await h.queue.sendBatch('t', batchOf(10 * b, shardKey));
    const bodies: string[] = [];
    counting = true;
    for (let round = 0; round < 8 && bodies.length < 60; round++) {
      reads = [];
      const got = await receive(10);
      bodies.push(...got.map((m) => m.body));
      await commit(got);
      // The first read of the stream knows nothing of it (11 asked); later ones ask for 3: two segments of 10 and one more.
      if (round > 0 && got.length > 0) {
        expect(reads.length).toBeGreaterThan(0);
        expect(reads.every((r) => r.asked <= 3)).toBe(true);
      }
    }
    counting = false;
    expect(bodies).toEqual(Array.from({ length: 60 }, (_, i) => `m${i}`));
    expect(await receive(10)).toEqual([]);
    expect((await h.admin.getGroup('g')).inFlight).toBe(0);
  });

  it('a group that skips most records (1 tag in 10) still gets 10 a receive: a sized read it goes through short is read again in full', async () => {
    await h.admin.putGroup('g', build.group([{ topic: 't', tags: ['a'] }], { deliveryMode: 'concurrent' }));
    const tagged = (b: number) => batchOf(10 * b, shardKey).map((m, i) => ({ ...m, tag: i === 0 ? 'a' : 'b' }));
    // Learn the fill (batches of 10) and pass the first batch's one match.
    await h.queue.sendBatch('t', tagged(0));
    await commit(await receive(10));
    for (let b = 1; b <= 30; b++) await h.queue.sendBatch('t', tagged(b));
    const bodies: string[] = [];
    for (let round = 0; round < 3; round++) {
      const got = await receive(10);
      expect(got).toHaveLength(10);
      bodies.push(...got.map((m) => m.body));
      await commit(got);
    }
    expect(bodies).toEqual(Array.from({ length: 30 }, (_, i) => `m${10 * (i + 1)}`));
  });

  it('a read the guess did not stop (it went on to a second page) is not read again, however little the claim takes of it', async () => {
    await h.admin.putGroup('g', build.group([{ topic: 't', tags: ['a'] }], { deliveryMode: 'concurrent' }));
    await h.queue.sendBatch('t', batchOf(0, shardKey).map((m, i) => ({ ...m, tag: i === 0 ? 'a' : 'b' })));
    await commit(await receive(10));
    // Singles now, 1 in 10 tagged for the group: the fill of 10 guesses too few segments, and a second page reads to limit + 1.
    for (let i = 10; i < 40; i++) await h.queue.send('t', send(`m${i}`, { tag: i % 10 === 0 ? 'a' : 'b', ...(shardKey === undefined ? {} : { shardKey }) }));
    counting = true;
    reads = [];
    const got = await receive(10);
    counting = false;
    expect(got.map((m) => m.body)).toEqual(['m10', 'm20']);
    expect(reads).toEqual([
      { asked: 3, got: 3 },
      { asked: 8, got: 8 },
    ]);
  });

  it('goes on with a second page when the segments shrink below the fill it learned', async () => {
    await h.queue.sendBatch('t', batchOf(0, shardKey));
    await commit(await receive(10));
    // Singles now: one segment each.
    for (let i = 10; i < 40; i++) await h.queue.send('t', send(`m${i}`, shardKey === undefined ? {} : { shardKey }));
    counting = true;
    reads = [];
    const got = await receive(10);
    counting = false;
    expect(got.map((m) => m.body)).toEqual(Array.from({ length: 10 }, (_, i) => `m${10 + i}`));
    // 3 asked from a fill of 10, then the rest of `limit + 1` in a second page.
    expect(reads.map((r) => r.asked)).toEqual([3, 8]);
    expect(reads.map((r) => r.got)).toEqual([3, 8]);
  });
});

describe('a sized read of a stream that ends right at what the claim needs', () => {
  it('reads on past `reach` and says the stream ends there (no `more`), as a read of limit + 1 segments did', async () => {
    await h.admin.putTopic('t', build.topic({ partitions: 1 }));
    const stream = 't:t/p:0';
    await h.queue.sendBatch('t', batchOf(0));
    const first = await h.stores.log.readSegments(stream, 1, 11, { reach: 11 });
    expect(first.segments.map((s) => s.count)).toEqual([10]);
    // Smaller segments now, ending exactly at the claim's reach: 4 + 3 + 3 positions from 11.
    for (const n of [4, 3, 3]) await h.queue.sendBatch('t', Array.from({ length: n }, (_, i) => send(`x${i}`)));
    counting = true;
    const read = await h.stores.log.readSegments(stream, 11, 11, { reach: 21 });
    counting = false;
    expect(read.segments.map((s) => s.count)).toEqual([4, 3, 3]);
    // The first page, sized by a fill of 10, asked 3 and got 3 ending at the reach; the next asked the rest and found none.
    expect(reads).toEqual([
      { asked: 3, got: 3 },
      { asked: 1, got: 0 },
    ]);
    expect(read.more).toBe(false);
  });
});
