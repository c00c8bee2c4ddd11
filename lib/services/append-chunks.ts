/**
 * Splits appends of deferred messages (scheduled releases, half-message
 * commits) into transactions that hold DynamoDB's limits by construction
 * (docs/design.md, Limits by construction): every stream segment at most
 * {@link SEGMENT_MAX_BYTES} as stored, every transaction at most
 * {@link TRANSACTION_MAX_ITEMS} items and {@link TRANSACTION_MAX_BYTES}.
 * Order is kept: chunks are written one after another, so messages of one
 * stream enter it in the order given.
 */
import { SEGMENT_MAX_BYTES, TRANSACTION_MAX_BYTES, TRANSACTION_MAX_ITEMS, itemBytes, valueBytes } from '../adapters/dynamodb/item-size.js';
import { SENTINEL_SK, segmentSk, streamPk } from '../adapters/dynamodb/keys.js';
import { MAX_SEQ } from '../domain/streams.js';

/** One message to append, with what it costs. */
export interface SizedAppend<T> {
  item: T;
  /** The stream its segment goes to. */
  stream: string;
  /** The FIFO notice that announces it: its notice stream and the notice's stored bytes. */
  notice: { stream: string; bytes: number } | undefined;
  /** Bytes of its stored record inside a segment (list element included). */
  recordBytes: number;
  /** Bytes of the item updated with it in the same transaction (counted whole: DynamoDB's 4 MB is per item written). */
  companionBytes: number;
}

/** A segment item without records: keys, count, TTL (and the empty list). */
export const segmentOverheadBytes = (stream: string): number =>
  itemBytes({ pk: streamPk(stream), sk: segmentSk(MAX_SEQ), n: MAX_SEQ, ttl: MAX_SEQ, m: [] });

/** A stream sentinel, written with a stream's first segment of an epoch. */
export const sentinelBytes = (stream: string): number => itemBytes({ pk: streamPk(stream), sk: SENTINEL_SK, eb: MAX_SEQ * 1000 });

/** A stored notice {h, f, t} of shard `shardKey` in a notice segment (list element included). */
export const noticeBytes = (shardKey: string): number => 1 + valueBytes({ h: shardKey, f: MAX_SEQ, t: MAX_SEQ });

/**
 * Chunks in the order given. A message that alone passes a limit gets a chunk
 * of its own (its append then fails alone, and the caller isolates it).
 */
export function chunkAppends<T>(appends: Array<SizedAppend<T>>): Array<Array<SizedAppend<T>>> {
  const chunks: Array<Array<SizedAppend<T>>> = [];
  let chunk: Array<SizedAppend<T>> = [];
  let segments = new Map<string, number>();
  let bytes = 0;
  let items = 0;
  const close = () => {
    if (chunk.length > 0) chunks.push(chunk);
    chunk = [];
    segments = new Map();
    bytes = 0;
    items = 0;
  };
  for (const a of appends) {
    for (let attempt = 0; attempt < 2; attempt++) {
      const segment = segments.get(a.stream);
      const notice = a.notice;
      const noticeSegment = notice === undefined ? undefined : segments.get(notice.stream);
      // A new stream costs its segment and perhaps a sentinel (two items); so does a new notice stream.
      const addedItems = 1 + (segment === undefined ? 2 : 0) + (notice !== undefined && noticeSegment === undefined ? 2 : 0);
      const segmentBytes = (segment ?? segmentOverheadBytes(a.stream)) + a.recordBytes;
      const noticeAdded =
        notice === undefined ? 0 : (noticeSegment === undefined ? segmentOverheadBytes(notice.stream) + sentinelBytes(notice.stream) : 0) + notice.bytes;
      const addedBytes =
        a.recordBytes + a.companionBytes + noticeAdded + (segment === undefined ? segmentOverheadBytes(a.stream) + sentinelBytes(a.stream) : 0);
      const fits = segmentBytes <= SEGMENT_MAX_BYTES && items + addedItems <= TRANSACTION_MAX_ITEMS && bytes + addedBytes <= TRANSACTION_MAX_BYTES;
      if (!fits && chunk.length > 0 && attempt === 0) {
        close();
        continue;
      }
      chunk.push(a);
      segments.set(a.stream, segmentBytes);
      if (notice !== undefined) segments.set(notice.stream, (noticeSegment ?? segmentOverheadBytes(notice.stream)) + notice.bytes);
      bytes += addedBytes;
      items += addedItems;
      break;
    }
  }
  close();
  return chunks;
}
