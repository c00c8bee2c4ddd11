/**
 * How many segments a receive's first Query of a stream asks for (docs/design.md, Receive, "Reads
 * sized by the segments' fill"). A claim wants `limit` messages past its cursor and read `limit + 1`
 * segments: right when each segment holds one message, eleven times too many for a stream of
 * batches of 10 (a hot FIFO shard's segments read by every consumer that contends for it). This
 * container remembers, per stream, how many messages the segments of its last read held, and the
 * first page asks for the segments those would take to reach the claim's `reach`, plus one; a
 * stream it has not read, or a read with no `reach`, asks for `limit` as before. A guess too low
 * costs one more page (the read goes on while it has not passed `reach`), never a message: the
 * page's `Limit` is hit, so DynamoDB answers a LastEvaluatedKey and the read says `more`, as a read
 * that hit `limit + 1` always did. Positions are not deliveries: a claim that skips records (another
 * tag, expired) may go through every segment read and fall short; it reads again with `limit`
 * ({@link SegmentFill.fellShort}).
 */

/** Streams remembered per container (the oldest read forgotten first). */
export const SEGMENT_FILL_STREAMS = 1024;

/**
 * Reads of a stream not sized after a sized one fell short: its claim went through every segment
 * read and delivered less than it wanted (records it skips: another tag, expired, another
 * generation) — the claim read again with `limit`, and so do this stream's next reads.
 */
export const UNSIZED_AFTER_SHORTFALL = 8;

export class SegmentFill {
  /** stream → mean messages per segment of its last read (Map order: least recently read first). */
  private readonly fill = new Map<string, number>();
  /** stream → reads left that ask for `limit` (see {@link UNSIZED_AFTER_SHORTFALL}). */
  private readonly unsized = new Map<string, number>();

  /**
   * The first page's `Limit` for a read of `stream` from the segment at `fromSeq` that needs
   * positions up to `reach` (exclusive; the read also wants the segment holding `reach`, which says
   * whether more follow), and at most `limit` segments.
   */
  firstPage(stream: string, fromSeq: number, reach: number | undefined, limit: number): number {
    const perSegment = this.fill.get(stream);
    if (perSegment === undefined || reach === undefined) return limit;
    const left = this.unsized.get(stream);
    if (left !== undefined) {
      if (left <= 1) this.unsized.delete(stream);
      else this.unsized.set(stream, left - 1);
      return limit;
    }
    const positions = Math.max(1, reach - fromSeq + 1);
    return Math.max(1, Math.min(limit, Math.ceil(positions / perSegment) + 1));
  }

  /** A sized read of `stream` fell short of what its claim wanted: its next reads ask for `limit`. */
  fellShort(stream: string): void {
    if (this.unsized.size >= SEGMENT_FILL_STREAMS && !this.unsized.has(stream)) this.unsized.clear();
    this.unsized.set(stream, UNSIZED_AFTER_SHORTFALL);
  }

  /** Learns from the segments a read of `stream` got (`counts`: messages in each; markers without any are left out). */
  learn(stream: string, counts: readonly number[]): void {
    const held = counts.filter((n) => Number.isFinite(n) && n >= 1);
    if (held.length === 0) return;
    const mean = held.reduce((sum, n) => sum + n, 0) / held.length;
    this.fill.delete(stream);
    if (this.fill.size >= SEGMENT_FILL_STREAMS) {
      const oldest = this.fill.keys().next().value;
      if (oldest !== undefined) this.fill.delete(oldest);
    }
    this.fill.set(stream, mean);
  }
}
