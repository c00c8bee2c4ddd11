/** SQS with DelaySeconds: the last stretch of a scheduled delivery, to the second. */
import { SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { DelayQueue, ReleaseWake } from '../../ports/timers.js';
import { translateTimerError } from './errors.js';

export class SqsDelayQueue implements DelayQueue {
  constructor(
    private readonly client: SQSClient,
    private readonly queueUrl: string,
  ) {}

  async send(payload: ReleaseWake, delayMs: number): Promise<void> {
    try {
      await this.client.send(
        new SendMessageCommand({
          QueueUrl: this.queueUrl,
          MessageBody: JSON.stringify(payload),
          DelaySeconds: Math.min(900, Math.max(0, Math.ceil(delayMs / 1000))),
        }),
      );
    } catch (error) {
      // Throttling, 5xx, timeouts: retryable (429/503); access denied, a missing queue: a logged, typed 500.
      throw translateTimerError(error, 'The SQS delay queue');
    }
  }
}
