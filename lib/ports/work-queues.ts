/**
 * The settings of Sluice's SQS work queues that the local stand-ins (lib/adapters/local/sqs-like-queue.ts)
 * must share with the deployed queues (cdk/sluice-service.ts, cdk/background.ts): one source for both.
 * The push queue's own settings are in push-queue.ts.
 */

/** Receives before a work queue's message moves to its dead-letter queue (the redrive policy's maxReceiveCount). */
export const WORK_QUEUE_MAX_RECEIVES = 5;

/** The timer-release function's Lambda timeout (it consumes the delay queue). */
export const RELEASE_WORKER_TIMEOUT_MS = 60_000;
/** The delay queue's visibility timeout: six times its consumer's timeout, as AWS recommends, so retries cannot overlap. */
export const DELAY_QUEUE_VISIBILITY_MS = 6 * RELEASE_WORKER_TIMEOUT_MS;

/** The check-back worker's Lambda timeout (it consumes the check queue). */
export const CHECK_WORKER_TIMEOUT_MS = 30_000;
/** The check queue's visibility timeout: six times its consumer's timeout. */
export const CHECK_QUEUE_VISIBILITY_MS = 6 * CHECK_WORKER_TIMEOUT_MS;

/** Records per event of the SQS event sources (cdk: `batchSize: 10`). */
export const WORK_QUEUE_BATCH_SIZE = 10;
