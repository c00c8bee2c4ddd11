/**
 * Fans check-backs out to the check worker through SQS (bounded by the
 * worker's concurrency): due ones from the check sweep at once, armed ones
 * (a half message's next check, up to 900 s ahead) with DelaySeconds, so a
 * check-back runs within a second of its time.
 */
import { SendMessageBatchCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { CheckDispatcher } from '../../ports/webhooks.js';

/** SQS's limit on DelaySeconds. */
const MAX_DELAY_SECONDS = 900;

export class SqsCheckDispatcher implements CheckDispatcher {
  constructor(
    private readonly client: SQSClient,
    private readonly queueUrl: string,
  ) {}

  async dispatch(transactionIds: string[], delayMs = 0): Promise<void> {
    // Rounded up: a check never arrives before its time (the worker skips early ones).
    const delaySeconds = Math.min(MAX_DELAY_SECONDS, Math.max(0, Math.ceil(delayMs / 1000)));
    for (let i = 0; i < transactionIds.length; i += 10) {
      const batch = transactionIds.slice(i, i + 10);
      const result = await this.client.send(
        new SendMessageBatchCommand({
          QueueUrl: this.queueUrl,
          Entries: batch.map((id, j) => ({
            Id: String(j),
            MessageBody: JSON.stringify({ transactionId: id }),
            ...(delaySeconds > 0 ? { DelaySeconds: delaySeconds } : {}),
          })),
        }),
      );
      // Entries that failed are due again at the next sweep; nothing is lost by leaving them.
      if ((result.Failed ?? []).length === batch.length) throw new Error('SQS refused every check of the batch');
    }
  }
}
