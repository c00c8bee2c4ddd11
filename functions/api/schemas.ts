/**
 * Request and response schemas of the v1 API. The handlers validate with
 * them and `openapi.ts` generates the OpenAPI 3.1 document from them.
 */
import { z } from 'zod';
import { MESSAGE_ID_MAX_LENGTH } from '../../lib/domain/message-ids.js';
import { GroupDeliveryState, Limits, MessageState, NAME_PATTERN, ResolvedBy, TransactionState } from '../../lib/domain/model.js';
import { RetryLimits } from '../../lib/domain/retry-policy.js';
import { PushLimits } from '../../lib/domain/push.js';

export const Name = z
  .string()
  .regex(NAME_PATTERN, 'must be 1-128 characters of A-Z a-z 0-9 . _ -, and not . or ..');

const shortText = (max: number) => z.string().min(1).max(max);
/** 10^11 ms is 1973-03-03; 10^11 s is the year 5138: below it, an epoch number is seconds sent by mistake. */
const EPOCH_MS_MIN = 1e11;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

export const TopicParams = z.strictObject({ topic: Name });
export const ProducerParams = z.strictObject({ producerGroup: Name });
export const TransactionParams = z.strictObject({
  transactionId: z.string().regex(/^t[0-9A-HJKMNP-TV-Z]{26}$/, 'must be a transaction id (t + ULID)'),
});
export const GroupParams = z.strictObject({ group: Name });
export const MessageParams = z.strictObject({ topic: Name, messageId: shortText(MESSAGE_ID_MAX_LENGTH) });

export const PageQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(100).default(100),
  nextToken: shortText(2048).optional(),
});
export const KeyQuery = z.strictObject({
  key: shortText(Limits.keyMaxLength),
  limit: z.coerce.number().int().min(1).max(100).default(20),
  nextToken: shortText(2048).optional(),
});

export const PutTopicBody = z.strictObject({
  type: z.enum(['standard', 'fifo']),
  retentionSeconds: z.number().int().min(Limits.retentionMinSeconds).max(Limits.retentionMaxSeconds).optional(),
  maxDelaySeconds: z.number().int().min(0).max(Limits.retentionMaxSeconds).optional(),
  orderGroup: Name.optional(),
  partitions: z
    .number()
    .int()
    .min(Limits.partitionsMin)
    .max(Limits.partitionsMax)
    .optional()
    .describe('standard topics: streams appends spread over (default 4 at creation; only ever raised, 409 on lowering); FIFO topics: notice streams shards are announced on (default 4, set at creation, fixed after: another count → 409; 4 on a topic of a time-order group, else 400)'),
  sequenced: z
    .boolean()
    .optional()
    .describe('FIFO topics outside a time-order group: shard streams take their sequence numbers from a counter, so producers on one shard never lose an append race (default false; on a standard topic or with orderGroup → 400; set at creation, fixed after: the other value → 409)'),
});

/** PATCH: only the fields given change; `type`, `orderGroup` and `sequenced` only with their current values. */
export const PatchTopicBody = PutTopicBody.partial();

export const Subscription = z.strictObject({
  topic: Name,
  tags: z.array(shortText(Limits.tagMaxLength)).min(1).max(Limits.tagsPerSubscriptionMax).optional(),
  /** Where a subscription starts when it is added (an existing subscription keeps its position). */
  startFrom: z.enum(['earliest', 'latest']).optional(),
});

/** SPEC §3.1 ranges; `maxSeconds` below `initialSeconds` is refused once the policy is merged (retry-policy.ts). */
export const RetryPolicyBody = z
  .strictObject({
    initialSeconds: z.number().int().min(0).max(RetryLimits.initialSecondsMax).optional().describe('delay after the first failed attempt (default 1; 0: at once)'),
    multiplier: z.number().min(RetryLimits.multiplierMin).max(RetryLimits.multiplierMax).optional().describe('factor per further failed attempt (default 2)'),
    maxSeconds: z.number().int().min(0).max(RetryLimits.maxSecondsMax).optional().describe('the longest delay, at least initialSeconds (default 600)'),
  })
  .describe('back-off between failed attempts: min(maxSeconds, initialSeconds × multiplier^(deliveryCount − 1))');

/** SPEC §3.1 / §3.9: exactly one of `url` and `lambdaArn` (checked once merged: a PATCH may give only some fields). */
export const PushBody = z
  .strictObject({
    url: z.string().min(1).max(PushLimits.urlMaxLength).optional().describe('https endpoint (checker URL rules, SPEC §4; http on loopback only in the local runtime)'),
    lambdaArn: z.string().min(1).max(256).optional().describe('AWS only: a Lambda function the deployment allows (construct prop pushTargets)'),
    batchSize: z.number().int().min(PushLimits.batchSizeMin).max(PushLimits.batchSizeMax).optional().describe(`messages per request (default ${PushLimits.batchSizeDefault})`),
    timeoutSeconds: z.number().int().min(PushLimits.timeoutSecondsMin).max(PushLimits.timeoutSecondsMax).optional().describe(`a request without an answer by then failed (default ${PushLimits.timeoutSecondsDefault})`),
    maxConcurrency: z.number().int().min(PushLimits.maxConcurrencyMin).max(PushLimits.maxConcurrencyMax).optional().describe(`the group's requests in flight at once (default ${PushLimits.maxConcurrencyDefault})`),
  })
  .describe('push group: Sluice delivers the messages to this target (SPEC §3.9)');

export const PutGroupBody = z.strictObject({
  subscriptions: z.array(Subscription).min(1).max(Limits.subscriptionsMax),
  deliveryMode: z.enum(['serialized', 'protected', 'concurrent']).optional(),
  visibilityTimeoutSeconds: z.number().int().min(1).max(Limits.visibilityMaxSeconds).optional(),
  maxDeliveries: z.number().int().min(1).max(Limits.maxDeliveriesMax).optional(),
  retryPolicy: RetryPolicyBody.optional(),
  deadLetterTopic: Name.optional(),
  push: PushBody.optional(),
});

/**
 * PATCH: only the fields given change (`subscriptions`, when given, is the
 * whole new list; `push` fields over the stored ones; `push: null` makes a pull group).
 */
export const PatchGroupBody = PutGroupBody.partial().extend({ push: PushBody.nullable().optional() });

export const PutProducerBody = z.strictObject({
  checkerUrl: z.string().min(1).max(2048),
  checkIntervalSeconds: z.number().int().min(1).max(3600).optional(),
  maxChecks: z.number().int().min(1).max(1000).optional(),
  onMaxChecks: z.enum(['rollback', 'commit', 'keep']).optional(),
});

const sendShape = {
  body: z.string(),
  encoding: z.enum(['utf8', 'base64']).default('utf8'),
  tag: shortText(Limits.tagMaxLength).optional(),
  keys: z.array(shortText(Limits.keyMaxLength)).max(Limits.keysMax).optional(),
  properties: z
    .record(shortText(Limits.propertyKeyMaxLength), z.string().max(Limits.propertyValueMaxLength))
    .optional()
    .refine((p) => p === undefined || Object.keys(p).length <= Limits.propertiesMax, {
      message: `at most ${Limits.propertiesMax} properties`,
    }),
  shardKey: shortText(Limits.shardKeyMaxLength).optional(),
  delaySeconds: z.number().int().min(0).max(Limits.retentionMaxSeconds).optional(),
  deliverAt: z
    .union([
      z.iso.datetime({ offset: true }),
      // Epoch seconds read as milliseconds are a time in January 1970, i.e. "deliver now": refuse them (SPEC §2).
      z
        .number()
        .int()
        .min(EPOCH_MS_MIN, 'is below 10^11, which looks like epoch seconds: give epoch milliseconds or an RFC 3339 date-time'),
    ])
    .optional()
    .describe('RFC 3339 date-time, or epoch milliseconds (numbers below 10^11 are refused: they look like epoch seconds)'),
  dedupId: shortText(128).optional(),
  transaction: z
    .strictObject({ producerGroup: Name, checkAfterSeconds: z.number().int().min(1).max(3600).optional() })
    .optional(),
};

const sendChecks = <T extends z.ZodType<{ body: string; encoding: string; delaySeconds?: number; deliverAt?: unknown }>>(schema: T) =>
  schema
    .refine((m) => m.encoding !== 'base64' || BASE64.test(m.body), { message: 'is not valid base64', path: ['body'] })
    .refine((m) => m.delaySeconds === undefined || m.deliverAt === undefined, {
      message: 'give either delaySeconds or deliverAt, not both',
      path: ['deliverAt'],
    });

export const SendBody = sendChecks(z.strictObject(sendShape));
export const SendBatchBody = z.strictObject({
  entries: z.array(SendBody).min(1).max(Limits.batchMaxEntries),
});

export const ReceiveBody = z.strictObject({
  maxMessages: z.number().int().min(1).max(Limits.receiveMaxMessages).default(10),
  visibilityTimeoutSeconds: z.number().int().min(0).max(Limits.visibilityMaxSeconds).optional(),
  waitSeconds: z.number().int().min(0).max(Limits.receiveMaxWaitSeconds).default(0),
  topics: z.array(Name).min(1).max(Limits.subscriptionsMax).optional(),
  commit: z
    .array(shortText(2048))
    .min(1)
    .max(Limits.batchMaxEntries)
    .optional()
    .describe('receipt handles to commit before receiving (saves the separate commit call; use /commit for publish)'),
  park: z
    .boolean()
    .optional()
    .describe(
      'park the group on its doorbell when nothing is found: on AWS the answer comes at once with `doorbell.queueUrl`, an SQS queue to long-poll (SDK consumers); on the local runtime the long poll waits on the in-process doorbell',
    ),
  doorbellMissing: z
    .boolean()
    .optional()
    .describe(
      'with `park: true`: the doorbell queue this group answered was gone when polled (SQS QueueDoesNotExist: SQS may delete a queue idle for 30 days); the park creates it again (at most once a minute per group and function instance)',
    ),
}).refine((b) => b.doorbellMissing !== true || b.park === true, { message: 'needs `park: true`', path: ['doorbellMissing'] });

/** Redrive (docs/design.md, Redrive): left out, as many as one request reaches (at most 1000). */
export const RedriveBody = z.strictObject({
  maxMessages: z.number().int().min(1).max(1000).optional().describe('most dead letters to bring back (default: as many as this request reaches, at most 1000)'),
});

export const VisibilityBody = z.strictObject({
  receiptHandle: shortText(2048),
  visibilityTimeoutSeconds: z.number().int().min(0).max(Limits.visibilityMaxSeconds),
  attempted: z
    .boolean()
    .optional()
    .describe('false with visibilityTimeoutSeconds 0: given back unhandled (it waited behind a failed message of its FIFO shard) — no failed attempt, no back-off, not counted toward maxDeliveries'),
});

/** A message published atomically with a commit: a send (every field but `transaction`) plus its topic. */
const { transaction: _notOnPublish, ...publishShape } = sendShape;
export const PublishEntry = sendChecks(z.strictObject({ topic: Name, ...publishShape }));

export const CommitBody = z.strictObject({
  entries: z
    .array(
      z.strictObject({
        receiptHandle: shortText(2048),
        publish: z.array(PublishEntry).max(Limits.publishPerEntryMax).optional(),
      }),
    )
    .min(1)
    .max(Limits.batchMaxEntries),
});

// ── responses (documentation) ──────────────────────────────────────────

/** A time as the API answers it: RFC 3339 in UTC (`format: date-time` in the OpenAPI document). */
const Time = z.iso.datetime();

export const ProblemSchema = z.object({
  type: z.string(),
  title: z.string(),
  status: z.number().int(),
  detail: z.string(),
  code: z.string(),
  errors: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
});

export const TopicSchema = z.object({
  name: z.string(),
  type: z.enum(['standard', 'fifo']),
  retentionSeconds: z.number().int(),
  maxDelaySeconds: z.number().int(),
  orderGroup: z.string().nullable(),
  partitions: z.number().int(),
  sequenced: z.boolean(),
  createdAt: Time,
});
export const TopicDetailSchema = TopicSchema.extend({
  approximateMessages: z.number().int().nullable(),
  subscribers: z.array(z.string()),
});
export const TopicListSchema = z.object({ topics: z.array(TopicSchema), nextToken: z.string().nullable() });

/** POST /v1/groups/{group}/seek: where to move the group (a time: the first message deliverable at or after it). */
export const SeekBody = z.strictObject({
  to: z
    .union([z.enum(['earliest', 'latest']), z.iso.datetime({ offset: true })])
    .describe('"earliest" (the first retained message), "latest" (past the last one: a purge for this group) or an RFC 3339 date-time up to now'),
  topics: z.array(Name).min(1).max(Limits.subscriptionsMax).optional().describe('default: every topic the group subscribes to'),
});
export const SeekResultSchema = z.object({
  group: z.string(),
  positions: z.array(z.object({ topic: z.string(), partition: z.number().int(), next: z.number().int() })).describe('standard topics: the sequence number each partition delivers next'),
  shards: z
    .array(z.object({ topics: z.array(z.string()), moved: z.number().int() }))
    .describe('FIFO topics, one entry per shard namespace (a time-order group: its subscribed topics together): how many shard cursors moved'),
});

export const PurgeResultSchema = z.object({ topic: z.string(), purgedAt: Time });

export const PushViewSchema = z.object({
  url: z.string().optional(),
  lambdaArn: z.string().optional(),
  batchSize: z.number().int(),
  timeoutSeconds: z.number().int(),
  maxConcurrency: z.number().int(),
});
export const GroupSchema = z.object({
  name: z.string(),
  subscriptions: z.array(z.object({ topic: z.string(), tags: z.array(z.string()).optional(), startFrom: z.enum(['earliest', 'latest']).optional() })),
  deliveryMode: z.enum(['serialized', 'protected', 'concurrent']),
  visibilityTimeoutSeconds: z.number().int(),
  maxDeliveries: z.number().int(),
  retryPolicy: z.object({ initialSeconds: z.number().int(), multiplier: z.number(), maxSeconds: z.number().int() }),
  deadLetterTopic: z.string(),
  push: PushViewSchema.nullable().describe('null for a pull group'),
  signingSecret: z.string().optional().describe("a push group's Standard Webhooks secret (whsec_…): shown when it is created and on rotate only"),
  secretRotatedAt: Time.optional().describe('rotate-secret only: when the new secret was issued'),
  createdAt: Time,
  updatedAt: Time,
});
export const PushAttemptSchema = z.object({
  at: Time,
  status: z.number().int().nullable().describe('HTTP status; null: no answer (timeout, connection error, function error)'),
  latencyMs: z.number().int(),
  error: z.string().nullable(),
  messages: z.number().int(),
  retried: z.number().int().describe('messages of the request whose attempt failed (the retry list, or all)'),
});
export const GroupDetailSchema = GroupSchema.extend({
  push: PushViewSchema.extend({ lastAttempts: z.array(PushAttemptSchema).describe('the last push requests, newest first (at most 10)') })
    .nullable()
    .describe('null for a pull group'),
  backlog: z.number().int(),
  inFlight: z.number().int(),
  pending: z.number().int(),
  oldestMessageAgeSeconds: z.number().int(),
  deadLettered: z.number().int(),
  committed: z.number().int().nullable().describe('messages committed by the group; null for a group with more cursors than its figures read whole (one Query page, about 4,000: many FIFO shard keys)'),
});
export const RedriveResultSchema = z.object({
  redriven: z.number().int().describe('messages brought back to this group'),
  more: z.boolean().describe('dead letters of this group remain that this request did not reach: call again'),
});
export const GroupListSchema = z.object({ groups: z.array(GroupSchema), nextToken: z.string().nullable() });

/** A FIFO message's `sequence` (docs/design.md, Idle shards expire). */
const Sequence = z
  .number()
  .int()
  .describe('FIFO: the position in its shard, increasing per shard — consecutive while the shard is in use; a new shard, or one used again after its state expired, starts from the clock (epoch ms × 1000 + 1), not from 1');

export const SendResultSchema = z.object({
  messageId: z.string(),
  state: z.enum(['deliverable', 'scheduled', 'prepared']),
  sequence: Sequence.optional(),
  deliverAt: Time.optional(),
  transactionId: z.string().optional(),
});
export const SendBatchResultSchema = z.object({
  results: z.array(
    z.union([SendResultSchema.extend({ index: z.number().int() }), z.object({ index: z.number().int(), error: ProblemSchema })]),
  ),
});

export const DeliveredSchema = z.object({
  messageId: z.string(),
  receiptHandle: z.string(),
  topic: z.string(),
  body: z.string(),
  encoding: z.enum(['utf8', 'base64']),
  tag: z.string().nullable(),
  keys: z.array(z.string()),
  properties: z.record(z.string(), z.string()),
  shardKey: z.string().nullable(),
  sequence: Sequence.nullable(),
  sentAt: Time,
  deliverableAt: Time,
  deliveryCount: z.number().int(),
});
const CommitEntryResultSchema = z.union([
  z.object({ receiptHandle: z.string(), status: z.enum(['committed', 'pending']) }),
  z.object({ receiptHandle: z.string(), error: ProblemSchema }),
]);
export const CommitResultSchema = z.object({ results: z.array(CommitEntryResultSchema) });
export const ReceiveResultSchema = z.object({
  messages: z.array(DeliveredSchema),
  commitResults: z.array(CommitEntryResultSchema).optional().describe('when the request carried `commit`: one result per handle, in order'),
  doorbell: z
    .object({ queueUrl: z.string() })
    .optional()
    .describe('a `park: true` receive that found nothing (AWS): the group\'s SQS doorbell; receive again when it rings'),
});
export const MessageSchema = z.object({
  messageId: z.string(),
  topic: z.string(),
  state: z.enum(Object.values(MessageState)),
  body: z.string(),
  encoding: z.enum(['utf8', 'base64']),
  tag: z.string().nullable(),
  keys: z.array(z.string()),
  properties: z.record(z.string(), z.string()),
  shardKey: z.string().nullable(),
  sequence: Sequence.nullable(),
  sentAt: Time,
  deliverableAt: Time,
  deliverAt: Time.optional().describe('scheduled messages: when they become deliverable'),
  expiresAt: Time,
});
export const MessageDetailSchema = MessageSchema.extend({
  groups: z.array(
    z.object({
      group: z.string(),
      state: z.enum(Object.values(GroupDeliveryState)),
      deliveryCount: z.number().int().nullable(),
      committedAt: Time.nullable(),
      deadLetter: z
        .object({ topic: z.string(), messageId: z.string() })
        .nullable()
        .describe('the copy this group dead-lettered the message to (found by key like any message)'),
    }),
  ),
});
export const MessageListSchema = z.object({ messages: z.array(MessageSchema), nextToken: z.string().nullable() });
export const ProducerSchema = z.object({
  name: z.string(),
  checkerUrl: z.string(),
  checkIntervalSeconds: z.number().int(),
  maxChecks: z.number().int(),
  onMaxChecks: z.enum(['rollback', 'commit', 'keep']),
  createdAt: Time,
  updatedAt: Time,
  secretRotatedAt: Time,
  signingSecret: z.string().optional().describe('Standard Webhooks secret (whsec_…): shown on create and on rotate only'),
});
/** Producer groups by name; a listing never carries a signing secret. */
export const ProducerListSchema = z.object({ producers: z.array(ProducerSchema), nextToken: z.string().nullable() });
export const TransactionResolutionSchema = z.object({
  state: z.enum(['committed', 'rolled-back']),
  messageId: z.string().optional(),
  sequence: Sequence.optional(),
});
export const TransactionSchema = z.object({
  transactionId: z.string(),
  state: z.enum(Object.values(TransactionState)),
  producerGroup: z.string().nullable(),
  topic: z.string(),
  messageId: z.string(),
  sequence: Sequence.nullable(),
  sentAt: Time,
  checkAfterSeconds: z.number().int().nullable(),
  nextCheckAt: Time.nullable(),
  checkCount: z.number().int(),
  resolvedBy: z.enum(Object.values(ResolvedBy)).nullable(),
  resolvedAt: Time.nullable(),
  checks: z.array(
    z.object({
      checkCount: z.number().int(),
      at: Time,
      status: z.enum(['commit', 'rollback', 'unknown']),
      httpStatus: z.number().int().nullable(),
      error: z.string().nullable(),
      latencyMs: z.number().int(),
    }),
  ),
});
export const HealthSchema = z.object({ status: z.literal('ok') });
/** GET /v1/openapi.json: this document (OpenAPI 3.1). */
export const OpenApiSchema = z.looseObject({
  openapi: z.literal('3.1.0'),
  info: z.looseObject({ title: z.string(), version: z.string() }),
  servers: z.array(z.looseObject({ url: z.string() })),
  paths: z.record(z.string(), z.record(z.string(), z.unknown())),
  components: z.record(z.string(), z.unknown()),
});
