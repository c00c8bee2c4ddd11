/**
 * A claim reads its expired leases' segments a chunk at a time, up to what its answer can hold
 * (lib/services/expired-lease-records.ts, docs/design.md, Receive, "Expired leases read in
 * chunks"), at the maximum: leases of the largest messages. Before, one receive read every expired
 * lease's segment at once — 100 of them ≈ 35 MB in the 128 MB receive function.
 */
import { randomBytes } from 'node:crypto';
import { beforeEach, describe, expect, it } from 'vitest';
import { EXPIRED_CHUNK } from '../../lib/services/expired-lease-records.js';
import { group, topic } from '../helpers/builders.js';
import { newHarness, send, type Harness } from '../helpers/stores.js';

let h: Harness;
/** Segment keys (`S#…`) asked for by BatchGetItem while counting. */
let segmentKeys: number;
let counting = false;

beforeEach(async () => {
  h = await newHarness();
  segmentKeys = 0;
  counting = false;
  h.doc.middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as { RequestItems?: Record<string, { Keys?: Array<{ pk?: unknown }> }> };
      if (counting && context.commandName === 'BatchGetItemCommand') {
        for (const request of Object.values(input.RequestItems ?? {})) segmentKeys += (request.Keys ?? []).filter((k) => String(k.pk).startsWith('S#')).length;
      }
      return next(args);
    },
    { step: 'initialize', name: 'countSegmentKeys' },
  );
});

/** The largest message the API takes, stored as large as it gets (≈ 342 KiB of base64, one segment per send). */
const largest = (i: number) => ({
  ...send(Buffer.concat([Buffer.from(String(i).padStart(3, '0')), randomBytes(256 * 1024 - 3)]).toString('base64'), { shardKey: 'K' }),
  encoding: 'base64' as const,
});

describe('expired leases of the largest messages', () => {
  it('a receive reads only the chunk its answer can hold; all come back in order, before a newer message', async () => {
    const total = 30;
    await h.admin.putTopic('blobs', topic({ type: 'fifo' }));
    await h.admin.putGroup('g', group('blobs', { deliveryMode: 'concurrent', visibilityTimeoutSeconds: 30, maxDeliveries: 5 }));
    for (let i = 0; i < total; i++) await h.queue.send('blobs', largest(i));
    let leased = 0;
    for (let round = 0; round < 20 && leased < total; round++) leased += (await h.queue.receive('g', { maxMessages: 100, waitSeconds: 0 })).length;
    expect(leased).toBe(total);
    // Every lease expires (visibility and the first retry delay); a newer message arrives.
    h.clock.advance(31_001 + 1_000);
    await h.queue.send('blobs', send('newer', { shardKey: 'K' }));

    counting = true;
    const first = await h.queue.receive('g', { maxMessages: 100, waitSeconds: 0 });
    counting = false;
    // ≈ 14 fit a 5 MB answer; the claim read the first chunk of 16, not all 30 segments.
    expect(segmentKeys).toBe(EXPIRED_CHUNK);
    expect(first.length).toBeGreaterThan(10);
    expect(first.length).toBeLessThan(EXPIRED_CHUNK);

    const order = [...first];
    for (let round = 0; round < 20; round++) {
      const got = await h.queue.receive('g', { maxMessages: 100, waitSeconds: 0 });
      if (got.length === 0) break;
      order.push(...got);
    }
    const bodies = order.map((m) => (m.body === 'newer' ? 'newer' : Buffer.from(m.body, 'base64').subarray(0, 3).toString()));
    // Each redelivered once, oldest first, and the newer message only after all of them.
    expect(bodies).toEqual([...Array.from({ length: total }, (_, i) => String(i).padStart(3, '0')), 'newer']);
    expect(order.slice(0, total).every((m) => m.deliveryCount === 2)).toBe(true);
  }, 300_000);

  it('at their last delivery every one is dead-lettered — none past the chunk read is closed as gone', async () => {
    const total = 30;
    await h.admin.putTopic('blobs', topic({}));
    await h.admin.putGroup('g', group('blobs', { visibilityTimeoutSeconds: 30, maxDeliveries: 1 }));
    for (let i = 0; i < total; i++) await h.queue.send('blobs', { ...largest(i), shardKey: undefined });
    let leased = 0;
    for (let round = 0; round < 20 && leased < total; round++) leased += (await h.queue.receive('g', { maxMessages: 100, waitSeconds: 0 })).length;
    expect(leased).toBe(total);
    h.clock.advance(30_001);
    // Dead letters count for nothing in the answer: a claim goes through every expired lease it read.
    for (let round = 0; round < 10; round++) await h.queue.receive('g', { maxMessages: 100, waitSeconds: 0 });
    expect(await h.admin.getGroup('g')).toMatchObject({ deadLettered: total, inFlight: 0 });
  }, 300_000);
});
