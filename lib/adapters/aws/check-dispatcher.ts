/** Fans due transaction checks out to the check worker through SQS (bounded by the worker's concurrency). */
import { SendMessageBatchCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { CheckDispatcher } from '../../ports/webhooks.js';

export class SqsCheckDispatcher implements CheckDispatcher {
  constructor(
    private readonly client: SQSClient,
    private readonly queueUrl: string,
  ) {}

  async dispatch(transactionIds: string[]): Promise<void> {
    for (let i = 0; i < transactionIds.length; i += 10) {
      const batch = transactionIds.slice(i, i + 10);
      const result = await this.client.send(
        new SendMessageBatchCommand({
          QueueUrl: this.queueUrl,
          Entries: batch.map((id, j) => ({ Id: String(j), MessageBody: JSON.stringify({ transactionId: id }) })),
        }),
      );
      // Entries that failed are due again at the next sweep; nothing is lost by leaving them.
      if ((result.Failed ?? []).length === batch.length) throw new Error('SQS refused every check of the batch');
    }
  }
}
