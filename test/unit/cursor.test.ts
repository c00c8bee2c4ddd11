import { describe, expect, it } from 'vitest';
import { deliveriesOfToken, expiredLeases, leaseToken, seekEpochOfToken, tagMatches, type CursorState } from '../../lib/domain/cursor.js';

const cursor = (leases: Array<[number, number]>, done: number[] = []): CursorState => ({
  group: 'g',
  stream: 's',
  next: 100,
  segmentStart: 100,
  leases: new Map(leases.map(([seq, expiresAt]) => [seq, { seq, expiresAt, token: `1.${seq}`, deliveries: 1, segment: seq, topic: undefined, pending: false }])),
  done: new Map(done.map((seq) => [seq, { seq, token: 't', at: 0, outcome: 'committed' as const, deliveries: 1 }])),
  committed: 0,
  deadLettered: 0,
  known: undefined,
  readyAt: undefined,
});

describe('leases', () => {
  it('lists expired leases oldest message first, and only those', () => {
    const c = cursor([[9, 50], [3, 10], [5, 200], [4, 100]]);
    expect(expiredLeases(c, 100).map((l) => l.seq)).toEqual([3, 4, 9]);
    expect(expiredLeases(c, 5)).toEqual([]);
  });

  it('carries the delivery count in the token', () => {
    expect(deliveriesOfToken(leaseToken(7, 'abc'))).toBe(7);
    expect(deliveriesOfToken('garbage')).toBe(1);
  });

  it('carries the seek epoch after a seek, also under a readiness mark; none before', () => {
    expect(leaseToken(3, 'abc', 0)).toBe('3.abc');
    expect(leaseToken(3, 'abc')).toBe('3.abc');
    expect(leaseToken(3, 'abc', 2)).toBe('3.abc~2');
    expect(deliveriesOfToken(leaseToken(3, 'abc', 2))).toBe(3);
    expect(seekEpochOfToken(leaseToken(3, 'abc', 2))).toBe(2);
    expect(seekEpochOfToken(`${leaseToken(3, 'abc', 12)}.d`)).toBe(12);
    expect(seekEpochOfToken('3.abc.r')).toBe(0);
    expect(seekEpochOfToken('3.abc~x')).toBe(0);
  });
});

describe('tag filters', () => {
  it('match as subscriptions expect', () => {
    expect(tagMatches(undefined, undefined)).toBe(true);
    expect(tagMatches(['*'], undefined)).toBe(true);
    expect(tagMatches(['a', 'b'], 'b')).toBe(true);
    expect(tagMatches(['a'], 'b')).toBe(false);
    expect(tagMatches(['a'], undefined)).toBe(false);
  });
});
