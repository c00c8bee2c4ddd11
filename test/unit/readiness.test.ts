/** The ready-index decisions of a commit: the claim's guess, the retry from the cursor as it was, the last resort. */
import { describe, expect, it } from 'vitest';
import { toState } from '../../lib/adapters/dynamodb/cursor-item.js';
import type { CursorState } from '../../lib/domain/cursor.js';
import { COMMIT_ATTEMPTS, guessedReadiness, readinessFor, retryReadiness } from '../../lib/domain/readiness.js';

/** A FIFO shard cursor as stored: next `nx`, known head `kn`, leases by sequence number and token. */
const cursor = (nx: number, kn: number | undefined, leases: Record<number, string>): CursorState =>
  toState({
    pk: 'C#g',
    sk: 't:f/k:A',
    nx,
    ns: nx,
    ...(kn === undefined ? {} : { kn }),
    fl: Object.fromEntries(Object.entries(leases).map(([seq, k]) => [seq, { e: 0, k, d: 1, g: Number(seq) }])),
    dn: {},
  });

describe('commit readiness', () => {
  it('first writes what the claim guessed in the tokens, guarded (no hint: ready now)', () => {
    expect(guessedReadiness(['1.a.d'])).toEqual({ readiness: 'drop', guarded: true });
    expect(guessedReadiness(['1.a.k', '1.b.d'])).toEqual({ readiness: 'drop', guarded: true });
    expect(guessedReadiness(['1.a'])).toEqual({ readiness: 'ready', guarded: true });
  });

  it('decides from the cursor: known messages after nx → ready; else leases left → keep; else drop', () => {
    expect(readinessFor(cursor(6, 8, { 5: '1.a' }), 1)).toEqual({ readiness: 'ready', guarded: true });
    expect(readinessFor(cursor(6, 5, { 4: '1.a', 5: '1.b' }), 1)).toEqual({ readiness: 'keep', guarded: true });
    expect(readinessFor(cursor(6, 5, { 5: '1.a' }), 1)).toEqual({ readiness: 'drop', guarded: true });
  });

  it('retries only while every lease still carries its token, and ends with ready now, unconditionally', () => {
    const read = cursor(6, 5, { 5: '1.a' });
    expect(retryReadiness(read, [{ seq: 5, token: '1.a' }], 1)).toEqual({ readiness: 'drop', guarded: true });
    expect(retryReadiness(read, [{ seq: 5, token: '1.a' }], COMMIT_ATTEMPTS - 1)).toEqual({ readiness: 'ready', guarded: false });
    expect(retryReadiness(read, [{ seq: 5, token: '1.a' }], COMMIT_ATTEMPTS)).toBeUndefined();
    expect(retryReadiness(read, [{ seq: 5, token: '2.other' }], 1)).toBeUndefined();
    expect(retryReadiness(read, [{ seq: 4, token: '1.a' }], 1)).toBeUndefined();
  });
});
