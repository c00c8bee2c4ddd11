/**
 * Pull groups' doorbell queues on AWS (docs/design.md, "Waking SDK consumers"):
 * created by the receive that parks a group's first consumer — groups are
 * created at run time, so the construct cannot create them — and deleted with
 * the group. A ring is worth something for a minute, so messages are kept
 * 60 s; consumers long-poll 20 s; SSE-SQS.
 */
import { CreateQueueCommand, DeleteQueueCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { DoorbellQueues } from '../../ports/doorbell.js';
import { doorbellQueueName } from './names.js';

/** CreateQueue is idempotent only for equal attributes: these never change. */
export const DOORBELL_QUEUE_ATTRIBUTES = {
  MessageRetentionPeriod: '60',
  ReceiveMessageWaitTimeSeconds: '20',
  SqsManagedSseEnabled: 'true',
} as const;

export class SqsDoorbellQueues implements DoorbellQueues {
  constructor(
    private readonly client: Pick<SQSClient, 'send'>,
    /** The deployment's name prefix (the IAM grants cover `<prefix>-bell-*`). */
    private readonly prefix: string,
  ) {}

  async create(group: string, createdAt: number): Promise<string> {
    const { QueueUrl } = await this.client.send(
      new CreateQueueCommand({
        QueueName: doorbellQueueName(this.prefix, group, createdAt),
        Attributes: { ...DOORBELL_QUEUE_ATTRIBUTES },
        tags: { 'sluice:group': group.slice(0, 256) },
      }),
    );
    if (!QueueUrl) throw new Error('CreateQueue answered no QueueUrl');
    return QueueUrl;
  }

  async remove(queueUrl: string): Promise<void> {
    try {
      await this.client.send(new DeleteQueueCommand({ QueueUrl: queueUrl }));
    } catch (error) {
      const name = (error as { name?: string }).name;
      if (name === 'QueueDoesNotExist' || name === 'AWS.SimpleQueueService.NonExistentQueue') return;
      throw error;
    }
  }
}
