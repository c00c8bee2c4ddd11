/**
 * When a lost claim may plan again from what it read of its stream (lib/services/reusable-read.ts):
 * only when the cursor's first segment is among the segments read and they reach far enough.
 */
import { describe, expect, it } from 'vitest';
import type { Segment } from '../../lib/adapters/dynamodb/stream-log.js';
import { reusableRead, type StreamRead } from '../../lib/services/reusable-read.js';

const segment = (seq: number, count: number): Segment => ({ stream: 't:t/p:0', seq, count, records: [] });
/** Segments of 10 messages at 10, 20, 30 (a read from 10 that hit its limit of 3 when `truncated`). */
const read = (truncated: boolean): StreamRead => ({ start: 10, segments: [segment(10, 10), segment(20, 10), segment(30, 10)], truncated });
const seqs = (r: ReturnType<typeof reusableRead>) => r?.segments.map((s) => s.seq);

describe('reusableRead', () => {
  it('serves a cursor moved forward within what was read, from the segment holding its first message', () => {
    expect(seqs(reusableRead(read(true), { segmentStart: 20, next: 20 }, 10))).toEqual([20, 30]);
    expect(seqs(reusableRead(read(true), { segmentStart: 20, next: 25 }, 10))).toEqual([20, 30]);
    expect(reusableRead(read(true), { segmentStart: 20, next: 20 }, 10)?.truncated).toBe(true);
    // Unmoved (the claim lost over a lease, not over the next message).
    expect(seqs(reusableRead(read(false), { segmentStart: 10, next: 12 }, 10))).toEqual([10, 20, 30]);
  });

  it('reads again when what was read does not reach `limit` positions past the next message, even at the end of the stream then', () => {
    expect(reusableRead(read(true), { segmentStart: 30, next: 31 }, 10)).toBeUndefined();
    // The stream may have grown since: the writer that moved the cursor may have seen more.
    expect(reusableRead(read(false), { segmentStart: 30, next: 31 }, 10)).toBeUndefined();
    expect(seqs(reusableRead(read(false), { segmentStart: 30, next: 30 }, 10))).toEqual([30]);
  });

  it('reads again when the cursor moved back (a seek), past the read, or into a gap the read showed', () => {
    expect(reusableRead(read(false), { segmentStart: 0, next: 0 }, 10)).toBeUndefined();
    expect(reusableRead(read(false), { segmentStart: 40, next: 40 }, 10)).toBeUndefined();
    const gapped: StreamRead = { start: 10, segments: [segment(10, 10), segment(50, 10)], truncated: false };
    expect(reusableRead(gapped, { segmentStart: 30, next: 30 }, 10)).toBeUndefined();
    expect(reusableRead(undefined, { segmentStart: 10, next: 10 }, 10)).toBeUndefined();
  });
});
