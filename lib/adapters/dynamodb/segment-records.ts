/**
 * The records of a message segment as stored: either per record (`m`, a list
 * of records.ts entries, each large body deflated on its own) or, for a
 * segment of 2 or more records, packed (`mz`, binary: ONE raw DEFLATE of the
 * JSON array of the entries with their bodies as text, `b`) — whichever is
 * smaller by DynamoDB's size rules; packed only when strictly smaller, so a
 * segment is never larger than its per-record form and the per-record bound
 * (`storedRecordMaxBytes`) still bounds it. The records of one batch share
 * JSON keys, topic, id prefix and times, which one deflate over all of them
 * finds and ten separate ones cannot (docs/design.md, Segment compression).
 *
 * Segments are written once (a conditional Put) and never updated, so the
 * packed form needs no in-place edits. Readers take either form: segments
 * written before the packed form existed keep `m`.
 */
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import type { MessageRecord } from '../../domain/model.js';
import { valueBytes } from './item-size.js';
import { toStored, type StoredRecord } from './records.js';

/** Segment attribute: the per-record entries (records.ts). */
export const RECORDS_ATTRIBUTE = 'm';
/** Segment attribute: the packed entries (raw DEFLATE of their JSON, bodies as text). */
export const PACKED_RECORDS_ATTRIBUTE = 'mz';
/** Fewest records a segment needs to be tried packed (one record: its body is already deflated on its own). */
export const PACK_FROM_RECORDS = 2;

/** A segment's records as stored: the per-record entries, and the packed form when it is smaller. */
export interface StoredSegmentRecords {
  /** The per-record entries (`m` unless `packed` is given). */
  stored: StoredRecord[];
  /** `mz`: written instead of `m` when given. */
  packed?: Uint8Array;
}

/** A record as the packed form holds it: its per-record entry with the body as text. */
const packedEntry = (record: MessageRecord): StoredRecord => ({ ...toStored({ ...record, body: '' }), b: record.body });

/**
 * `records` as a segment stores them: `packed` is given when it is strictly
 * smaller than the per-record list (attribute names included).
 */
export function packSegmentRecords(records: readonly MessageRecord[]): StoredSegmentRecords {
  const stored = records.map(toStored);
  if (records.length < PACK_FROM_RECORDS) return { stored };
  const deflated = deflateRawSync(Buffer.from(JSON.stringify(records.map(packedEntry)), 'utf8'));
  const perRecord = RECORDS_ATTRIBUTE.length + valueBytes(stored);
  const packed = PACKED_RECORDS_ATTRIBUTE.length + deflated.byteLength;
  return packed < perRecord ? { stored, packed: new Uint8Array(deflated.buffer, deflated.byteOffset, deflated.byteLength) } : { stored };
}

/** The item attributes of {@link packSegmentRecords}' result: `{mz}` or `{m}`. */
export const segmentRecordsItem = ({ stored, packed }: { stored: object[]; packed?: Uint8Array }): Record<string, unknown> =>
  packed ? { [PACKED_RECORDS_ATTRIBUTE]: packed } : { [RECORDS_ATTRIBUTE]: stored };

const isBytes = (value: unknown): value is Uint8Array => value instanceof Uint8Array;

/**
 * The stored entries of a segment item (or of a stream image of one), from
 * either form. An `mz` that is not binary or does not inflate to a JSON array
 * throws: the segment is unreadable, and nothing may pretend it is empty.
 */
export function storedRecordsOf(item: Record<string, unknown>): StoredRecord[] {
  const packed = item[PACKED_RECORDS_ATTRIBUTE];
  if (packed === undefined) {
    const m = item[RECORDS_ATTRIBUTE];
    return Array.isArray(m) ? (m as StoredRecord[]) : [];
  }
  if (!isBytes(packed)) throw new TypeError(`segment ${String(item.pk)} ${String(item.sk)}: ${PACKED_RECORDS_ATTRIBUTE} is not binary`);
  const entries: unknown = JSON.parse(inflateRawSync(packed).toString('utf8'));
  if (!Array.isArray(entries)) throw new TypeError(`segment ${String(item.pk)} ${String(item.sk)}: ${PACKED_RECORDS_ATTRIBUTE} is not a list`);
  return entries as StoredRecord[];
}
