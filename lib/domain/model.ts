/**
 * The domain model: topics, consumer groups, messages and their states.
 * States are defined once as `as const` objects; types derive from them.
 */
import type { PushSettings } from './push.js';
import type { RetryPolicy } from './retry-policy.js';
export const TopicType = { standard: 'standard', fifo: 'fifo' } as const;
export type TopicType = (typeof TopicType)[keyof typeof TopicType];

export const DeliveryMode = {
  serialized: 'serialized',
  protected: 'protected',
  concurrent: 'concurrent',
} as const;
export type DeliveryMode = (typeof DeliveryMode)[keyof typeof DeliveryMode];

export const Encoding = { utf8: 'utf8', base64: 'base64' } as const;
export type Encoding = (typeof Encoding)[keyof typeof Encoding];

/** Where a message is in its life, as reported by send and query. */
export const MessageState = {
  deliverable: 'deliverable',
  scheduled: 'scheduled',
  prepared: 'prepared',
  cancelled: 'cancelled',
  rolledBack: 'rolled-back',
  /**
   * A scheduled or committed message whose release (commit) was left unfinished until its retention
   * ran out: appended once and expired, or never appended — it will not be delivered (again).
   */
  expired: 'expired',
} as const;
export type MessageState = (typeof MessageState)[keyof typeof MessageState];

/** A message's state inside one consumer group (message query). */
export const GroupDeliveryState = {
  waiting: 'waiting',
  inFlight: 'in-flight',
  pending: 'pending',
  committed: 'committed',
  deadLettered: 'dead-lettered',
  expired: 'expired',
  filtered: 'filtered',
} as const;
export type GroupDeliveryState = (typeof GroupDeliveryState)[keyof typeof GroupDeliveryState];

export const Limits = {
  nameMaxLength: 128,
  bodyMaxBytes: 256 * 1024,
  /**
   * A whole message: its body as sent (a base64 body as its text) plus every key, property name
   * and value, tag and shard key in UTF-8 bytes (`messageBytes`, records.ts). Room for a 256 KiB
   * base64 body with every key and property at its longest in ASCII (388,696 bytes); what it
   * keeps is the segment item of the message's dead-letter copy below DynamoDB's 400 KB
   * (docs/design.md, Limits by construction). Above it: 413.
   */
  messageMaxBytes: 400_000,
  requestMaxBytes: 1024 * 1024,
  /** JSON answers stay at or below this (a synchronous Lambda answers at most 6 MB): answer-budget.ts. */
  answerMaxBytes: 5_000_000,
  batchMaxEntries: 100,
  publishPerEntryMax: 10,
  publishPerCommitMax: 25,
  receiveMaxMessages: 100,
  receiveMaxWaitSeconds: 20,
  visibilityMaxSeconds: 43_200,
  visibilityDefaultSeconds: 30,
  maxDeliveriesDefault: 16,
  maxDeliveriesMax: 1000,
  retentionDefaultSeconds: 3 * 86_400,
  retentionMinSeconds: 300,
  retentionMaxSeconds: 14 * 86_400,
  maxDelayDefaultSeconds: 3 * 86_400,
  dedupWindowSeconds: 86_400,
  keysMax: 16,
  keyMaxLength: 128,
  propertiesMax: 32,
  propertyKeyMaxLength: 128,
  propertyValueMaxLength: 1024,
  tagMaxLength: 128,
  shardKeyMaxLength: 128,
  subscriptionsMax: 20,
  /**
   * Groups that may name one topic as their dead-letter topic: the topic item lists them (`dg`),
   * ≤ 500 × 128-byte names = 64,000 B next to its other lists (docs/design.md, Limits by construction).
   */
  deadLetterGroupsPerTopicMax: 500,
  checkAfterDefaultSeconds: 60,
  checkIntervalDefaultSeconds: 60,
  maxChecksDefault: 15,
  checkTimeoutMs: 5000,
  /** A rotated-out signing secret keeps signing (next to the new one) this long. */
  secretRotationGraceSeconds: 86_400,
  /** A rotation this soon after the last one is taken for its retry (longer than an API request lives): the secret held before it keeps signing. */
  secretRotationRetryMs: 60_000,
  tagsPerSubscriptionMax: 32,
  /**
   * Partitions of a standard topic when PUT does not say (they carry the topic's write and read
   * throughput); a standard topic may raise its count up to `partitionsMax`, never lower it.
   * A FIFO topic's partitions are its notice streams: set at creation (same default and range),
   * fixed after; `standardPartitions` on a topic of a time-order group (the group's namespace).
   */
  standardPartitions: 4,
  partitionsMin: 1,
  partitionsMax: 256,
} as const;

/** Not `.` or `..`: URL paths resolve those segments (RFC 3986 §5.2.4), so no route could name them. */
export const NAME_PATTERN = /^(?!\.{1,2}$)[A-Za-z0-9._-]{1,128}$/;

export interface Topic {
  name: string;
  type: TopicType;
  retentionSeconds: number;
  maxDelaySeconds: number;
  orderGroup: string | undefined;
  partitions: number;
  /**
   * `sq`: a sequenced FIFO topic (set at creation, fixed after): its shard streams (`…/q:<key>`)
   * take their sequence numbers from a counter instead of a head read, so producers on one shard
   * never lose an append race (docs/design.md, "Sequenced FIFO topics"). Absent: chained.
   */
  sequenced?: boolean | undefined;
  createdAt: number;
  /** Bumped each time the topic is re-created after a delete; older records are ignored. */
  generation: number;
  /**
   * Standard topics re-created after a delete: the first sequence number of the
   * current generation in each partition (older ones belong to dead generations
   * and are not counted by statistics). Absent: every sequence number counts.
   */
  generationStarts?: number[] | undefined;
  /**
   * The last purge (ms): every message that became deliverable at or before it
   * is dropped, and scheduled messages sent at or before it are cancelled when
   * due (docs/design.md, Purge). Absent: never purged.
   */
  purgedAt?: number | undefined;
  /** Standard topics: each partition's next sequence number when the last purge read it (statistics count from it). */
  purgeStarts?: number[] | undefined;
  /**
   * `pu`: how many push subscriptions the topic has (the push groups'
   * admin path maintains it). Absent: none. With `parkedUntil`, decides the
   * `w` flag of appended segments (domain/wake-flag.ts).
   */
  pushSubscriptions?: number | undefined;
  /**
   * `pg`: the names of the push groups subscribed to the topic, kept with `pu`
   * in the same transactions; what the dispatcher's push route reads instead
   * of every group. Absent on topics saved before it existed (the route then
   * reads the groups, as it used to).
   */
  pushGroups?: readonly string[] | undefined;
  /**
   * `dg`: the groups that name the topic as their dead-letter topic, kept by
   * their saves and deletes (catalog.ts): a topic some group names never
   * becomes FIFO. Groups saved before it existed are missing from it.
   */
  deadLetterGroups?: readonly string[] | undefined;
  /** `wu` (ms): a parked pull consumer waits for the topic until then. Absent: nobody parked. */
  parkedUntil?: number | undefined;
  /** `wb`: group → until when (ms) its consumers wait on its doorbell for this topic. Absent: none ever did. */
  doorbellGroups?: Readonly<Record<string, number>> | undefined;
  /**
   * Standard topics: saves of groups that added a subscription to the topic (`sv`). A partition
   * raise is conditional on it, so a group that subscribed meanwhile gets its new cursors
   * (docs/design.md, Raising partitions). Absent: 0.
   */
  subscriptionSaves?: number | undefined;
}

/** Where the current generation of a standard topic's partition starts (1 when it never was re-created). */
export const generationStart = (topic: Topic, partition: number): number => topic.generationStarts?.[partition] ?? 1;

/** Where a partition's messages that still count start: its current generation, after the last purge. */
export const countedFrom = (topic: Topic, partition: number): number =>
  Math.max(generationStart(topic, partition), topic.purgeStarts?.[partition] ?? 1);

/** A message dropped by a purge of its topic (it became deliverable at or before the purge). */
export const isPurged = (topic: Pick<Topic, 'purgedAt'>, record: Pick<MessageRecord, 'deliverableAt'>): boolean =>
  topic.purgedAt !== undefined && record.deliverableAt <= topic.purgedAt;

/** Where a new subscription's positions start (SPEC §1): `latest` (default) or everything still retained. */
export const StartFrom = { earliest: 'earliest', latest: 'latest' } as const;
export type StartFrom = (typeof StartFrom)[keyof typeof StartFrom];

export interface Subscription {
  topic: string;
  tags: string[] | undefined;
  /**
   * Where the subscription started when it was added (kept as it was by later
   * saves). FIFO shard cursors are created when a group first hears of a
   * shard, so `earliest` is read again then; absent: `latest`.
   */
  startFrom?: StartFrom | undefined;
  /**
   * When the subscription was added (ms; kept by later saves); absent on subscriptions saved
   * before it was stored: the group's `createdAt`. Messages that entered the stream before it
   * were never the group's (the message query's `filtered`).
   */
  since?: number | undefined;
}

export interface Group {
  name: string;
  subscriptions: Subscription[];
  deliveryMode: DeliveryMode;
  visibilityTimeoutSeconds: number;
  maxDeliveries: number;
  /** Back-off between failed attempts (retry-policy.ts). */
  retryPolicy: RetryPolicy;
  deadLetterTopic: string;
  createdAt: number;
  updatedAt: number;
  /** Counts the saves of the group item (0 for items written before it existed): saves are conditional on it. */
  version: number;
  /** Until when (ms) the group's redrive stream may hold deliverable messages: receive reads it only until then. */
  redriveUntil?: number;
  /** Messages redriven so far (group stats subtract them from `deadLettered`). */
  redriven?: number;
  /** A push group's target and batching (SPEC §3.9); absent: a pull group. */
  push?: PushSettings | undefined;
  /** A push group's signing secret, sealed (created with its first push settings, kept after). */
  pushSecret?: SealedSecret | undefined;
  /** `bq`: the URL of the group's SQS doorbell (AWS), recorded by the first parking receive; absent: none yet. */
  doorbellQueueUrl?: string | undefined;
}

/** A signing secret at rest: the current one and, for a day after a rotation, the previous one. */
export interface SealedSecret {
  sealed: string;
  previous?: string | undefined;
  previousUntil?: number | undefined;
  rotatedAt: number;
}

/** What a producer sends (already validated at the edge). */
export interface SendInput {
  body: string;
  encoding: Encoding;
  tag: string | undefined;
  keys: string[];
  properties: Record<string, string>;
  shardKey: string | undefined;
  delaySeconds: number | undefined;
  deliverAt: number | undefined;
  dedupId: string | undefined;
  /** Send as a half message of this producer group's transaction (SPEC §4). */
  transaction?: TransactionInput | undefined;
}

/** A message as stored in a stream segment. */
export interface MessageRecord {
  messageId: string;
  topic: string;
  body: string;
  encoding: Encoding;
  tag: string | undefined;
  keys: string[];
  properties: Record<string, string>;
  shardKey: string | undefined;
  sentAt: number;
  deliverableAt: number;
  expiresAt: number;
  generation: number;
}

/** What the API shows of a message's content, wherever it shows the message (absent fields: null). */
export const messageContent = (record: MessageRecord) => ({
  body: record.body,
  encoding: record.encoding,
  tag: record.tag ?? null,
  keys: record.keys,
  properties: record.properties,
  shardKey: record.shardKey ?? null,
});

export interface SendResult {
  messageId: string;
  state: MessageState;
  sequence?: number;
  deliverAt?: string;
  transactionId?: string;
}

export interface DeliveredMessage {
  messageId: string;
  receiptHandle: string;
  topic: string;
  body: string;
  encoding: Encoding;
  tag: string | null;
  keys: string[];
  properties: Record<string, string>;
  shardKey: string | null;
  sequence: number | null;
  sentAt: string;
  deliverableAt: string;
  deliveryCount: number;
}

/** A half message's life (SPEC §4). */
export const TransactionState = {
  prepared: 'prepared',
  committed: 'committed',
  rolledBack: 'rolled-back',
  /** Committed, but its message's retention ran out before its append was confirmed: delivered at most once, perhaps never. */
  expired: 'expired',
} as const;
export type TransactionState = (typeof TransactionState)[keyof typeof TransactionState];

export const CheckStatus = { commit: 'commit', rollback: 'rollback', unknown: 'unknown' } as const;
export type CheckStatus = (typeof CheckStatus)[keyof typeof CheckStatus];

export const OnMaxChecks = { rollback: 'rollback', commit: 'commit', keep: 'keep' } as const;
export type OnMaxChecks = (typeof OnMaxChecks)[keyof typeof OnMaxChecks];

/** Who resolved a transaction. */
export const ResolvedBy = { producer: 'producer', check: 'check', onMaxChecks: 'onMaxChecks' } as const;
export type ResolvedBy = (typeof ResolvedBy)[keyof typeof ResolvedBy];

export interface ProducerGroup {
  name: string;
  checkerUrl: string;
  checkIntervalSeconds: number;
  maxChecks: number;
  onMaxChecks: OnMaxChecks;
  createdAt: number;
  updatedAt: number;
  secretRotatedAt: number;
}

export interface TransactionInput {
  producerGroup: string;
  checkAfterSeconds: number | undefined;
}

export const iso = (ms: number): string => new Date(ms).toISOString();
