import { describe, expect, it } from 'vitest';
import { SEGMENT_FILL_STREAMS, SegmentFill, UNSIZED_AFTER_SHORTFALL } from '../../lib/adapters/dynamodb/segment-fill.js';

describe('SegmentFill: the first page of a receive read', () => {
  it('asks for `limit` segments for a stream it has not read, or a read with no reach', () => {
    const fill = new SegmentFill();
    expect(fill.firstPage('s', 100, 110, 11)).toBe(11);
    fill.learn('s', [10, 10]);
    expect(fill.firstPage('s', 100, undefined, 11)).toBe(11);
  });

  it('asks for the segments the last read fill takes to reach past `reach`, plus one, within [1, limit]', () => {
    const fill = new SegmentFill();
    fill.learn('batches', [10, 10, 10]);
    // Positions 100..110 (the segment holding 110 says whether more follow): 11 positions, 2 segments of 10, + 1.
    expect(fill.firstPage('batches', 100, 110, 11)).toBe(3);
    // The cursor in the middle of its segment: from its start, 15 + 10 + 1 positions.
    expect(fill.firstPage('batches', 100, 125, 11)).toBe(4);
    fill.learn('singles', [1, 1, 1]);
    expect(fill.firstPage('singles', 100, 110, 11)).toBe(11);
    fill.learn('large', [100]);
    expect(fill.firstPage('large', 100, 110, 11)).toBe(2);
    // Never more than the caller's limit, never below 1.
    fill.learn('mixed', [1, 2]);
    expect(fill.firstPage('mixed', 100, 200, 11)).toBe(11);
    expect(fill.firstPage('large', 100, 99, 11)).toBe(2);
  });

  it('learns the mean of what the last read held, markers without messages left out', () => {
    const fill = new SegmentFill();
    fill.learn('s', [10, 10]);
    fill.learn('s', [1, 1, 1, 1]);
    expect(fill.firstPage('s', 0, 10, 20)).toBe(12);
    fill.learn('s', [Number.NaN, 0, 20]);
    expect(fill.firstPage('s', 0, 39, 20)).toBe(3);
    fill.learn('s', []);
    fill.learn('s', [Number.NaN]);
    expect(fill.firstPage('s', 0, 39, 20)).toBe(3);
  });

  it('after a sized read fell short, the stream\'s next UNSIZED_AFTER_SHORTFALL reads ask for `limit`, then are sized again', () => {
    const fill = new SegmentFill();
    fill.learn('skips', [10, 10]);
    fill.learn('other', [10, 10]);
    fill.fellShort('skips');
    for (let i = 0; i < UNSIZED_AFTER_SHORTFALL; i++) expect(fill.firstPage('skips', 100, 110, 11)).toBe(11);
    expect(fill.firstPage('skips', 100, 110, 11)).toBe(3);
    expect(fill.firstPage('other', 100, 110, 11)).toBe(3);
  });

  it('remembers at most SEGMENT_FILL_STREAMS streams, forgetting the least recently read', () => {
    const fill = new SegmentFill();
    for (let i = 0; i < SEGMENT_FILL_STREAMS; i++) fill.learn(`s${i}`, [10]);
    fill.learn('s0', [10]);
    fill.learn('new', [10]);
    expect(fill.firstPage('s0', 0, 9, 11)).toBe(2);
    expect(fill.firstPage('s1', 0, 9, 11)).toBe(11);
    expect(fill.firstPage('new', 0, 9, 11)).toBe(2);
  });
});
