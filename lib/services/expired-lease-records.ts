/**
 * The records of a claim's expired leases, read a few segments at a time (docs/design.md, Receive,
 * "Expired leases read in chunks"). A cursor holds up to 100 leases; read all at once, the segments
 * of 100 expired leases of the largest messages were ~35 MB in one BatchGetItem answer — +56 MB of
 * heap and +66 MB of buffers in the receive function, whose memory is 128 MB — for an answer that
 * holds 5 MB of them. So the claim reads them oldest first, in chunks, until it holds `want` records
 * or the answer's room in bytes, and its plan stops at the first expired lease not read
 * (claims.ts): that lease and everything after it wait for the next receive.
 */
import { jsonBytes } from '../domain/answer-budget.js';
import type { Lease } from '../domain/cursor.js';
import type { MessageRecord } from '../domain/model.js';
import type { Segment } from '../adapters/dynamodb/stream-log.js';

/** Leases of the first chunk; later chunks are sized by the bytes a segment of the first held. */
export const EXPIRED_FIRST_CHUNK = 16;
/** Bytes of segments one later chunk aims at (a chunk of the largest segments is still ≤ 16 of them). */
export const EXPIRED_CHUNK_BYTES = 4 * 1024 * 1024;

/**
 * Records of `expired` (oldest first), read until `want` records or `maxBytes` of them are in hand:
 * every lease read has an entry (undefined: its segment is gone), leases not read have none.
 */
export async function readExpiredLeaseRecords(
  getSegments: (keys: Array<{ stream: string; seq: number }>) => Promise<Segment[]>,
  stream: string,
  expired: readonly Lease[],
  want: number,
  maxBytes: number,
): Promise<Map<number, MessageRecord | undefined>> {
  const out = new Map<number, MessageRecord | undefined>();
  let records = 0;
  let bytes = 0;
  let segmentBytes = 0;
  let segmentsRead = 0;
  for (let i = 0; i < expired.length && records < want && bytes < maxBytes; ) {
    const size =
      segmentsRead === 0
        ? EXPIRED_FIRST_CHUNK
        : Math.max(EXPIRED_FIRST_CHUNK, Math.floor(EXPIRED_CHUNK_BYTES / Math.max(1, segmentBytes / segmentsRead)));
    const chunk = expired.slice(i, i + size);
    i += chunk.length;
    const segments = await getSegments(chunk.map((lease) => ({ stream, seq: lease.segment })));
    for (const segment of segments) {
      segmentsRead++;
      segmentBytes += segment.records.reduce((sum, record) => sum + jsonBytes(record), 0);
    }
    for (const lease of chunk) {
      const segment = segments.find((s) => s.seq <= lease.seq && lease.seq < s.seq + s.count);
      const record = segment?.records[lease.seq - segment.seq];
      out.set(lease.seq, record);
      if (record) {
        records++;
        bytes += jsonBytes(record);
      }
    }
  }
  return out;
}
