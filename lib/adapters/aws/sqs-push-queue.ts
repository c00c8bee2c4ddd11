/**
 * The push queue on AWS: push jobs as SQS messages (SendMessageBatch, 10 a
 * call), a back-off as DelaySeconds (rounded up: a retry never comes early).
 */
import { SendMessageBatchCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { PUSH_QUEUE_MAX_DELAY_MS, type PushJob, type PushQueue } from '../../ports/push-queue.js';

export class SqsPushQueue implements PushQueue {
  constructor(
    private readonly client: SQSClient,
    private readonly queueUrl: string,
  ) {}

  async send(jobs: readonly PushJob[], delayMs = 0): Promise<void> {
    const delaySeconds = Math.ceil(Math.min(Math.max(0, delayMs), PUSH_QUEUE_MAX_DELAY_MS) / 1000);
    for (let i = 0; i < jobs.length; i += 10) {
      const batch = jobs.slice(i, i + 10);
      const result = await this.client.send(
        new SendMessageBatchCommand({
          QueueUrl: this.queueUrl,
          Entries: batch.map((job, j) => ({ Id: String(j), MessageBody: JSON.stringify(job), ...(delaySeconds > 0 ? { DelaySeconds: delaySeconds } : {}) })),
        }),
      );
      // A job SQS refused would leave its group unpushed until the next message: the caller retries.
      if ((result.Failed ?? []).length > 0) throw new Error(`SQS refused ${result.Failed?.length} push job(s)`);
    }
  }
}
