/**
 * A claim reads its expired leases' segments oldest first, a chunk at a time, until it holds what
 * its answer can (lib/services/expired-lease-records.ts).
 */
import { describe, expect, it } from 'vitest';
import type { Segment } from '../../lib/adapters/dynamodb/stream-log.js';
import type { Lease } from '../../lib/domain/cursor.js';
import { EXPIRED_FIRST_CHUNK, readExpiredLeaseRecords } from '../../lib/services/expired-lease-records.js';
import { FakeClock } from '../helpers/stores.js';
import { record } from '../helpers/records.js';

const clock = new FakeClock();
const lease = (seq: number): Lease => ({ seq, expiresAt: 0, token: `1.${seq}`, deliveries: 1, segment: seq, topic: 't', pending: false });
const leases = (n: number) => Array.from({ length: n }, (_, i) => lease(i + 1));

/** One record per segment, `bodyBytes` long; segments listed in `gone` are missing. Records each call's keys. */
function store(bodyBytes: number, gone: number[] = []) {
  const calls: number[][] = [];
  const getSegments = async (keys: Array<{ stream: string; seq: number }>): Promise<Segment[]> => {
    calls.push(keys.map((k) => k.seq));
    return keys
      .filter((k) => !gone.includes(k.seq))
      .map((k) => ({ stream: k.stream, seq: k.seq, count: 1, records: [{ ...record(clock, `m${k.seq}`), body: 'x'.repeat(bodyBytes) }] }));
  };
  return { calls, getSegments };
}

describe('expired lease records', () => {
  it('small messages: all 100 in two reads (the first chunk, then a chunk sized by its bytes)', async () => {
    const { calls, getSegments } = store(100);
    const got = await readExpiredLeaseRecords(getSegments, 's', leases(100), 100, 5_000_000);
    expect(got.size).toBe(100);
    expect(calls.map((c) => c.length)).toEqual([EXPIRED_FIRST_CHUNK, 84]);
  });

  it('the largest messages: stops once the answer’s room is held, far below 100 segments', async () => {
    const { calls, getSegments } = store(256 * 1024 * 1.37);
    const got = await readExpiredLeaseRecords(getSegments, 's', leases(100), 100, 5_000_000);
    const read = calls.flat();
    // 5 MB of ~350 KB records is 14-15; the first chunk reads 16 and stops.
    expect(read).toEqual(Array.from({ length: EXPIRED_FIRST_CHUNK }, (_, i) => i + 1));
    expect(got.size).toBe(EXPIRED_FIRST_CHUNK);
    expect([...got.keys()]).toEqual(read);
  });

  it('stops at `want` records; a missing segment is an entry without a record and does not count', async () => {
    const { calls, getSegments } = store(10, [2]);
    const got = await readExpiredLeaseRecords(getSegments, 's', leases(40), 3, 5_000_000);
    expect(calls).toHaveLength(1);
    expect(got.has(2)).toBe(true);
    expect(got.get(2)).toBeUndefined();
    expect([...got.values()].filter(Boolean)).toHaveLength(EXPIRED_FIRST_CHUNK - 1);
  });

  it('no expired lease: no read', async () => {
    const { calls, getSegments } = store(10);
    expect((await readExpiredLeaseRecords(getSegments, 's', [], 10, 5_000_000)).size).toBe(0);
    expect(calls).toEqual([]);
  });
});
