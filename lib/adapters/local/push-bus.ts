/**
 * The local stand-in for the push queue: hands jobs to the push worker's
 * handler in-process, with the SQS event shape (one record per job, as the
 * event source mapping would batch them), after the delay SQS would apply.
 * Jobs waiting in timers are lost on stop or crash; the next start enqueues,
 * per push group, a job now, one after the longest lease and one after the
 * longest retry back-off (local/runtime.ts), so nothing waits for them.
 */
import { randomUUID } from 'node:crypto';
import { PUSH_QUEUE_MAX_DELAY_MS, type PushJob, type PushQueue } from '../../ports/push-queue.js';
import type { SqsLikeEvent } from './timer-bus.js';

export class LocalPushBus implements PushQueue {
  private target: ((event: SqsLikeEvent) => Promise<unknown>) | undefined;
  private readonly timers = new Set<NodeJS.Timeout>();

  setTarget(target: ((event: SqsLikeEvent) => Promise<unknown>) | undefined): void {
    this.target = target;
  }

  async send(jobs: readonly PushJob[], delayMs = 0): Promise<void> {
    if (jobs.length === 0) return;
    const event: SqsLikeEvent = {
      Records: jobs.map((job) => ({ messageId: randomUUID(), receiptHandle: randomUUID(), body: JSON.stringify(job), eventSource: 'aws:sqs', attributes: {} })),
    };
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      this.target?.(event)?.catch((error: unknown) => console.error('local push worker failed', error));
    }, Math.min(Math.max(0, delayMs), PUSH_QUEUE_MAX_DELAY_MS));
    timer.unref();
    this.timers.add(timer);
  }

  /** Cancels waiting jobs (runtime stop). */
  clear(): void {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
  }
}
