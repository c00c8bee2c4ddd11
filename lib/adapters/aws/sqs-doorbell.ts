/**
 * Pull groups' doorbells on AWS: one SQS queue per group (created by the
 * receive that parks the group's first consumer), one SendMessage per group
 * per ring — SQS batches only within one queue, and each group has its own.
 */
import { SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { Doorbell } from '../../ports/doorbell.js';

/** SQS's answer for a queue that does not exist (JSON protocol name, and the Query protocol's code). */
const isMissingQueue = (error: unknown): boolean =>
  error instanceof Error && (error.name === 'QueueDoesNotExist' || error.name === 'AWS.SimpleQueueService.NonExistentQueue');

export class SqsDoorbell implements Doorbell {
  constructor(
    private readonly client: Pick<SQSClient, 'send'>,
    /** The group's doorbell queue URL, undefined when it has none (nothing to ring). */
    private readonly queueUrlOf: (group: string) => Promise<string | undefined>,
    private readonly clock: { now(): number },
  ) {}

  async ring(groups: readonly string[]): Promise<readonly string[]> {
    const failed: string[] = [];
    await Promise.all(
      groups.map(async (group) => {
        try {
          const queueUrl = await this.queueUrlOf(group);
          if (!queueUrl) return;
          // The body is only a hint for logs: a consumer receives whatever the ring.
          await this.client.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: JSON.stringify({ group, at: this.clock.now() }) }));
        } catch (error) {
          // A queue that is gone (its group deleted meanwhile, or the queue deleted by hand) has nobody
          // to wake: retrying the stream's batch would only hold back the shard's later records.
          if (isMissingQueue(error)) return;
          failed.push(group);
        }
      }),
    );
    return failed;
  }
}
