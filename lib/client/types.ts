/**
 * Request and response types of the v1 API, derived from the server's own zod
 * schemas (`functions/api/schemas.ts`) so that they cannot drift from what the
 * server validates and the OpenAPI document describes. The imports are
 * type-only: the client loads no zod schema at run time.
 *
 * Request types use `z.input` (what a caller may send: defaults optional),
 * response types `z.output` (what the server answers).
 */
import type { z } from 'zod';
import type * as S from '../../functions/api/schemas.js';

/** `type: 'standard' | 'fifo'`, retention, maximum delay, time-order group. */
export type PutTopicInput = z.input<typeof S.PutTopicBody>;
export type Topic = z.output<typeof S.TopicSchema>;
export type TopicDetail = z.output<typeof S.TopicDetailSchema>;
export type TopicList = z.output<typeof S.TopicListSchema>;

export type PutGroupInput = z.input<typeof S.PutGroupBody>;
export type Subscription = z.input<typeof S.Subscription>;
export type DeliveryMode = NonNullable<PutGroupInput['deliveryMode']>;
export type Group = z.output<typeof S.GroupSchema>;
export type GroupDetail = z.output<typeof S.GroupDetailSchema>;
export type GroupList = z.output<typeof S.GroupListSchema>;

/** A send as the API takes it (SPEC §3.2). */
export type SendBody = z.input<typeof S.SendBody>;
/**
 * A send as the client takes it: `body` may also be bytes (sent as base64).
 * A missing `dedupId` is filled in with a fresh UUID so that retries are idempotent.
 */
export type SendInput = Omit<SendBody, 'body' | 'encoding'> & {
  body: string | Uint8Array;
  encoding?: SendBody['encoding'];
};
export type SendResult = z.output<typeof S.SendResultSchema>;
export type SendBatchResult = z.output<typeof S.SendBatchResultSchema>;
export type SendBatchEntryResult = SendBatchResult['results'][number];

export type ReceiveInput = Omit<z.input<typeof S.ReceiveBody>, 'commit'>;
/** A delivered message with its lease (`receiptHandle`). */
export type Delivered = z.output<typeof S.DeliveredSchema>;
export type ReceiveResult = z.output<typeof S.ReceiveResultSchema>;

/** A message published atomically with a commit (consume-transform-produce). */
export type PublishEntry = z.input<typeof S.PublishEntry>;
export type CommitEntry = z.input<typeof S.CommitBody>['entries'][number];
export type CommitResult = z.output<typeof S.CommitResultSchema>;
export type CommitEntryResult = CommitResult['results'][number];

export type Message = z.output<typeof S.MessageSchema>;
export type MessageDetail = z.output<typeof S.MessageDetailSchema>;
export type MessageList = z.output<typeof S.MessageListSchema>;

/** RFC 9457 problem details, as every error response carries them. */
export type Problem = z.output<typeof S.ProblemSchema>;

export interface PageOptions {
  limit?: number;
  nextToken?: string;
}

// ── Transactions and producer groups (SPEC §3.1, §3.6, §4) ─────────────

export type PutProducerInput = z.input<typeof S.PutProducerBody>;
export type OnMaxChecks = NonNullable<PutProducerInput['onMaxChecks']>;
/** A producer group; `signingSecret` (Standard Webhooks, `whsec_…`) only in the answers to create and rotate-secret. */
export type Producer = z.output<typeof S.ProducerSchema>;

export type TransactionState = 'prepared' | 'committed' | 'rolled-back';
/** The answer to a commit or rollback (`messageId`/`sequence` once committed). */
export type TransactionResolution = z.output<typeof S.TransactionResolutionSchema>;
/** A transaction's state and the check-backs Sluice made. */
export type Transaction = z.output<typeof S.TransactionSchema>;
/** One check-back call Sluice made to the producer group's checker. */
export type TransactionCheckRecord = Transaction['checks'][number];

/** What a checker answers for a transaction it was asked about. */
export type CheckStatus = 'commit' | 'rollback' | 'unknown';

/** The `data` of a `transaction.check` webhook (SPEC §4). */
export interface TransactionCheck {
  transactionId: string;
  producerGroup: string;
  topic: string;
  messageId: string;
  checkCount: number;
  sentAt: string;
  message: {
    body: string;
    encoding: 'utf8' | 'base64';
    tag: string | null;
    keys: string[];
    properties: Record<string, string>;
    shardKey: string | null;
  };
}
