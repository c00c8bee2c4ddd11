/**
 * Ringing on AWS (aws-sdk-client-mock: SQS has no local twin): one SendMessage
 * per group with a queue; a queue that no longer exists has nobody to wake and
 * is not a failure (a failure makes the stream retry the whole batch); any
 * other error fails that group's ring.
 */
import { QueueDoesNotExist, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, describe, expect, it } from 'vitest';
import { SqsDoorbell } from '../../lib/adapters/aws/sqs-doorbell.js';

const sqs = mockClient(SQSClient);
afterEach(() => sqs.reset());

const urls: Record<string, string | undefined> = {
  live: 'https://sqs.eu-west-1.amazonaws.com/123456789012/sluice-bell-live',
  gone: 'https://sqs.eu-west-1.amazonaws.com/123456789012/sluice-bell-gone',
  busy: 'https://sqs.eu-west-1.amazonaws.com/123456789012/sluice-bell-busy',
  none: undefined,
};

describe('SqsDoorbell', () => {
  it('rings each group with a queue once; a deleted queue is nobody to wake, other errors fail the group', async () => {
    sqs.on(SendMessageCommand, { QueueUrl: urls.gone }).rejects(new QueueDoesNotExist({ message: 'The specified queue does not exist.', $metadata: {} }));
    sqs.on(SendMessageCommand, { QueueUrl: urls.busy }).rejects(Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException' }));
    sqs.on(SendMessageCommand, { QueueUrl: urls.live }).resolves({ MessageId: 'm-1' });
    const bell = new SqsDoorbell(new SQSClient({ region: 'eu-west-1' }), async (group) => urls[group], { now: () => 1_000 });
    const failed = await bell.ring(['live', 'gone', 'busy', 'none']);
    expect(failed).toEqual(['busy']);
    expect(sqs.commandCalls(SendMessageCommand).map((c) => c.args[0].input.QueueUrl).sort()).toEqual([urls.busy, urls.gone, urls.live].sort());
  });
});
