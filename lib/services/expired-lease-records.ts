/**
 * The records of a claim's expired leases, read a few segments at a time (docs/design.md, Receive,
 * "Expired leases read in chunks"). A cursor holds up to 100 leases; read all at once, the segments
 * of 100 expired leases of the largest messages were ~35 MB in one BatchGetItem answer — +56 MB of
 * heap and +66 MB of buffers in the receive function, whose memory is 128 MB — for an answer that
 * holds 5 MB of them. So the claim reads them oldest first, 16 at a time, until it holds `want`
 * records to deliver again or the answer's room in bytes, and its plan stops at the first expired
 * lease not read (claims.ts): that lease and everything after it wait for the next claim.
 */
import { jsonBytes } from '../domain/answer-budget.js';
import type { Lease } from '../domain/cursor.js';
import type { MessageRecord } from '../domain/model.js';
import type { Segment } from '../adapters/dynamodb/stream-log.js';

/** Leases read per chunk: 16 segments of the largest messages are ≈ 5.6 MB, whatever came before. */
export const EXPIRED_CHUNK = 16;

/**
 * Records of `expired` (oldest first), read a chunk at a time until `want` records to deliver again
 * or `maxBytes` of records are in hand. Every lease read has an entry: its record, or undefined when
 * its segment is gone or the record is not `live` (the plan closes both as expired, and nothing is
 * kept of them); leases not read have none. Records at their last delivery (`maxDeliveries`: the
 * plan dead-letters them) count in bytes, not in `want`.
 */
export async function readExpiredLeaseRecords(
  getSegments: (keys: Array<{ stream: string; seq: number }>) => Promise<Segment[]>,
  stream: string,
  expired: readonly Lease[],
  want: number,
  maxBytes: number,
  live: (record: MessageRecord) => boolean,
  maxDeliveries: number,
): Promise<Map<number, MessageRecord | undefined>> {
  const out = new Map<number, MessageRecord | undefined>();
  let again = 0;
  let bytes = 0;
  for (let i = 0; i < expired.length && again < want && bytes < maxBytes; i += EXPIRED_CHUNK) {
    const chunk = expired.slice(i, i + EXPIRED_CHUNK);
    const segments = await getSegments(chunk.map((lease) => ({ stream, seq: lease.segment })));
    for (const lease of chunk) {
      const segment = segments.find((s) => s.seq <= lease.seq && lease.seq < s.seq + s.count);
      const found = segment?.records[lease.seq - segment.seq];
      const record = found && live(found) ? found : undefined;
      out.set(lease.seq, record);
      if (record) {
        bytes += jsonBytes(record);
        if (lease.deliveries < maxDeliveries) again++;
      }
    }
  }
  return out;
}
