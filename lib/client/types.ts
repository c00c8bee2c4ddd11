/**
 * Request and response types of the v1 API, written out so that the SDK stands alone (no server
 * code, no zod). They cannot drift from what the server validates and the OpenAPI document
 * describes: `test/unit/client-types.test.ts` checks at compile time (`npm run typecheck`) that
 * each one equals the type of its zod schema in `functions/api/schemas.ts`.
 *
 * Request types are what a caller may send (fields with a server default are optional), response
 * types what the server answers.
 */

// ── Topics (SPEC §3.1) ──────────────────────────────────────────────────

export type TopicType = 'standard' | 'fifo';

/** `type: 'standard' | 'fifo'`, retention, maximum delay, time-order group. */
export type PutTopicInput = {
  type: TopicType;
  retentionSeconds?: number;
  maxDelaySeconds?: number;
  /** FIFO topics only: topics of one order group share their shards' order. */
  orderGroup?: string;
  /** Standard topics: 1–256 streams appends spread over (default 4; a PUT without it keeps the count); only ever raised. FIFO: 1–256 notice streams (default 4), set at creation, fixed after; 4 in a time-order group. */
  partitions?: number;
  /** FIFO topics outside a time-order group (400 otherwise): shard streams numbered by a counter, so producers on one shard never lose an append race. Default false; set at creation, fixed after (409). */
  sequenced?: boolean;
};

/** PATCH: only the fields given change; `type`, `orderGroup` and `sequenced` only with their current values (409 otherwise). */
export type PatchTopicInput = {
  type?: TopicType;
  retentionSeconds?: number;
  maxDelaySeconds?: number;
  orderGroup?: string;
  /** Raise only: a lower count (or another count on a FIFO topic) answers 409. */
  partitions?: number;
  /** Only its current value (409 otherwise). */
  sequenced?: boolean;
};

export type Topic = {
  name: string;
  type: TopicType;
  retentionSeconds: number;
  maxDelaySeconds: number;
  orderGroup: string | null;
  partitions: number;
  /** A sequenced FIFO topic (false for every other topic). */
  sequenced: boolean;
  createdAt: string;
};

export type TopicDetail = Topic & {
  approximateMessages: number | null;
  subscribers: string[];
};

export type TopicList = { topics: Topic[]; nextToken: string | null };

// ── Consumer groups ─────────────────────────────────────────────────────

/**
 * A topic a group reads, optionally only the messages with one of `tags`.
 * `startFrom` matters only when the subscription is added: `latest` (default)
 * delivers what becomes deliverable from then on, `earliest` everything still
 * retained. A group answers `startFrom` only for `earliest` subscriptions.
 */
export type Subscription = { topic: string; tags?: string[]; startFrom?: 'earliest' | 'latest' };
export type DeliveryMode = 'serialized' | 'protected' | 'concurrent';

/**
 * Back-off between failed attempts of a message (lease expired or released):
 * delivered again after `min(maxSeconds, initialSeconds × multiplier^(deliveryCount − 1))` s.
 */
export type RetryPolicy = { initialSeconds: number; multiplier: number; maxSeconds: number };

/**
 * A push group's target and batching (SPEC §3.9): exactly one of `url` (https;
 * http on loopback in the local runtime) and `lambdaArn` (AWS, functions the
 * deployment allows).
 */
export type PushInput = { url?: string; lambdaArn?: string; batchSize?: number; timeoutSeconds?: number; maxConcurrency?: number };
export type PushSettings = { url?: string; lambdaArn?: string; batchSize: number; timeoutSeconds: number; maxConcurrency: number };

export type PutGroupInput = {
  subscriptions: Subscription[];
  deliveryMode?: DeliveryMode;
  visibilityTimeoutSeconds?: number;
  maxDeliveries?: number;
  /** Fields not given: 1 s, ×2, 600 s (PUT) or the stored values (PATCH). */
  retryPolicy?: Partial<RetryPolicy>;
  deadLetterTopic?: string;
  /** Makes the group a push group (SPEC §3.9). */
  push?: PushInput;
};

/** PATCH: only the fields given change; `subscriptions`, when given, is the whole new list. */
export type PatchGroupInput = {
  subscriptions?: Subscription[];
  deliveryMode?: DeliveryMode;
  visibilityTimeoutSeconds?: number;
  maxDeliveries?: number;
  /** Fields not given: 1 s, ×2, 600 s (PUT) or the stored values (PATCH). */
  retryPolicy?: Partial<RetryPolicy>;
  deadLetterTopic?: string;
  /** Fields given change; `null` makes a push group a pull group. */
  push?: PushInput | null;
};

export type Group = {
  name: string;
  subscriptions: Subscription[];
  deliveryMode: DeliveryMode;
  visibilityTimeoutSeconds: number;
  maxDeliveries: number;
  retryPolicy: RetryPolicy;
  deadLetterTopic: string;
  /** null for a pull group. */
  push: PushSettings | null;
  /** A push group's Standard Webhooks secret: answered when it is created and on rotate only. */
  signingSecret?: string;
  /** rotate-secret only. */
  secretRotatedAt?: string;
  createdAt: string;
  updatedAt: string;
};

/** One push request's outcome (GET group `push.lastAttempts`). */
export type PushAttempt = { at: string; status: number | null; latencyMs: number; error: string | null; messages: number; retried: number };

export type GroupDetail = Omit<Group, 'push'> & {
  push: (PushSettings & { lastAttempts: PushAttempt[] }) | null;
  backlog: number;
  inFlight: number;
  pending: number;
  oldestMessageAgeSeconds: number;
  deadLettered: number;
  /** Messages committed by the group's live cursors; null for a group with more cursors than its figures read whole (≈ 4,000: many FIFO shard keys). */
  committed: number | null;
};

export type GroupList = { groups: Group[]; nextToken: string | null };
/** What one redrive call brought back; `more`: dead letters remain that it did not reach (call again). */
export type RedriveResult = { redriven: number; more: boolean };

/**
 * Where `seek` moves a group: `earliest` (the first retained message),
 * `latest` (past the last one: a purge for this group) or an RFC 3339 time up
 * to now (the first message deliverable at or after it). `topics` defaults to
 * every topic the group subscribes to (standard and FIFO; a time-order
 * group's subscribed topics move together).
 */
export type SeekInput = { to: 'earliest' | 'latest' | (string & {}); topics?: string[] };
/**
 * The group's new position per partition of its standard topics (the sequence number it receives
 * next) and, per FIFO shard namespace, how many shard cursors moved.
 */
export type SeekResult = {
  group: string;
  positions: Array<{ topic: string; partition: number; next: number }>;
  shards: Array<{ topics: string[]; moved: number }>;
};
/** A purge: every message deliverable or scheduled up to `purgedAt` is dropped. */
export type PurgeResult = { topic: string; purgedAt: string };

// ── Send (SPEC §3.2) ────────────────────────────────────────────────────

export type BodyEncoding = 'utf8' | 'base64';

/** A send as the API takes it (SPEC §3.2). */
export type SendBody = {
  body: string;
  encoding?: BodyEncoding;
  tag?: string;
  keys?: string[];
  properties?: Record<string, string>;
  shardKey?: string;
  delaySeconds?: number;
  /** RFC 3339 date-time or epoch milliseconds (a number below 10^11 is refused: it looks like epoch seconds). */
  deliverAt?: string | number;
  dedupId?: string;
  /** Send as a half message of this producer group (SPEC §3.6). */
  transaction?: { producerGroup: string; checkAfterSeconds?: number };
};
/**
 * A send as the client takes it: `body` may also be bytes (sent as base64).
 * A missing `dedupId` is filled in with a fresh UUID so that retries are idempotent.
 */
export type SendInput = Omit<SendBody, 'body' | 'encoding'> & {
  body: string | Uint8Array;
  encoding?: SendBody['encoding'];
};
export type SendResult = {
  messageId: string;
  state: 'deliverable' | 'scheduled' | 'prepared';
  sequence?: number;
  deliverAt?: string;
  transactionId?: string;
};
export type SendBatchEntryResult = (SendResult & { index: number }) | { index: number; error: Problem };
export type SendBatchResult = { results: SendBatchEntryResult[] };

// ── Receive and commit ──────────────────────────────────────────────────

export type ReceiveInput = {
  maxMessages?: number;
  visibilityTimeoutSeconds?: number;
  waitSeconds?: number;
  topics?: string[];
  /** Park on the group's doorbell when nothing is found (AWS: answered at once with `doorbell`). */
  park?: boolean;
  /** With `park`: the doorbell answered before was gone (SQS QueueDoesNotExist); the park creates it again. */
  doorbellMissing?: boolean;
};
/** A message's content, as every view of a message carries it. */
export type MessageContent = {
  body: string;
  encoding: BodyEncoding;
  tag: string | null;
  keys: string[];
  properties: Record<string, string>;
  shardKey: string | null;
};
/** Where a message stands in its stream: its FIFO sequence (null on standard topics) and its times. */
type MessagePosition = { sequence: number | null; sentAt: string; deliverableAt: string };

/** A delivered message with its lease (`receiptHandle`). */
export type Delivered = { messageId: string; receiptHandle: string; topic: string } & MessageContent & MessagePosition & { deliveryCount: number };

/** A message published atomically with a commit (consume-transform-produce): a send, every field but `transaction`, to `topic`. */
export type PublishEntry = { topic: string } & Omit<SendBody, 'transaction'>;
export type CommitEntry = { receiptHandle: string; publish?: PublishEntry[] };
export type CommitEntryResult = { receiptHandle: string; status: 'committed' | 'pending' } | { receiptHandle: string; error: Problem };
export type CommitResult = { results: CommitEntryResult[] };
export type ReceiveResult = {
  messages: Delivered[];
  /** When the request carried `commit`: one result per handle, in order. */
  commitResults?: CommitEntryResult[];
  /** A `park: true` receive that found nothing (AWS): the group's SQS doorbell to long-poll. */
  doorbell?: { queueUrl: string };
};

// ── Messages ────────────────────────────────────────────────────────────

/** `expired`: a scheduled or committed message whose release (commit) was left unfinished until its retention ran out — delivered at most once, perhaps never. */
export type Message = { messageId: string; topic: string; state: 'deliverable' | 'scheduled' | 'prepared' | 'cancelled' | 'rolled-back' | 'expired' } & MessageContent &
  MessagePosition & {
    /** Scheduled messages: when they become deliverable. */
    deliverAt?: string;
    expiresAt: string;
  };
/** Per group: its delivery state; a message the group dead-lettered names its copy (`deadLetter`, found by key too). */
export type MessageDetail = Message & {
  groups: Array<{
    group: string;
    state: 'waiting' | 'in-flight' | 'pending' | 'committed' | 'dead-lettered' | 'expired' | 'filtered';
    deliveryCount: number | null;
    committedAt: string | null;
    deadLetter: { topic: string; messageId: string } | null;
  }>;
};
export type MessageList = { messages: Message[]; nextToken: string | null };

/** RFC 9457 problem details, as every error response carries them. */
export type Problem = {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: string;
  errors?: Array<{ path: string; message: string }>;
};

export interface PageOptions {
  limit?: number;
  nextToken?: string;
}

// ── Transactions and producer groups (SPEC §3.1, §3.6, §4) ─────────────

export type OnMaxChecks = 'rollback' | 'commit' | 'keep';
export type PutProducerInput = {
  checkerUrl: string;
  checkIntervalSeconds?: number;
  maxChecks?: number;
  onMaxChecks?: OnMaxChecks;
};
/** A producer group; `signingSecret` (Standard Webhooks, `whsec_…`) only in the answers to create and rotate-secret. */
export type Producer = {
  name: string;
  checkerUrl: string;
  checkIntervalSeconds: number;
  maxChecks: number;
  onMaxChecks: OnMaxChecks;
  createdAt: string;
  updatedAt: string;
  secretRotatedAt: string;
  signingSecret?: string;
};

export type ProducerList = { producers: Producer[]; nextToken: string | null };

/** `expired`: committed, but its message's retention ran out before its append was confirmed (a commit then answers 409 `TransactionExpired`). */
export type TransactionState = 'prepared' | 'committed' | 'rolled-back' | 'expired';
/** The answer to a commit or rollback (`messageId`/`sequence` once committed). */
export type TransactionResolution = {
  state: 'committed' | 'rolled-back';
  messageId?: string;
  sequence?: number;
};
/** What a checker answers for a transaction it was asked about. */
export type CheckStatus = 'commit' | 'rollback' | 'unknown';
/** One check-back call Sluice made to the producer group's checker. */
export type TransactionCheckRecord = {
  checkCount: number;
  at: string;
  status: CheckStatus;
  httpStatus: number | null;
  error: string | null;
  latencyMs: number;
};
/** A transaction's state and the check-backs Sluice made. */
export type Transaction = {
  transactionId: string;
  state: 'prepared' | 'committed' | 'rolled-back' | 'expired';
  producerGroup: string | null;
  topic: string;
  messageId: string;
  sequence: number | null;
  sentAt: string;
  checkAfterSeconds: number | null;
  nextCheckAt: string | null;
  checkCount: number;
  resolvedBy: 'producer' | 'check' | 'onMaxChecks' | null;
  resolvedAt: string | null;
  checks: TransactionCheckRecord[];
};

/** The `data` of a `transaction.check` webhook (SPEC §4). */
export interface TransactionCheck {
  transactionId: string;
  producerGroup: string;
  topic: string;
  messageId: string;
  checkCount: number;
  sentAt: string;
  message: MessageContent;
}
