/**
 * The gap rule of sequenced streams (lib/domain/gaps.ts): each row of its table in docs/design.md,
 * "Sequenced FIFO topics".
 */
import { describe, expect, it } from 'vitest';
import { FILL_AFTER_MS, GRANT_DEAD_AFTER_MS, GRANT_PASS_AFTER_MS, gapState, type GrantedItem } from '../../lib/domain/gaps.js';

const T = 1_000_000;
/** A segment at 120 granted at T, whose grant found the one below at [110, 120) granted at `prevAt`. */
const segment = (prevAt: number, over: Partial<GrantedItem> = {}): GrantedItem => ({ seq: 120, grantedAt: T, prev: { seq: 110, at: prevAt }, epoch: 100, ...over });

describe('gapState', () => {
  it('passes when there is no gap, or when the gap is an older epoch', () => {
    expect(gapState(120, segment(T), T)).toEqual({ kind: 'pass' });
    expect(gapState(130, segment(T), T)).toEqual({ kind: 'pass' });
    // The reader is below the item's epoch, which starts at the item: everything below is dead.
    expect(gapState(5, { seq: 100, grantedAt: T, epoch: 100 }, T)).toEqual({ kind: 'pass' });
  });

  it('holds a young grant directly below until F after its grant', () => {
    expect(gapState(110, segment(T - 500), T)).toEqual({ kind: 'hold', until: T - 500 + FILL_AFTER_MS });
  });

  it('fills a grant directly below once it is F old, exactly its range', () => {
    expect(gapState(110, segment(T - FILL_AFTER_MS), T)).toEqual({ kind: 'fill', from: 110, count: 10, grantedAt: T - FILL_AFTER_MS });
  });

  it('fills the grant below even when the reader is further down (the rest is decided after)', () => {
    expect(gapState(104, segment(T - 5_000), T)).toEqual({ kind: 'fill', from: 110, count: 10, grantedAt: T - 5_000 });
  });

  it('evaluates a gap reaching into an older epoch from the epoch start', () => {
    // Reader at 50 (old epoch), item at 120 in epoch 110: [50, 110) dead, [110, 120) the grant below.
    expect(gapState(50, segment(T - 100, { epoch: 110 }), T)).toEqual({ kind: 'hold', until: T - 100 + FILL_AFTER_MS });
  });

  it('holds below a filler (no bound: two dead grants in a row) until L after its grant, then passes', () => {
    const filler: GrantedItem = { seq: 110, grantedAt: T - 3_000, epoch: 100 };
    expect(gapState(104, filler, T)).toEqual({ kind: 'hold', until: T - 3_000 + GRANT_DEAD_AFTER_MS });
    expect(gapState(104, filler, T - 3_000 + GRANT_DEAD_AFTER_MS)).toEqual({ kind: 'pass' });
  });

  it('passes a bounded gap as old as the shortest retention without a filler (TTL deletions), fills it before', async () => {
    expect(gapState(110, segment(T - GRANT_PASS_AFTER_MS), T)).toEqual({ kind: 'pass' });
    expect(gapState(110, segment(T - GRANT_PASS_AFTER_MS + 1), T)).toMatchObject({ kind: 'fill' });
    expect(gapState(110, segment(T - GRANT_DEAD_AFTER_MS), T)).toMatchObject({ kind: 'fill' });
  });

  it('holds a gap below a bound that does not reach it (not expected) until L after the item’s grant', () => {
    // The grant below started under the reader: no exact range to fill.
    expect(gapState(115, segment(T - 5_000), T)).toEqual({ kind: 'hold', until: T + GRANT_DEAD_AFTER_MS });
  });
});
