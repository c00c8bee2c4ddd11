/**
 * The local stand-in for the check-back fan-out queue: the worker handler runs in-process on a
 * `LocalSqsQueue` with the check queue's settings — SQS events of at most 10 records, at most
 * `concurrency` runs at a time (the event source's `maxConcurrency`), a delayed dispatch (an armed
 * check-back) waiting as SQS DelaySeconds does, failed records back after the visibility timeout,
 * dead letters after 5 receives. A dispatch without delay resolves once its checks ran (the sweep
 * and tests wait for them).
 */
import type { CheckDispatcher } from '../../ports/webhooks.js';
import { CHECK_QUEUE_VISIBILITY_MS, WORK_QUEUE_BATCH_SIZE, WORK_QUEUE_MAX_RECEIVES } from '../../ports/work-queues.js';
import { LocalSqsQueue, type SqsLikeTarget } from './sqs-like-queue.js';

export class LocalCheckDispatcher implements CheckDispatcher {
  readonly queue: LocalSqsQueue;

  /** `concurrency`: the deployed check worker's default `checkConcurrency` (cdk). */
  constructor(concurrency = 10, visibilityMs = CHECK_QUEUE_VISIBILITY_MS) {
    this.queue = new LocalSqsQueue({ name: 'checks', visibilityMs, maxReceiveCount: WORK_QUEUE_MAX_RECEIVES, batchSize: WORK_QUEUE_BATCH_SIZE, maxConcurrency: concurrency });
  }

  setTarget(target: SqsLikeTarget | undefined): void {
    this.queue.setTarget(target);
  }

  async dispatch(transactionIds: string[], delayMs = 0): Promise<void> {
    // Armed check-backs are at most 15 minutes ahead (the minute timer arms later ones).
    await this.queue.send(
      transactionIds.map((transactionId) => JSON.stringify({ transactionId })),
      delayMs,
      true,
    );
  }

  /** Cancels the armed check-backs and redeliveries (runtime stop); the next start re-arms them from DynamoDB. */
  clear(): void {
    this.queue.clear();
  }
}
