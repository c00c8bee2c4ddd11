/**
 * A parking receive never fails for doorbell reasons and never answers a doorbell that will not
 * ring (docs/design.md, "Waking SDK consumers"): when CreateQueue fails (aws-sdk-client-mock: SQS
 * has no local twin) or the park is refused (the topic's `wb` map is full, on DynamoDB Local), it
 * logs a warning and goes on as the plain long poll, answering without a doorbell.
 */
import { CreateQueueCommand, SQSClient } from '@aws-sdk/client-sqs';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { SqsDoorbellQueues } from '../../lib/adapters/aws/sqs-doorbell-queues.js';
import { TOPIC_PK } from '../../lib/adapters/dynamodb/keys.js';
import { DoorbellLimits, DoorbellParkRefusedError } from '../../lib/domain/doorbell-limits.js';
import { InProcessNotifier } from '../../lib/ports/notifier.js';
import { cryptoRandom } from '../../lib/ports/random.js';
import { DOORBELL_PARK_FOR_MS, DoorbellParker } from '../../lib/services/doorbell-parker.js';
import { QueueService } from '../../lib/services/queue-service.js';
import { group, topic } from '../helpers/builders.js';
import { whileAdvancing } from '../helpers/advancing.js';
import { newHarness, send, type Harness } from '../helpers/stores.js';

const sqs = mockClient(SQSClient);
const urlOf = (name: string) => `https://sqs.eu-west-1.amazonaws.com/123456789012/${name}`;
let h: Harness;
let aws: QueueService;
const warnings: Array<{ message: string; details: Record<string, unknown> }> = [];

beforeAll(async () => {
  h = await newHarness();
  const queues = new SqsDoorbellQueues(new SQSClient({ region: 'eu-west-1' }), 'sluice-test');
  const doorbells = { parker: new DoorbellParker(h.stores.catalog, h.clock), queues, log: (message: string, details: Record<string, unknown>) => void warnings.push({ message, details }) };
  aws = new QueueService(h.stores, h.clock, cryptoRandom, new InProcessNotifier(), h.timers, { pollIntervalMs: 20, doorbells });
  await h.admin.putTopic('orders', topic());
  await h.admin.putTopic('full', topic());
  await h.admin.putGroup('workers', group('orders'));
  await h.admin.putGroup('late', group('full'));
});
beforeEach(() => {
  sqs.reset();
  warnings.length = 0;
});
afterAll(() => sqs.restore());

describe('a parking receive whose doorbell fails', () => {
  it('CreateQueue throttled: a warning, the plain long poll to its end, no doorbell, nothing recorded', async () => {
    sqs.on(CreateQueueCommand).rejects(Object.assign(new Error('Rate exceeded'), { name: 'RequestThrottled', $metadata: { httpStatusCode: 403 } }));
    const answer = await whileAdvancing(h.clock, () => aws.receiveOrPark('workers', { maxMessages: 10, waitSeconds: 2, park: true }));
    expect(answer).toEqual({ messages: [] });
    expect(sqs.commandCalls(CreateQueueCommand)).toHaveLength(1);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]?.details.group).toBe('workers');
    expect((await h.stores.catalog.getGroup('workers'))?.doorbellQueueUrl).toBeUndefined();
  });

  it('CreateQueue refused while the name is in its 60 s reuse wait: messages sent are still received', async () => {
    sqs.on(CreateQueueCommand).rejects(Object.assign(new Error('You must wait 60 seconds after deleting a queue before you can create another with the same name.'), { name: 'QueueDeletedRecently', $metadata: { httpStatusCode: 400 } }));
    await h.queue.send('orders', send('one'));
    const answer = await aws.receiveOrPark('workers', { maxMessages: 10, waitSeconds: 0, park: true });
    expect(answer.messages.map((m) => m.body)).toEqual(['one']);
    expect(answer.doorbell).toBeUndefined();
    expect(warnings).toHaveLength(1);
  });

  it('the park refused by a full wb map: a warning, no doorbell, the queue still created', async () => {
    sqs.on(CreateQueueCommand).callsFake((input: { QueueName: string }) => ({ QueueUrl: urlOf(input.QueueName) }));
    const until = h.clock.now() + DOORBELL_PARK_FOR_MS;
    const wb = Object.fromEntries(Array.from({ length: DoorbellLimits.parkedGroupsPerTopicMax }, (_, i) => [`g${i}`, until]));
    await h.doc.send(new UpdateCommand({ TableName: h.table, Key: { pk: TOPIC_PK, sk: 'full' }, UpdateExpression: 'SET wb = :wb, wu = :wu', ExpressionAttributeValues: { ':wb': wb, ':wu': until } }));
    const answer = await whileAdvancing(h.clock, () => aws.receiveOrPark('late', { maxMessages: 10, waitSeconds: 1, park: true }));
    expect(answer).toEqual({ messages: [] });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]?.details.error).toBeInstanceOf(DoorbellParkRefusedError);
    expect(sqs.commandCalls(CreateQueueCommand)).toHaveLength(1);
  });
});
