/**
 * Which changes of the table reach the dispatcher, and how they are batched
 * and retried — ONE definition for both event sources: the Lambda event
 * source mapping on the table's stream (cdk/dispatcher.ts) and the local
 * stream poller (lib/adapters/local/stream-poller.ts), so `npm start` runs the
 * path AWS runs (docs/design.md, "The dispatcher").
 *
 * A message becomes deliverable only by a segment INSERT (send, release of a
 * scheduled message, commit of a half message, publish-on-commit, redrive all
 * append segments), so the filters pass segment INSERTs that carry a flag:
 *   `nf` (N): the lane of the FIFO notice this segment needs;
 *   `w`  (N): someone waits for this topic (a push group or a parked consumer).
 * Everything else — sentinels, cursor writes, the dispatcher's own writes —
 * is dropped by the event source before any invocation, at no charge.
 */
import type { EventPattern } from '../../domain/event-pattern.js';

/** Segment attribute: the FIFO notice lane this segment must be announced on (number). */
export const NOTICE_FLAG = 'nf';
/** Segment attribute: set (to 1) when a waiter or push group of the topic needs to hear of it (number). */
export const WAKE_FLAG = 'w';
/**
 * Segment attribute: the topics a flagged segment is for, when its entries do not name
 * them (a FIFO notice segment the sender writes after the segments it announces: the
 * announcement, not the message segment, makes the messages findable, so it wakes).
 */
export const WAKE_TOPICS = 'wt';

/** Partition keys of stream items start with this (sentinels and segments; keys.ts when it lands). */
export const STREAM_PK_PREFIX = 'S#';
/** The sort key of a stream's sentinel (never a segment). */
export const SENTINEL_SK = '#';

// Spelled as cdk's FilterRule helpers spell them (isEqual, beginsWith, notEquals, exists):
// test/cdk/dispatcher.test.ts builds the same patterns with those helpers and compares.
const segmentInsert = (flag: string): EventPattern => ({
  eventName: ['INSERT'],
  dynamodb: {
    Keys: {
      pk: { S: [{ prefix: STREAM_PK_PREFIX }] },
      sk: { S: [{ 'anything-but': [SENTINEL_SK] }] },
    },
    NewImage: { [flag]: { N: [{ exists: true }] } },
  },
});

/**
 * The dispatcher's filter criteria, one pattern per flag (filters are ORed;
 * an event source mapping takes up to five, each pattern ≤ 4,096 characters).
 */
export const DISPATCH_FILTERS: readonly EventPattern[] = [segmentInsert(NOTICE_FLAG), segmentInsert(WAKE_FLAG)];

/**
 * The event source's batching and error handling, used as the CDK
 * `DynamoEventSource` props and as the local poller's options.
 */
export const DISPATCH_SOURCE = {
  /**
   * Where a new mapping (or a local runtime without a checkpoint) starts: the
   * oldest record still in the stream (24 h), so records written while the
   * mapping is (re)created are not skipped; repeats are harmless (every route
   * is idempotent).
   */
  startingPosition: 'TRIM_HORIZON',
  /** Records per invocation (the Lambda default for DynamoDB streams). */
  batchSize: 100,
  /**
   * No batching window: a record is handed over as soon as it is read, since
   * wake-up latency is the point. Batches still form under load (one
   * GetRecords returns everything since the last one).
   */
  maxBatchingWindowSeconds: 0,
  /** A failed batch is split in two and each half retried (isolates a bad record; splitting is not a retry). */
  bisectBatchOnError: true,
  /** Retries of a failed batch (of one record, once bisected) before it goes to the on-failure destination. */
  retryAttempts: 10,
  /** Records older than this go to the on-failure destination instead of blocking the shard longer. */
  maxRecordAgeSeconds: 3600,
  /** The handler answers with the records it could not handle; the rest are not retried. */
  reportBatchItemFailures: true,
} as const;
