/** Compact item shapes of messages inside stream segments (short names keep items, and WRUs, small). */
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import type { Encoding, MessageRecord } from '../../domain/model.js';

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
