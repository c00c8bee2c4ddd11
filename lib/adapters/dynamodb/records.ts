/** Compact item shapes of messages inside stream segments (short names keep items, and WRUs, small). */
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import { Limits, type Encoding, type MessageRecord } from '../../domain/model.js';
import { MESSAGE_ID_LONGEST } from '../../domain/message-ids.js';

export interface StoredRecord {
  i: string; // messageId
  t: string; // topic
  b?: string; // body (absent when stored deflated in `z`)
  z?: Uint8Array; // body bytes, raw DEFLATE (utf8 text, or the decoded bytes of a base64 body)
  e?: 'b'; // base64 encoding (absent: utf8)
  g?: string; // tag
  k?: string[]; // keys
  p?: Record<string, string>; // properties
  h?: string; // shard key
  s: number; // sentAt (ms)
  a: number; // deliverableAt (ms)
  x: number; // expiresAt (ms)
  n: number; // topic generation
}

/** Bodies from this size (bytes as stored) are tried deflated. */
export const COMPRESS_FROM_BYTES = 512;
/** A deflated body is kept only when it is at most this share of the stored body. */
const COMPRESS_KEEP_RATIO = 0.75;

/**
 * DynamoDB bills writes per KiB and reads per 4 KiB of item, so a large
 * body is stored deflated when that makes it clearly smaller (JSON bodies
 * usually shrink to a third or half); small or incompressible bodies stay text.
 */
const storeBody = (body: string, encoding: Encoding): Pick<StoredRecord, 'b' | 'z'> => {
  const stored = Buffer.byteLength(body, 'utf8');
  if (stored < COMPRESS_FROM_BYTES) return { b: body };
  const bytes = Buffer.from(body, encoding === 'base64' ? 'base64' : 'utf8');
  // A base64 body comes back re-encoded from its bytes: keep non-canonical spellings as text.
  if (encoding === 'base64' && bytes.toString('base64') !== body) return { b: body };
  const deflated = deflateRawSync(bytes);
  return deflated.length <= stored * COMPRESS_KEEP_RATIO ? { z: deflated } : { b: body };
};

const loadBody = (stored: StoredRecord): string => {
  if (stored.z === undefined) return stored.b ?? '';
  return inflateRawSync(stored.z).toString(stored.e === 'b' ? 'base64' : 'utf8');
};

/** DynamoDB counts a number as at most 21 bytes (38 significant digits), a map or list as 3 bytes + 1 per element. */
const NUMBER_MAX_BYTES = 21;
const CONTAINER_BYTES = 3;
const utf8 = (text: string): number => Buffer.byteLength(text, 'utf8');

/**
 * An upper bound of the bytes a record takes in a segment's `m` list, by
 * DynamoDB's item-size rules (attribute names + UTF-8 values). The body counts
 * as its text (a base64 body as its base64 text, not its decoded bytes): it is
 * stored deflated only when that is smaller (`storeBody`), never larger.
 * Segments are sized with this bound, so no segment can pass the 400 KB item limit.
 */
export const storedRecordMaxBytes = (record: MessageRecord): number => {
  const element = CONTAINER_BYTES + 1;
  const names = 'itbegkphsaxn'.length;
  const strings = [record.messageId, record.topic, record.body, record.tag ?? '', record.shardKey ?? '', 'b'];
  const keys = record.keys.reduce((sum, key) => sum + utf8(key) + 1, CONTAINER_BYTES);
  const properties = Object.entries(record.properties).reduce((sum, [k, v]) => sum + utf8(k) + utf8(v) + 1, CONTAINER_BYTES);
  return element + names + strings.reduce((sum, text) => sum + utf8(text), 0) + keys + properties + 4 * NUMBER_MAX_BYTES;
};

/**
 * The bytes of a message that `Limits.messageMaxBytes` counts: its body as sent (a base64 body as
 * its text, as `storedRecordMaxBytes` counts it) and every key, property name and value, tag and
 * shard key, all in UTF-8.
 */
export const messageBytes = (message: Pick<MessageRecord, 'body' | 'keys' | 'properties' | 'tag' | 'shardKey'>): number =>
  utf8(message.body) +
  message.keys.reduce((sum, key) => sum + utf8(key), 0) +
  Object.entries(message.properties).reduce((sum, [k, v]) => sum + utf8(k) + utf8(v), 0) +
  utf8(message.tag ?? '') +
  utf8(message.shardKey ?? '');

/**
 * What `storedRecordMaxBytes` counts beyond `messageBytes`, at most (840): the record's attribute
 * names and its one-letter encoding, the longest message id and topic name, four numbers, the
 * record's place in the segment's list, and the containers of `Limits.keysMax` keys and
 * `Limits.propertiesMax` properties (1 byte an element). A dead-letter copy's own properties
 * come on top: `DEAD_LETTER_PROPERTIES_MAX_BYTES` (lib/domain/dead-letter.ts).
 */
export const RECORD_OVERHEAD_MAX_BYTES =
  CONTAINER_BYTES + 1 + 'itbegkphsaxn'.length + MESSAGE_ID_LONGEST + Limits.nameMaxLength + 'b'.length +
  CONTAINER_BYTES + Limits.keysMax + CONTAINER_BYTES + Limits.propertiesMax + 4 * NUMBER_MAX_BYTES;

export const toStored = (record: MessageRecord): StoredRecord => {
  const stored: StoredRecord = {
    i: record.messageId,
    t: record.topic,
    ...storeBody(record.body, record.encoding),
    s: record.sentAt,
    a: record.deliverableAt,
    x: record.expiresAt,
    n: record.generation,
  };
  if (record.encoding === 'base64') stored.e = 'b';
  if (record.tag !== undefined) stored.g = record.tag;
  if (record.keys.length > 0) stored.k = record.keys;
  if (Object.keys(record.properties).length > 0) stored.p = record.properties;
  if (record.shardKey !== undefined) stored.h = record.shardKey;
  return stored;
};

export const fromStored = (stored: StoredRecord): MessageRecord => ({
  messageId: stored.i,
  topic: stored.t,
  body: loadBody(stored),
  encoding: (stored.e === 'b' ? 'base64' : 'utf8') satisfies Encoding,
  tag: stored.g,
  keys: stored.k ?? [],
  properties: stored.p ?? {},
  shardKey: stored.h,
  sentAt: stored.s,
  deliverableAt: stored.a,
  expiresAt: stored.x,
  generation: stored.n,
});
