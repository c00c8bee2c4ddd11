/**
 * The Sluice client SDK: `SluiceClient` (the HTTP API), `Consumer` (a poll
 * loop with concurrency, shard order, lease extension and graceful stop),
 * `TransactionProducer` and `createCheckerHandler` (transactional messages),
 * `createPushHandler` (the endpoint of a push group).
 *
 * What this module exports is what the published `@sluice/client` exports
 * (docs/packaging.md); a dependency it brings must be added to
 * packages/client/package.json (the package build refuses undeclared imports).
 */
export { SluiceClient, decodeBody, type AuthMode, type RequestOptions, type SendOptions, type SluiceClientOptions } from './client.js';
export { SluiceApiError, SluiceClientError, SluiceConfigurationError, SluiceConnectionError } from './errors.js';
export { DEFAULT_RETRY, backoffDelay, parseRetryAfter, retryDelay, type RetryOptions } from './retry.js';
export { isAwsEndpoint, regionFromEndpoint, signingServiceOf } from './endpoint.js';
export type { AwsCredentials, AwsCredentialsProvider } from './sigv4.js';
export {
  Consumer,
  DOORBELL_RECEIVE_EVERY_MS,
  type ConsumerDoorbellOptions,
  type ConsumerErrorKind,
  type ConsumerOptions,
  type HandlerContext,
  type HandlerResult,
  type MessageHandler,
} from './consumer.js';
export { SqsDoorbellError } from './sqs-doorbell.js';
export {
  TransactionProducer,
  type HalfMessage,
  type LocalTransactionResult,
  type TransactionOutcome,
  type TransactionProducerOptions,
} from './transactions.js';
export {
  CheckerVerificationError,
  createCheckerHandler,
  type CheckerHandler,
  type CheckerLambdaEvent,
  type CheckerOptions,
  type CheckerRequest,
  type CheckerResponse,
} from './checker.js';
export {
  createPushHandler,
  type PushContext,
  type PushHandler,
  type PushHandlerOptions,
  type PushHandlerResult,
  type PushMessageHandler,
  type PushedMessage,
} from './push-handler.js';
export {
  DEFAULT_TOLERANCE_SECONDS,
  WebhookVerificationError,
  type WebhookEndpoint,
  type WebhookLambdaEvent,
  type WebhookRequest,
  type WebhookResponse,
} from './webhook-endpoint.js';
export type * from './types.js';
