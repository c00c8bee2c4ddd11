/**
 * The local stand-in for the push queue: the push worker's handler runs in-process on a
 * `LocalSqsQueue` with the AWS queue's settings — the SQS event shape (the jobs of one send in
 * events of at most 10 records), the delay SQS would apply, records answered as failed (or all of
 * them, when the run throws) back after the queue's visibility timeout, dead letters after 5 receives.
 * Jobs waiting in it are lost on stop or crash; the next start enqueues, per push group, a job now,
 * one after the longest retry back-off and one after the longest lease plus that back-off
 * (local/runtime.ts), so nothing waits for them.
 */
import { PUSH_JOB_VISIBILITY_MS, PUSH_QUEUE_MAX_DELAY_MS, type PushJob, type PushQueue } from '../../ports/push-queue.js';
import { WORK_QUEUE_BATCH_SIZE, WORK_QUEUE_MAX_RECEIVES } from '../../ports/work-queues.js';
import { LocalSqsQueue, type SqsLikeTarget } from './sqs-like-queue.js';

export class LocalPushBus implements PushQueue {
  readonly queue: LocalSqsQueue;

  /** `visibilityMs`: when a failed record comes back (the push queue's visibility timeout on AWS). */
  constructor(visibilityMs = PUSH_JOB_VISIBILITY_MS) {
    this.queue = new LocalSqsQueue({ name: 'push', visibilityMs, maxReceiveCount: WORK_QUEUE_MAX_RECEIVES, batchSize: WORK_QUEUE_BATCH_SIZE });
  }

  setTarget(target: SqsLikeTarget | undefined): void {
    this.queue.setTarget(target);
  }

  async send(jobs: readonly PushJob[], delayMs = 0): Promise<void> {
    await this.queue.send(
      jobs.map((job) => JSON.stringify(job)),
      Math.min(Math.max(0, delayMs), PUSH_QUEUE_MAX_DELAY_MS),
    );
  }

  /** Cancels waiting jobs and redeliveries (runtime stop). */
  clear(): void {
    this.queue.clear();
  }
}
