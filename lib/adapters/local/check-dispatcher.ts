/**
 * The local stand-in for the check-back fan-out queue: runs the worker
 * handler in-process, with the same SQS event shape, at most `concurrency`
 * checks at a time; a delayed dispatch (an armed check-back) waits in an
 * in-process timer, as SQS DelaySeconds does.
 */
import { randomUUID } from 'node:crypto';
import type { CheckDispatcher } from '../../ports/webhooks.js';
import type { SqsLikeEvent } from './timer-bus.js';

export class LocalCheckDispatcher implements CheckDispatcher {
  private target: ((event: SqsLikeEvent) => Promise<unknown>) | undefined;
  private readonly timers = new Set<NodeJS.Timeout>();

  constructor(private readonly concurrency = 8) {}

  setTarget(target: ((event: SqsLikeEvent) => Promise<unknown>) | undefined): void {
    this.target = target;
  }

  async dispatch(transactionIds: string[], delayMs = 0): Promise<void> {
    if (delayMs <= 0) return this.run(transactionIds);
    // Armed check-backs are at most 15 minutes ahead (the minute timer arms later ones).
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      this.run(transactionIds).catch((error: unknown) => console.error('local check-back failed', error));
    }, delayMs);
    timer.unref();
    this.timers.add(timer);
  }

  /** Cancels the armed check-backs (runtime stop); the next start re-arms them from DynamoDB. */
  clear(): void {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
  }

  private async run(transactionIds: string[]): Promise<void> {
    const target = this.target;
    if (!target) return;
    const queue = [...transactionIds];
    const worker = async () => {
      for (let id = queue.shift(); id !== undefined; id = queue.shift()) {
        await target({
          Records: [
            { messageId: randomUUID(), receiptHandle: randomUUID(), body: JSON.stringify({ transactionId: id }), eventSource: 'aws:sqs', attributes: {} },
          ],
        });
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.concurrency, queue.length) }, worker));
  }
}
