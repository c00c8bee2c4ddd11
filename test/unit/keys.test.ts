/**
 * Stored keys must never change: items written by an earlier version have to
 * be found by the next one. The expected values were computed with the code
 * as it was before the keys moved into keys.ts.
 */
import { describe, expect, it } from 'vitest';
import {
  checkIndexPkOf,
  keyIndexSk,
  messageIdOfKeyIndexSk,
  minuteOf,
  padMs,
  readyAtKey,
  readyAtOfKey,
  readyNowKey,
  wakeBucket,
} from '../../lib/adapters/dynamodb/keys.js';
import { noticeBucket } from '../../lib/domain/streams.js';
import { fnv1a32 } from '../../lib/domain/key-encoding.js';

describe('keys', () => {
  it('keeps the FNV-1a "ready now" keys and notice buckets of stored items', () => {
    expect(readyNowKey('t:f/k:A')).toBe('#8c0262b8');
    expect(readyNowKey('o:og/k:shard-42')).toBe('#0e0dc677');
    expect(readyNowKey('')).toBe('#811c9dc5');
    // The default 4 notice streams keep the buckets stored notices were written to.
    expect(['A', 'B', 'shard-42', '', 'é'].map((k) => noticeBucket(k))).toEqual([0, 1, 0, 1, 0]);
    expect(['A', 'B', 'shard-42', '', 'é'].map((k) => noticeBucket(k, 4))).toEqual([0, 1, 0, 1, 0]);
    expect(['A', 'B', 'shard-42', '', 'é'].map((k) => noticeBucket(k, 256))).toEqual(['A', 'B', 'shard-42', '', 'é'].map((k) => fnv1a32(k) % 256));
  });

  it('pads times to 13 digits (floored, never negative in the ready index) so they sort as numbers', () => {
    expect(padMs(1764500000123)).toBe('1764500000123');
    expect(padMs(30_000)).toBe('0000000030000');
    expect(readyAtKey(1764500000123.7)).toBe('1764500000123');
    expect(readyAtKey(-5)).toBe('0000000000000');
    expect(readyAtOfKey('0000000030000')).toBe(30_000);
    expect(readyAtOfKey(readyNowKey('t:f/k:A'))).toBe(0);
  });

  it('keeps wake buckets, due minutes, key-index entries and check-back partitions', () => {
    expect(wakeBucket('s', 1764500000)).toBe('s001764500000');
    expect(wakeBucket('m', 29408333)).toBe('m000029408333');
    expect(minuteOf(1764500000123)).toBe(29408333);
    const sk = keyIndexSk(1764500000123, 'mABC');
    expect(sk).toBe('1764500000123#mABC');
    expect(messageIdOfKeyIndexSk(sk)).toBe('mABC');
    expect(checkIndexPkOf('01KB000000000000000000000Z')).toBe('K#2');
  });
});
