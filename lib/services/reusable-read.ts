import type { CursorState } from '../domain/cursor.js';
import type { Segment } from '../adapters/dynamodb/stream-log.js';

/** What one attempt of a claim read of its stream: `segments` from the one at `start` on; `truncated` when it hit its limit. */
export interface StreamRead {
  start: number;
  segments: Segment[];
  truncated: boolean;
  /** A sequenced stream's read stopped below a hole held until then (stream-log.ts `SegmentRead`). */
  heldUntil?: number | undefined;
}

/**
 * The segments an earlier attempt of the same claim read, when they still serve the cursor another
 * receiver left (the one its lost write returned), so the claim is planned again without reading
 * the stream: on a contended stream the losers' second try is one write, not a read and a write,
 * and the stream's key is not read again by each of them (docs/design.md, Receive, "Learned
 * cursors").
 *
 * Segments are written once, so what was read still holds; what it cannot show is a segment
 * appended since — and the cursor it now serves is newer than the read, so the writer that moved
 * it may have seen such segments. It serves only when the cursor's first segment is among those
 * read (the cursor moved forward, not back by a seek, and not over a gap the read showed) and
 * they reach `limit` positions past the cursor's next message; else the stream is read again.
 * The caller also reads again when the plan made from it delivers fewer than it asked for
 * (skipped records, or the end of what was read): a fresh read might give more.
 */
export function reusableRead(
  last: StreamRead | undefined,
  cursor: Pick<CursorState, 'segmentStart' | 'next'>,
  limit: number,
): { segments: Segment[]; truncated: boolean; heldUntil?: number | undefined } | undefined {
  if (!last || cursor.segmentStart < last.start) return undefined;
  const i = last.segments.findIndex((s) => s.seq + s.count > cursor.segmentStart);
  const first = last.segments[i];
  if (!first || first.seq > cursor.segmentStart) return undefined;
  const reach = endOf(last.segments) - cursor.next;
  if (reach < limit) return undefined;
  return { segments: last.segments.slice(i), truncated: last.truncated, heldUntil: last.heldUntil };
}

/** The position after the last of `segments` (0 for none). */
export function endOf(segments: readonly Segment[]): number {
  const tail = segments[segments.length - 1];
  return tail ? tail.seq + tail.count : 0;
}
