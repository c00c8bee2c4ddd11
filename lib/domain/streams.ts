/**
 * Streams are the ordered logs messages are appended to (see docs/design.md):
 *
 *  - a standard topic has `Limits.standardPartitions` streams, `t:<topic>/p:<n>`;
 *  - a FIFO topic has one stream per shard key, `t:<topic>/k:<shardKey>`;
 *  - FIFO topics of a time-order group share `o:<orderGroup>/k:<shardKey>`.
 *
 * A stream's sequence numbers are gap-free and strictly increasing within an
 * epoch; an epoch only ends when every message of the stream has expired.
 */
import { InvalidArgumentError } from './errors.js';
import { fnv1a32, zeroPad } from './key-encoding.js';
import type { Topic } from './model.js';

export type StreamLocal = { kind: 'partition'; partition: number } | { kind: 'shard'; shardKey: string };

export const streamNamespace = (topic: Pick<Topic, 'name' | 'orderGroup' | 'type'>): string =>
  topic.type === 'fifo' && topic.orderGroup !== undefined ? `o:${topic.orderGroup}` : `t:${topic.name}`;

export const localPart = (local: StreamLocal): string =>
  local.kind === 'partition' ? `p:${local.partition}` : `k:${local.shardKey}`;

export const streamId = (topic: Pick<Topic, 'name' | 'orderGroup' | 'type'>, local: StreamLocal): string =>
  `${streamNamespace(topic)}/${localPart(local)}`;

/** The namespace part of a stream id (`t:<topic>` or `o:<orderGroup>`); names never contain '/'. */
export const namespaceOf = (stream: string): string => stream.slice(0, Math.max(0, stream.indexOf('/')));
export const isShardStream = (stream: string): boolean => stream.includes('/k:');

/**
 * A group's redrive stream: the messages it redrove from its dead letters, read
 * only by its own cursor (docs/design.md, Redrive). Not a shard stream: claimed
 * like a partition. Group names never contain '/'.
 */
export const redriveStream = (group: string): string => `r:${group}/p:0`;
export const isRedriveStream = (stream: string): boolean => stream.startsWith('r:');

/** FIFO namespaces announce shard activity on this many notice streams (docs/design.md, FIFO). */
export const NOTICE_BUCKETS = 4;
export const noticeStream = (namespace: string, bucket: number): string => `${namespace}/n:${bucket}`;

/** A stable, well-spread notice bucket for a shard key. */
export const noticeBucket = (shardKey: string): number => fnv1a32(shardKey) % NOTICE_BUCKETS;

export const parseLocalPart = (text: string): StreamLocal | undefined => {
  if (text.startsWith('p:')) {
    const partition = Number(text.slice(2));
    return Number.isInteger(partition) && partition >= 0 && partition < 1024 ? { kind: 'partition', partition } : undefined;
  }
  if (text.startsWith('k:') && text.length > 2) return { kind: 'shard', shardKey: text.slice(2) };
  return undefined;
};

/** Sequence numbers are stored as fixed-width decimal strings so they sort as numbers. */
export const SEQ_WIDTH = 16;
export const MAX_SEQ = 9_007_199_254_740_991;
export const padSeq = (seq: number): string => zeroPad(seq, SEQ_WIDTH);

const b64 = (text: string): string => Buffer.from(text, 'utf8').toString('base64url');
const unb64 = (text: string): string => Buffer.from(text, 'base64url').toString('utf8');

/**
 * Message ids of messages appended at send are their address: `m` + base64url("<local>|<seq>").
 * They are unique within their topic (sequence numbers never repeat in a stream).
 */
export const directMessageId = (local: StreamLocal, seq: number): string => `m${b64(`${localPart(local)}|${seq}`)}`;

/** Messages that wait before entering a stream (scheduled, transactional) have ids `d<ULID>`, kept after they enter it. */
export const deferredMessageId = (ulid: string): string => `d${ulid}`;
export const isDeferredMessageId = (messageId: string): boolean => /^d[0-9A-HJKMNP-TV-Z]{26}$/.test(messageId);
/** The ULID of a deferred message id. */
export const ulidOfDeferredMessageId = (messageId: string): string => messageId.slice(1);

export interface MessageAddress {
  local: StreamLocal;
  seq: number;
}

export const parseDirectMessageId = (messageId: string): MessageAddress | undefined => {
  if (!messageId.startsWith('m') || messageId.length > 400 || !/^[A-Za-z0-9_-]+$/.test(messageId.slice(1))) return undefined;
  const text = unb64(messageId.slice(1));
  const bar = text.lastIndexOf('|');
  if (bar < 0) return undefined;
  const local = parseLocalPart(text.slice(0, bar));
  const seq = Number(text.slice(bar + 1));
  if (local === undefined || !Number.isSafeInteger(seq) || seq < 1) return undefined;
  return { local, seq };
};

/** A receipt handle names one lease: group (from the URL), topic, stream, sequence and lease token. */
export interface Receipt {
  topic: string;
  stream: string;
  seq: number;
  token: string;
}

export const encodeReceipt = (receipt: Receipt): string =>
  b64(JSON.stringify([1, receipt.topic, receipt.stream, receipt.seq, receipt.token]));

export const decodeReceipt = (handle: string): Receipt => {
  const invalid = () => new InvalidArgumentError('receiptHandle is not a receipt handle issued by Sluice.', {
    issues: [{ path: 'receiptHandle', message: 'malformed receipt handle' }],
  });
  if (handle.length > 2048 || !/^[A-Za-z0-9_-]+$/.test(handle)) throw invalid();
  let parsed: unknown;
  try {
    parsed = JSON.parse(unb64(handle));
  } catch {
    throw invalid();
  }
  if (!Array.isArray(parsed) || parsed.length !== 5 || parsed[0] !== 1) throw invalid();
  const [, topic, stream, seq, token] = parsed as unknown[];
  if (typeof topic !== 'string' || typeof stream !== 'string' || typeof token !== 'string') throw invalid();
  if (typeof seq !== 'number' || !Number.isSafeInteger(seq) || seq < 1) throw invalid();
  return { topic, stream, seq, token };
};
