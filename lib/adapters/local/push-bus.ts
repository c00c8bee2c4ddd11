/**
 * The local stand-in for the push queue: hands jobs to the push worker's
 * handler in-process, with the SQS event shape (one record per job, as the
 * event source mapping would batch them), after the delay SQS would apply.
 * Like the event source mapping with `ReportBatchItemFailures`, records the
 * handler answers as failed (or all of them, when it throws) come back after
 * the queue's visibility timeout.
 * Jobs waiting in timers are lost on stop or crash; the next start enqueues,
 * per push group, a job now, one after the longest retry back-off and one
 * after the longest lease plus that back-off (local/runtime.ts), so nothing
 * waits for them.
 */
import { randomUUID } from 'node:crypto';
import { PUSH_JOB_VISIBILITY_MS, PUSH_QUEUE_MAX_DELAY_MS, type PushJob, type PushQueue } from '../../ports/push-queue.js';
import type { SqsLikeEvent } from './timer-bus.js';

type Record = SqsLikeEvent['Records'][number];

export class LocalPushBus implements PushQueue {
  private target: ((event: SqsLikeEvent) => Promise<unknown>) | undefined;
  private readonly timers = new Set<NodeJS.Timeout>();

  /** `visibilityMs`: when a failed record comes back (the push queue's visibility timeout on AWS). */
  constructor(private readonly visibilityMs = PUSH_JOB_VISIBILITY_MS) {}

  setTarget(target: ((event: SqsLikeEvent) => Promise<unknown>) | undefined): void {
    this.target = target;
  }

  async send(jobs: readonly PushJob[], delayMs = 0): Promise<void> {
    if (jobs.length === 0) return;
    const records: Record[] = jobs.map((job) => ({ messageId: randomUUID(), receiptHandle: randomUUID(), body: JSON.stringify(job), eventSource: 'aws:sqs', attributes: {} }));
    this.deliver(records, Math.min(Math.max(0, delayMs), PUSH_QUEUE_MAX_DELAY_MS));
  }

  /** Cancels waiting jobs (runtime stop). */
  clear(): void {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
  }

  private deliver(records: Record[], afterMs: number): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      void this.invoke(records);
    }, afterMs);
    timer.unref();
    this.timers.add(timer);
  }

  private async invoke(records: Record[]): Promise<void> {
    const target = this.target;
    if (!target) return;
    let failed: Record[];
    try {
      const response = (await target({ Records: records })) as { batchItemFailures?: Array<{ itemIdentifier?: string }> } | undefined;
      const ids = new Set((response?.batchItemFailures ?? []).map((f) => f.itemIdentifier));
      failed = records.filter((r) => ids.has(r.messageId));
    } catch (error) {
      console.error('local push worker failed', error);
      failed = records;
    }
    if (failed.length > 0) this.deliver(failed, this.visibilityMs);
  }
}
