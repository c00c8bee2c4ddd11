/**
 * Finding a position in a stream by time: the first message deliverable at
 * or after a time (docs/design.md, Seek). Used by seek for every stream it
 * moves and by receive for the FIFO shard cursors it creates after a seek.
 */
import type { StreamLog } from '../adapters/dynamodb/stream-log.js';

/** A position in a stream: the sequence number delivered next and the first seq of the segment holding it. */
export interface StreamPosition {
  next: number;
  segmentStart: number;
}

/** Segment reads of one binary search are bounded by the sequence range (≤ 53 halvings). */
const SEARCH_MAX_STEPS = 64;

/**
 * Binary search over [lo, hi) for the first message with `deliverableAt >=
 * at`, reading the segment holding the middle (one Query each, bounded):
 * `deliverableAt` grows with the sequence number in a stream (up to the
 * milliseconds by which concurrent senders' appends can cross). Everything
 * below `lo` is known to be earlier; `hi` when no message in the range is
 * at or after `at`.
 */
export async function firstAtOrAfter(
  log: Pick<StreamLog, 'segmentContaining' | 'segmentWithRecordsFrom' | 'liveGapBelow'>,
  stream: string,
  lo: number,
  hi: number,
  at: number,
): Promise<StreamPosition> {
  const found = await search(log, stream, lo, hi, at);
  // A sequenced shard: a hole just below may still take a message sent after `at` (docs/design.md,
  // Sequenced FIFO topics): the position is lowered to its bottom. Nothing to do on other streams.
  const bottom = await log.liveGapBelow(stream, found.next);
  return bottom === undefined ? found : { next: bottom, segmentStart: bottom };
}

async function search(log: Pick<StreamLog, 'segmentContaining' | 'segmentWithRecordsFrom'>, stream: string, lo: number, hi: number, at: number): Promise<StreamPosition> {
  let best = { next: hi, segmentStart: hi };
  for (let step = 0; lo < hi && step < SEARCH_MAX_STEPS; step++) {
    const mid = lo + Math.floor((hi - lo) / 2);
    let segment = await log.segmentContaining(stream, mid);
    /** Where the part of the range this probe speaks for starts (a gap's bottom end: `mid`). */
    let probed = mid;
    if (!segment || segment.records.length === 0) {
      // A gap (between two epochs, a hole) or a segment without records (a sequenced stream's
      // filler): it says nothing of the records below it. The first segment with records above it
      // decides, as if it had been probed.
      segment = await log.segmentWithRecordsFrom(stream, mid, hi);
      if (!segment) {
        hi = mid; // nothing from mid up to hi: the answer (if any) is below
        continue;
      }
    } else probed = segment.seq;
    const index = segment.records.findIndex((r) => r.deliverableAt >= at);
    if (index < 0) {
      lo = segment.seq + segment.count;
      continue;
    }
    best = { next: Math.max(lo, segment.seq + index), segmentStart: segment.seq };
    // The segment's earlier records are all before `at`: when it reaches down to `lo`, this is the answer.
    if (probed <= lo) return best;
    hi = probed;
  }
  return best;
}
