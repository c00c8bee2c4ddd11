/**
 * A claim reads its expired leases' segments oldest first, a chunk at a time, until it holds what
 * its answer can (lib/services/expired-lease-records.ts).
 */
import { describe, expect, it } from 'vitest';
import type { Segment } from '../../lib/adapters/dynamodb/stream-log.js';
import type { Lease } from '../../lib/domain/cursor.js';
import { EXPIRED_CHUNK, readExpiredLeaseRecords } from '../../lib/services/expired-lease-records.js';
import { FakeClock } from '../helpers/stores.js';
import { record } from '../helpers/records.js';

const clock = new FakeClock();
const lease = (seq: number, deliveries = 1): Lease => ({ seq, expiresAt: 0, token: `${deliveries}.${seq}`, deliveries, segment: seq, topic: 't', pending: false });
const LIVE = () => true;
const MAX_DELIVERIES = 5;
const leases = (n: number) => Array.from({ length: n }, (_, i) => lease(i + 1));

/** One record per segment, `bodyBytes` long (or `sizeOf(seq)`); segments listed in `gone` are missing. Records each call's keys. */
function store(bodyBytes: number, gone: number[] = [], sizeOf: (seq: number) => number = () => bodyBytes) {
  const calls: number[][] = [];
  const getSegments = async (keys: Array<{ stream: string; seq: number }>): Promise<Segment[]> => {
    calls.push(keys.map((k) => k.seq));
    return keys
      .filter((k) => !gone.includes(k.seq))
      .map((k) => ({ stream: k.stream, seq: k.seq, count: 1, records: [{ ...record(clock, `m${k.seq}`), body: 'x'.repeat(sizeOf(k.seq)) }] }));
  };
  return { calls, getSegments };
}

describe('expired lease records', () => {
  it('small messages: all 100, 16 segments a read', async () => {
    const { calls, getSegments } = store(100);
    const got = await readExpiredLeaseRecords(getSegments, 's', leases(100), 100, 5_000_000, LIVE, MAX_DELIVERIES);
    expect(got.size).toBe(100);
    expect(calls.map((c) => c.length)).toEqual([16, 16, 16, 16, 16, 16, 4]);
  });

  it('the largest messages: stops once the answer’s room is held, far below 100 segments', async () => {
    const { calls, getSegments } = store(256 * 1024 * 1.37);
    const got = await readExpiredLeaseRecords(getSegments, 's', leases(100), 100, 5_000_000, LIVE, MAX_DELIVERIES);
    const read = calls.flat();
    // 5 MB of ~350 KB records is 14-15; the first chunk reads 16 and stops.
    expect(read).toEqual(Array.from({ length: EXPIRED_CHUNK }, (_, i) => i + 1));
    expect([...got.keys()]).toEqual(read);
  });

  it('mixed sizes: small messages first never let one read take the large ones all at once (review)', async () => {
    const { calls, getSegments } = store(0, [], (seq) => (seq <= 16 ? 100 : 350_000));
    await readExpiredLeaseRecords(getSegments, 's', leases(100), 100, 5_000_000, LIVE, MAX_DELIVERIES);
    expect(Math.max(...calls.map((c) => c.length))).toBe(EXPIRED_CHUNK);
    expect(calls.flat().length).toBeLessThanOrEqual(2 * EXPIRED_CHUNK);
  });

  it('stops at `want` records to deliver again; a missing segment is an entry without a record and does not count', async () => {
    const { calls, getSegments } = store(10, [2]);
    const got = await readExpiredLeaseRecords(getSegments, 's', leases(40), 3, 5_000_000, LIVE, MAX_DELIVERIES);
    expect(calls).toHaveLength(1);
    expect(got.has(2)).toBe(true);
    expect(got.get(2)).toBeUndefined();
    expect([...got.values()].filter(Boolean)).toHaveLength(EXPIRED_CHUNK - 1);
  });

  it('records past retention are entries without a record, and neither they nor dead letters count toward `want` (review)', async () => {
    const { calls, getSegments } = store(10);
    // The first 16 are past retention, the next 16 at their last delivery: none is delivered again.
    const expired = [...leases(16), ...Array.from({ length: 16 }, (_, i) => lease(17 + i, MAX_DELIVERIES)), ...Array.from({ length: 8 }, (_, i) => lease(33 + i))];
    const got = await readExpiredLeaseRecords(getSegments, 's', expired, 4, 5_000_000, (r) => Number(r.messageId.slice(1)) > 16, MAX_DELIVERIES);
    expect(calls.map((c) => c.length)).toEqual([16, 16, 8]);
    expect([...got.entries()].filter(([, r]) => r === undefined).map(([seq]) => seq)).toEqual(Array.from({ length: 16 }, (_, i) => i + 1));
    expect(got.get(17)).toBeDefined();
    expect(got.get(33)).toBeDefined();
  });

  it('no expired lease: no read', async () => {
    const { calls, getSegments } = store(10);
    expect((await readExpiredLeaseRecords(getSegments, 's', [], 10, 5_000_000, LIVE, MAX_DELIVERIES)).size).toBe(0);
    expect(calls).toEqual([]);
  });
});
