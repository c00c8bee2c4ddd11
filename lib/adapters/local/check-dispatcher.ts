/**
 * The local stand-in for the check-back fan-out queue: runs the worker
 * handler in-process, with the same SQS event shape, at most `concurrency`
 * checks at a time.
 */
import { randomUUID } from 'node:crypto';
import type { CheckDispatcher } from '../../ports/webhooks.js';
import type { SqsLikeEvent } from './timer-bus.js';

export class LocalCheckDispatcher implements CheckDispatcher {
  private target: ((event: SqsLikeEvent) => Promise<unknown>) | undefined;

  constructor(private readonly concurrency = 8) {}

  setTarget(target: ((event: SqsLikeEvent) => Promise<unknown>) | undefined): void {
    this.target = target;
  }

  async dispatch(transactionIds: string[]): Promise<void> {
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
