import { describe, expect, it } from 'vitest';
import { SEGMENT_MAX_BYTES, TRANSACTION_MAX_BYTES, TRANSACTION_MAX_ITEMS, itemBytes, valueBytes } from '../../lib/adapters/dynamodb/item-size.js';
import { chunkAppends, noticeBytes, openingBytes, openingItems, segmentOverheadBytes, type SizedAppend } from '../../lib/services/append-chunks.js';

const KIB = 1024;
const append = (n: number, stream: string, recordBytes: number, shardKey?: string): SizedAppend<number> => ({
  item: n,
  stream,
  notice: shardKey === undefined ? undefined : { stream: 'ns/n:0', bytes: noticeBytes(shardKey) },
  recordBytes,
  companionBytes: recordBytes + 1024,
});

/** Bytes and items a chunk puts in one transaction, counted as chunkAppends promises to keep them. */
const cost = (chunk: Array<SizedAppend<number>>) => {
  const streams = new Map<string, number>();
  let bytes = 0;
  for (const a of chunk) {
    for (const [stream, add] of [[a.stream, a.recordBytes], ...(a.notice ? [[a.notice.stream, a.notice.bytes] as const] : [])] as const) {
      if (!streams.has(stream)) bytes += segmentOverheadBytes(stream) + openingBytes(stream);
      streams.set(stream, (streams.get(stream) ?? segmentOverheadBytes(stream)) + add);
      bytes += add;
    }
    bytes += a.companionBytes;
  }
  const opening = [...streams.keys()].reduce((sum, stream) => sum + openingItems(stream), 0);
  return { bytes, items: chunk.length + streams.size + opening, largestSegment: Math.max(...streams.values()) };
};

describe('DynamoDB item sizes', () => {
  it('counts names and values as the developer guide does', () => {
    expect(itemBytes({ pk: 'ab', n: 12345, b: new Uint8Array(10), t: true, u: undefined })).toBe(2 + 2 + (1 + 3 + 1) + (1 + 10) + (1 + 1));
    expect(valueBytes(['a', 'bb'])).toBe(3 + (1 + 1) + (1 + 2));
    expect(valueBytes({ k: 'v' })).toBe(3 + 1 + (1 + 1));
    expect(valueBytes(Number.MAX_SAFE_INTEGER)).toBe(9);
    expect(valueBytes('é')).toBe(2);
  });
});

describe('chunkAppends', () => {
  it('never puts two records in one segment beyond the segment limit (two ~240 KB to one FIFO shard)', () => {
    const chunks = chunkAppends([append(1, 'q/k:A', 240 * KIB, 'A'), append(2, 'q/k:A', 240 * KIB, 'A')]);
    expect(chunks.map((c) => c.map((a) => a.item))).toEqual([[1], [2]]);
  });

  it('keeps every transaction within 100 items and the byte budget, in order, at the maximum', () => {
    const big = Array.from({ length: 100 }, (_, i) => append(i, `q/p:${i % 4}`, 342 * KIB));
    const small = Array.from({ length: 300 }, (_, i) => append(100 + i, `q/k:${i}`, 200, `${i}`));
    for (const appends of [big, small]) {
      const chunks = chunkAppends(appends);
      expect(chunks.flat().map((a) => a.item)).toEqual(appends.map((a) => a.item));
      for (const chunk of chunks) {
        const { bytes, items, largestSegment } = cost(chunk);
        expect(items).toBeLessThanOrEqual(TRANSACTION_MAX_ITEMS);
        expect(bytes).toBeLessThanOrEqual(TRANSACTION_MAX_BYTES);
        expect(largestSegment).toBeLessThanOrEqual(SEGMENT_MAX_BYTES);
      }
      expect(chunks.length).toBeGreaterThan(1);
    }
  });

  it('counts a chained FIFO shard\'s closing marker: 4 items an append to a shard of its own, 25 a transaction', () => {
    // A shard's head near its `ttl` is closed by a marker beside the new epoch's sentinel (stream-log.ts closingHead).
    expect(openingItems('q/k:A')).toBe(2);
    expect(openingItems('q/q:A')).toBe(1);
    expect(openingItems('q/p:0')).toBe(1);
    const appends = Array.from({ length: 33 }, (_, i) => ({ ...append(i, `q/k:${i}`, 200), companionItems: 1 }));
    expect(chunkAppends(appends).map((c) => c.length)).toEqual([25, 8]);
  });

  it('gives a record that alone passes a limit a chunk of its own', () => {
    const chunks = chunkAppends([append(1, 's', 10), append(2, 's', 500 * KIB), append(3, 's', 10)]);
    expect(chunks.map((c) => c.map((a) => a.item))).toEqual([[1], [2], [3]]);
  });
});
