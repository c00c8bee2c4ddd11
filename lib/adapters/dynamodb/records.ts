/** Compact item shapes of messages inside stream segments (short names keep items, and WRUs, small). */
import type { Encoding, MessageRecord } from '../../domain/model.js';

export interface StoredRecord {
  i: string; // messageId
  t: string; // topic
  b: string; // body
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

export const toStored = (record: MessageRecord): StoredRecord => {
  const stored: StoredRecord = {
    i: record.messageId,
    t: record.topic,
    b: record.body,
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
  body: stored.b,
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
