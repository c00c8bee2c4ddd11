/**
 * Splits appends of deferred messages (scheduled releases, half-message
 * commits) into transactions that hold DynamoDB's limits by construction
 * (docs/design.md, Limits by construction): every stream segment at most
 * {@link SEGMENT_MAX_BYTES} as stored, every transaction at most
 * {@link TRANSACTION_MAX_ITEMS} items and {@link TRANSACTION_MAX_BYTES}.
 * Order is kept: chunks are written one after another, so messages of one
 * stream enter it in the order given.
 */
import { GRANT_ATTRIBUTES_MAX_BYTES } from '../adapters/dynamodb/sequencer.js';
import { SEGMENT_MAX_BYTES, TRANSACTION_MAX_BYTES, TRANSACTION_MAX_ITEMS, itemBytes, valueBytes } from '../adapters/dynamodb/item-size.js';
import { SENTINEL_SK, segmentSk, streamPk } from '../adapters/dynamodb/keys.js';
import { TRY_TOKEN_ITEM_BYTES } from '../adapters/dynamodb/try-token.js';
import { MAX_SEQ, isSequencedStream, isShardStream } from '../domain/streams.js';

/** One message to append, with what it costs. */
export interface SizedAppend<T> {
  item: T;
  /** The stream its segment goes to. */
  stream: string;
  /** True when it writes no segment at all (a delayed publish output: only its companion items). */
  segmentless?: boolean;
  /** The FIFO notice that announces it: its notice stream and the notice's stored bytes. */
  notice: { stream: string; bytes: number } | undefined;
  /** Bytes of its stored record inside a segment (list element included). */
  recordBytes: number;
  /** Bytes of the item updated with it in the same transaction (counted whole: DynamoDB's 4 MB is per item written). */
  companionBytes: number;
  /** Items written with it besides segments (its companion, dedup markers, key entries); 1 when not given. */
  companionItems?: number;
}

/** Room every chunk keeps for items the caller adds to each transaction (a commit's cursor item). */
export interface ChunkReserve {
  items: number;
  bytes: number;
}

/** A segment item without records: keys, count, TTL, the token of a put on its own (and the empty list). */
export const segmentOverheadBytes = (stream: string): number =>
  itemBytes({ pk: streamPk(stream), sk: segmentSk(MAX_SEQ), n: MAX_SEQ, ttl: MAX_SEQ, m: [] }) +
  TRY_TOKEN_ITEM_BYTES +
  // A sequenced stream's segment names its grant (sequencer.ts).
  (isSequencedStream(stream) ? GRANT_ATTRIBUTES_MAX_BYTES : 0);

/** A stream sentinel, written with a stream's first segment of an epoch. */
export const sentinelBytes = (stream: string): number => itemBytes({ pk: streamPk(stream), sk: SENTINEL_SK, eb: MAX_SEQ * 1000 });

/**
 * Items a stream's first segment in a transaction brings besides itself: the sentinel of a new
 * epoch, and on a chained FIFO shard whose head is near its `ttl` also the closing marker put at
 * the old head's next number (stream-log.ts `closingHead`): 1 or 2 (an upper bound: a sequenced
 * shard takes its numbers from a grant and writes neither, counted 1 all the same).
 */
export const openingItems = (stream: string): number => (isShardStream(stream) && !isSequencedStream(stream) ? 2 : 1);

/** Bytes of {@link openingItems}: the sentinel, and a closing marker counted as an empty segment. */
export const openingBytes = (stream: string): number => sentinelBytes(stream) + (openingItems(stream) === 2 ? segmentOverheadBytes(stream) : 0);

/** A stored notice {h, f, t} of shard `shardKey` in a notice segment (list element included). */
export const noticeBytes = (shardKey: string): number => 1 + valueBytes({ h: shardKey, f: MAX_SEQ, t: MAX_SEQ });

/**
 * Chunks in the order given. A message that alone passes a limit gets a chunk
 * of its own (its append then fails alone, and the caller isolates it).
 */
export function chunkAppends<T>(appends: Array<SizedAppend<T>>, reserve: ChunkReserve = { items: 0, bytes: 0 }): Array<Array<SizedAppend<T>>> {
  const chunks: Array<Array<SizedAppend<T>>> = [];
  let chunk: Array<SizedAppend<T>> = [];
  let segments = new Map<string, number>();
  let bytes = reserve.bytes;
  let items = reserve.items;
  const close = () => {
    if (chunk.length > 0) chunks.push(chunk);
    chunk = [];
    segments = new Map();
    bytes = reserve.bytes;
    items = reserve.items;
  };
  for (const a of appends) {
    for (let attempt = 0; attempt < 2; attempt++) {
      const stream = a.segmentless ? undefined : a.stream;
      const segment = stream === undefined ? undefined : segments.get(stream);
      const newStream = stream !== undefined && segment === undefined;
      const notice = a.notice;
      const noticeSegment = notice === undefined ? undefined : segments.get(notice.stream);
      // A new stream costs its segment and perhaps a sentinel and a closing marker (openingItems); a new
      // notice stream its segment and perhaps a sentinel.
      const addedItems =
        (a.companionItems ?? 1) + (newStream ? 1 + openingItems(stream) : 0) + (notice !== undefined && noticeSegment === undefined ? 1 + openingItems(notice.stream) : 0);
      const segmentBytes = stream === undefined ? 0 : (segment ?? segmentOverheadBytes(stream)) + a.recordBytes;
      const noticeAdded =
        notice === undefined ? 0 : (noticeSegment === undefined ? segmentOverheadBytes(notice.stream) + openingBytes(notice.stream) : 0) + notice.bytes;
      const addedBytes =
        (stream === undefined ? 0 : a.recordBytes) + a.companionBytes + noticeAdded + (newStream ? segmentOverheadBytes(stream) + openingBytes(stream) : 0);
      const fits = segmentBytes <= SEGMENT_MAX_BYTES && items + addedItems <= TRANSACTION_MAX_ITEMS && bytes + addedBytes <= TRANSACTION_MAX_BYTES;
      if (!fits && chunk.length > 0 && attempt === 0) {
        close();
        continue;
      }
      chunk.push(a);
      if (stream !== undefined) segments.set(stream, segmentBytes);
      if (notice !== undefined) segments.set(notice.stream, (noticeSegment ?? segmentOverheadBytes(notice.stream)) + notice.bytes);
      bytes += addedBytes;
      items += addedItems;
      break;
    }
  }
  close();
  return chunks;
}
