/**
 * The records of a message segment as stored: either per record (`m`, a list
 * of records.ts entries, each large body deflated on its own) or, for a
 * segment of 2 or more records, packed (`mz`, binary: ONE raw DEFLATE of a
 * frame, below) — whichever is smaller by DynamoDB's size rules; packed only
 * when strictly smaller, so a
 * segment is never larger than its per-record form and the per-record bound
 * (`storedRecordMaxBytes`) still bounds it. The records of one batch share
 * JSON keys, topic, id prefix and times, which one deflate over all of them
 * finds and ten separate ones cannot (docs/design.md, Segment compression).
 *
 * The frame: the UTF-8 JSON array of the entries without their bodies, each
 * with `l`, its body's byte length; a newline (0x0A, which JSON text never
 * holds raw); then the bodies' UTF-8 bytes one after another (a base64 body
 * as its text). Bodies are not JSON strings, so their quotes cost no escapes.
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
/** Segment attribute: the packed entries (raw DEFLATE of their frame, above). */
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

/** A record's entry in the frame's header: its per-record entry without the body, and the body's byte length. */
type FrameEntry = Omit<StoredRecord, 'b' | 'z'> & { l: number };
const NEWLINE = 0x0a;

const frame = (records: readonly MessageRecord[]): Buffer => {
  const bodies = records.map((r) => Buffer.from(r.body, 'utf8'));
  const header = records.map((record, i): FrameEntry => {
    const { b: _b, z: _z, ...entry } = toStored({ ...record, body: '' });
    return { ...entry, l: bodies[i]?.byteLength ?? 0 };
  });
  return Buffer.concat([Buffer.from(JSON.stringify(header), 'utf8'), Buffer.of(NEWLINE), ...bodies]);
};

const unframe = (bytes: Buffer): StoredRecord[] => {
  const end = bytes.indexOf(NEWLINE);
  if (end < 0) throw new TypeError('packed segment: no header');
  const header: unknown = JSON.parse(bytes.subarray(0, end).toString('utf8'));
  if (!Array.isArray(header)) throw new TypeError('packed segment: the header is not a list');
  let at = end + 1;
  const entries = (header as FrameEntry[]).map(({ l, ...entry }) => {
    if (!Number.isSafeInteger(l) || l < 0 || at + l > bytes.length) throw new TypeError('packed segment: a body passes the end');
    const b = bytes.subarray(at, at + l).toString('utf8');
    at += l;
    return { ...entry, b } as StoredRecord;
  });
  if (at !== bytes.length) throw new TypeError('packed segment: bytes after the last body');
  return entries;
};

/**
 * `records` as a segment stores them: `packed` is given when it is strictly
 * smaller than the per-record list (attribute names included). `pack` false
 * (packing switched off): the per-record form only, and no frame is built or
 * deflated.
 */
export function packSegmentRecords(records: readonly MessageRecord[], pack = true): StoredSegmentRecords {
  const stored = records.map(toStored);
  if (!pack || records.length < PACK_FROM_RECORDS) return { stored };
  const deflated = deflateRawSync(frame(records));
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
 * either form. An `mz` that is not binary or does not inflate to a whole frame
 * throws: the segment is unreadable, and nothing may pretend it is empty.
 */
export function storedRecordsOf(item: Record<string, unknown>): StoredRecord[] {
  const packed = item[PACKED_RECORDS_ATTRIBUTE];
  if (packed === undefined) {
    const m = item[RECORDS_ATTRIBUTE];
    return Array.isArray(m) ? (m as StoredRecord[]) : [];
  }
  if (!isBytes(packed)) throw new TypeError(`segment ${String(item.pk)} ${String(item.sk)}: ${PACKED_RECORDS_ATTRIBUTE} is not binary`);
  return unframe(inflateRawSync(packed));
}
