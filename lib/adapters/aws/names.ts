/**
 * Names the code and the infrastructure must agree on. The CDK grants
 * permissions on them (cdk/sluice-service.ts imports this file), so they are
 * defined once here and cannot drift apart.
 */
import { createHash } from 'node:crypto';

/** One-time schedules of minute timer buckets are named `sluice-m<minute>` (IAM: CreateSchedule on `sluice-m*`). */
export const MINUTE_SCHEDULE_PREFIX = 'sluice-m';
export const minuteScheduleName = (minute: number): string => `${MINUTE_SCHEDULE_PREFIX}${minute}`;

/**
 * The KMS encryption context producer signing secrets are sealed with: this
 * fixed pair (IAM: kms:Encrypt/Decrypt only with it) plus the producer group's
 * name, which binds a sealed secret to its group.
 */
export const SECRET_CONTEXT_PURPOSE = { key: 'purpose', value: 'sluice-producer-signing-secret' } as const;
export const secretContext = (producerGroup: string): Record<string, string> => ({
  [SECRET_CONTEXT_PURPOSE.key]: SECRET_CONTEXT_PURPOSE.value,
  producerGroup,
});

/**
 * The KMS encryption context the deployment's message-id key is sealed with
 * (lib/adapters/dynamodb/message-id-keys.ts; IAM: kms:Encrypt/Decrypt only with it).
 */
export const MESSAGE_ID_KEY_PURPOSE = { key: 'purpose', value: 'sluice-message-ids' } as const;
export const messageIdKeyContext: Record<string, string> = { [MESSAGE_ID_KEY_PURPOSE.key]: MESSAGE_ID_KEY_PURPOSE.value };

/**
 * Per consumer group CloudWatch metrics (the group-metrics function emits them as EMF every
 * minute; `SluiceService.metricBacklog(group)` and friends read them): namespace, the one
 * dimension, and the metric names with their units.
 */
export const GROUP_METRICS = {
  namespace: 'Sluice',
  dimension: 'Group',
  backlog: 'Backlog',
  oldestMessageAge: 'OldestMessageAgeSeconds',
  inFlight: 'InFlight',
  deadLettered: 'DeadLettered',
  /** Push requests that failed (no 2xx answer), emitted by the push worker per drain that had any. */
  pushFailures: 'PushFailures',
} as const;

/**
 * Per topic append contention (services/append-meter.ts), emitted as EMF by the HTTP edge of
 * each container at most once a minute, only for topics that lost a race or answered 429 in it;
 * `SluiceService.metricAppendLostRaces(topic)` and friends read them.
 */
export const TOPIC_METRICS = {
  namespace: 'Sluice',
  dimension: 'Topic',
  /** Appends that landed (a multi-stream append once); FIFO notice and redrive streams are not counted. */
  appends: 'Appends',
  /** Append races lost (a failed segment put): their ratio to `Appends` says a stream is contended. */
  lostRaces: 'AppendLostRaces',
  /** Appends answered 429 Throttled (contended for the whole 2 s budget). */
  throttled: 'AppendsThrottled',
} as const;

/**
 * The KMS encryption context push groups' signing secrets are sealed with
 * (IAM: kms:Encrypt/Decrypt only with this purpose) plus the consumer group's name.
 */
export const PUSH_SECRET_CONTEXT_PURPOSE = { key: 'purpose', value: 'sluice-push-signing-secret' } as const;
export const pushSecretContext = (group: string): Record<string, string> => ({
  [PUSH_SECRET_CONTEXT_PURPOSE.key]: PUSH_SECRET_CONTEXT_PURPOSE.value,
  consumerGroup: group,
});

/**
 * Pull groups' doorbell queues are named `<prefix>-bell-<hash>` (IAM: sqs actions on
 * `<prefix>-bell-*`): SQS names are at most 80 characters of `[A-Za-z0-9_-]`, so the group
 * name is hashed, with its creation stamp so a re-created group never gets a deleted queue's
 * name (SQS refuses it for 60 s). `<prefix>` is the deployment's (at most 40 characters).
 */
export const doorbellQueuePrefix = (prefix: string): string => `${prefix}-bell-`;
export const doorbellQueueName = (prefix: string, group: string, createdAt: number): string =>
  `${doorbellQueuePrefix(prefix)}${createHash('sha256').update(`${group}\n${createdAt}`).digest('hex').slice(0, 32)}`;
