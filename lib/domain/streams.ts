/**
 * Streams are the ordered logs messages are appended to (see docs/design.md):
 *
 *  - a standard topic has `topic.partitions` streams (1–256, raised only), `t:<topic>/p:<n>`;
 *  - a FIFO topic has one stream per shard key, `t:<topic>/k:<shardKey>`; a sequenced FIFO
 *    topic's are `t:<topic>/q:<shardKey>` (their numbers come from a counter, with holes that
 *    readers settle: lib/domain/gaps.ts);
 *  - FIFO topics of a time-order group share `o:<orderGroup>/k:<shardKey>`.
 *
 * A stream's sequence numbers are gap-free and strictly increasing within an
 * epoch; an epoch only ends when every message of the stream has expired.
 */
import { fnv1a32, zeroPad } from './key-encoding.js';
import type { Topic } from './model.js';

export type StreamLocal = { kind: 'partition'; partition: number } | { kind: 'shard'; shardKey: string };

export const streamNamespace = (topic: Pick<Topic, 'name' | 'orderGroup' | 'type'>): string =>
  topic.type === 'fifo' && topic.orderGroup !== undefined ? `o:${topic.orderGroup}` : `t:${topic.name}`;

export const localPart = (local: StreamLocal, sequenced = false): string =>
  local.kind === 'partition' ? `p:${local.partition}` : `${sequenced ? 'q' : 'k'}:${local.shardKey}`;

export const streamId = (topic: Pick<Topic, 'name' | 'orderGroup' | 'type' | 'sequenced'>, local: StreamLocal): string =>
  `${streamNamespace(topic)}/${localPart(local, topic.sequenced === true)}`;

/** The stream of shard `shardKey` in a FIFO namespace (`sequenced`: its topic is; docs/design.md, Sequenced FIFO topics). */
export const shardStreamId = (namespace: string, shardKey: string, sequenced: boolean): string =>
  `${namespace}/${localPart({ kind: 'shard', shardKey }, sequenced)}`;

/** The namespace part of a stream id (`t:<topic>` or `o:<orderGroup>`); names never contain '/'. */
export const namespaceOf = (stream: string): string => stream.slice(0, Math.max(0, stream.indexOf('/')));
/** The part of a stream id after its namespace (namespaces never contain '/'). */
const localOf = (stream: string): string => stream.slice(stream.indexOf('/') + 1);
export const isShardStream = (stream: string): boolean => stream.includes('/') && /^[kq]:/.test(localOf(stream));
/** A shard stream of a sequenced FIFO topic: numbers from a counter, holes settled by readers (lib/domain/gaps.ts). */
export const isSequencedStream = (stream: string): boolean => stream.includes('/') && localOf(stream).startsWith('q:');

/**
 * A group's redrive stream: the messages it redrove from its dead letters, read
 * only by its own cursor (docs/design.md, Redrive). Not a shard stream: claimed
 * like a partition. Group names never contain '/'.
 */
/** The partition of a standard topic's partition stream `t:<topic>/p:<n>` (undefined for any other stream). */
export const partitionOf = (stream: string, topic: string): number | undefined => {
  const prefix = `t:${topic}/p:`;
  if (!stream.startsWith(prefix)) return undefined;
  const p = Number(stream.slice(prefix.length));
  return Number.isSafeInteger(p) && p >= 0 && String(p) === stream.slice(prefix.length) ? p : undefined;
};
export const redriveStream = (group: string): string => `r:${group}/p:0`;
export const isRedriveStream = (stream: string): boolean => stream.startsWith('r:');

/**
 * FIFO namespaces announce shard activity on notice streams (docs/design.md, FIFO): a FIFO
 * topic on its `partitions` of them (1–256, set at creation, 4 by default, fixed after); a
 * time-order group's namespace, shared by its topics, on this many (its topics must have 4).
 */
export const NOTICE_BUCKETS = 4;
export const noticeStream = (namespace: string, bucket: number): string => `${namespace}/n:${bucket}`;
/** A notice stream `<namespace>/n:<b>` (the first '/' ends the namespace; a shard key after `/k:` may hold anything). */
export const isNoticeStream = (stream: string): boolean => /^n:(0|[1-9][0-9]*)$/.test(stream.slice(stream.indexOf('/') + 1)) && stream.indexOf('/') > 0;

/** How many notice streams the namespace of a FIFO topic has. */
export const noticeStreamCount = (topic: Pick<Topic, 'orderGroup' | 'partitions'>): number =>
  topic.orderGroup !== undefined ? NOTICE_BUCKETS : topic.partitions;

/**
 * A wide FIFO topic: more notice streams than the default 4 (never one of a time-order group). Its
 * shard cursors are on the ready index under 16–64 buckets of their group (keys.ts
 * `readyBucketCount`), not under the group's one key (docs/design.md, Ready index); receives sample
 * its notice streams above 8 (partition-sampler.ts).
 */
export const isWideFifo = (topic: Pick<Topic, 'type' | 'orderGroup' | 'partitions'>): boolean =>
  topic.type === 'fifo' && noticeStreamCount(topic) > NOTICE_BUCKETS;

/** A stable, well-spread notice bucket for a shard key among `count` notice streams. */
export const noticeBucket = (shardKey: string, count: number = NOTICE_BUCKETS): number => fnv1a32(shardKey) % count;

/** The notice stream that announces a FIFO topic's shard (every notice of one shard goes there). */
export const noticeStreamOf = (topic: Pick<Topic, 'name' | 'orderGroup' | 'type' | 'partitions'>, shardKey: string): string =>
  noticeStream(streamNamespace(topic), noticeBucket(shardKey, noticeStreamCount(topic)));

/** Every notice stream of a FIFO topic's namespace. */
export const noticeStreamsOf = (topic: Pick<Topic, 'name' | 'orderGroup' | 'type' | 'partitions'>): string[] =>
  Array.from({ length: noticeStreamCount(topic) }, (_, b) => noticeStream(streamNamespace(topic), b));

/** The notice stream index of a FIFO topic's (not an order group's) notice stream `t:<topic>/n:<b>`. */
export const noticeIndexOf = (stream: string, topic: string): number | undefined => {
  const prefix = `t:${topic}/n:`;
  if (!stream.startsWith(prefix)) return undefined;
  const b = Number(stream.slice(prefix.length));
  return Number.isSafeInteger(b) && b >= 0 && String(b) === stream.slice(prefix.length) ? b : undefined;
};

/** Sequence numbers are stored as fixed-width decimal strings so they sort as numbers. */
export const SEQ_WIDTH = 16;
export const MAX_SEQ = 9_007_199_254_740_991;
export const padSeq = (seq: number): string => zeroPad(seq, SEQ_WIDTH);

/** Messages that wait before entering a stream (scheduled, transactional) have ids `d<ULID>`, kept after they enter it. */
export const deferredMessageId = (ulid: string): string => `d${ulid}`;
export const isDeferredMessageId = (messageId: string): boolean => /^d[0-9A-HJKMNP-TV-Z]{26}$/.test(messageId);
/** The ULID of a deferred message id. */
export const ulidOfDeferredMessageId = (messageId: string): string => messageId.slice(1);
