/**
 * The dispatcher's infrastructure: the table's stream, the event source
 * mapping with the shared filters and error handling, the on-failure queue,
 * least-privilege grants and the two alarms.
 */
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { AttributeType, Table } from 'aws-cdk-lib/aws-dynamodb';
import { FilterCriteria, FilterRule } from 'aws-cdk-lib/aws-lambda';
import { beforeAll, describe, expect, it } from 'vitest';
import { SluiceService } from '../../cdk/index.js';
import { DISPATCHER_ITERATOR_AGE_ALARM_MS } from '../../cdk/dispatcher.js';
import { DISPATCH_FILTERS, DISPATCH_SOURCE } from '../../lib/adapters/dynamodb/dispatch-source.js';
import { tableDefinition } from '../../lib/adapters/dynamodb/table.js';
import { grantsOf, logicalIdOf, resourcesOf, sluiceApp } from './synth.js';

const alarmTopicArn = 'arn:aws:sns:eu-west-1:123456789012:sluice-alarms';
let built: ReturnType<typeof sluiceApp>;
let stateless: Template;
let stateful: Template;
let functionId: string;
let queueId: string;

beforeAll(() => {
  built = sluiceApp({ namePrefix: 'sluice-test', alarmTopicArn });
  stateless = Template.fromStack(built.stateless);
  stateful = Template.fromStack(built.stateful);
  const { dispatcher } = built.stateless.service;
  functionId = logicalIdOf(built.stateless, dispatcher.function);
  queueId = logicalIdOf(built.stateless, dispatcher.deadLetterQueue);
});

const tableStreamOutput = () => expect.objectContaining({ 'Fn::GetStackOutput': expect.objectContaining({ OutputName: expect.stringMatching(/StreamArn/) }) });

describe('the table stream', () => {
  it('is enabled with new images, as tableDefinition() says', () => {
    expect(tableDefinition('x').StreamSpecification).toEqual({ StreamEnabled: true, StreamViewType: 'NEW_IMAGE' });
    const [table] = Object.values(resourcesOf(stateful, 'AWS::DynamoDB::Table'));
    expect(table?.Properties?.StreamSpecification).toEqual({ StreamViewType: 'NEW_IMAGE' });
  });
});

describe('the dispatcher event source mapping', () => {
  const mapping = () => {
    const found = Object.values(resourcesOf(stateless, 'AWS::Lambda::EventSourceMapping')).filter(
      (m) => JSON.stringify(m.Properties?.FunctionName) === JSON.stringify({ Ref: functionId }),
    );
    expect(found).toHaveLength(1);
    return found[0]?.Properties ?? {};
  };

  it("reads the table's stream with the shared batching and error handling", () => {
    expect(mapping()).toMatchObject({
      EventSourceArn: tableStreamOutput(),
      StartingPosition: DISPATCH_SOURCE.startingPosition,
      BatchSize: DISPATCH_SOURCE.batchSize,
      MaximumBatchingWindowInSeconds: DISPATCH_SOURCE.maxBatchingWindowSeconds,
      BisectBatchOnFunctionError: true,
      MaximumRetryAttempts: DISPATCH_SOURCE.retryAttempts,
      MaximumRecordAgeInSeconds: DISPATCH_SOURCE.maxRecordAgeSeconds,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      DestinationConfig: { OnFailure: { Destination: { 'Fn::GetAtt': [queueId, 'Arn'] } } },
    });
  });

  it('filters with exactly the shared patterns, spelled as the FilterRule helpers spell them', () => {
    const patterns = (mapping().FilterCriteria as { Filters: Array<{ Pattern: string }> }).Filters.map((f) => JSON.parse(f.Pattern) as unknown);
    expect(patterns).toEqual(DISPATCH_FILTERS);
    const withHelpers = (flag: string) =>
      JSON.parse(
        (
          FilterCriteria.filter({
            eventName: FilterRule.isEqual('INSERT'),
            dynamodb: {
              Keys: { pk: { S: FilterRule.beginsWith('S#') }, sk: { S: FilterRule.notEquals('#') } },
              NewImage: { [flag]: { N: FilterRule.exists() } },
            },
          }) as { pattern: string }
        ).pattern,
      ) as unknown;
    expect(patterns).toEqual([withHelpers('nf'), withHelpers('w')]);
  });
});

describe('the dispatcher function', () => {
  it('runs functions/dispatch/dispatcher.ts on Node.js 22, arm64', () => {
    const fn = stateless.toJSON().Resources[functionId].Properties;
    expect(fn).toMatchObject({ Runtime: 'nodejs22.x', Architectures: ['arm64'], Handler: 'index.handler', MemorySize: 256, Timeout: 30 });
    expect(built.stateless.service.dispatcher.function.handlerModule).toBe('dispatch/dispatcher');
  });

  it('may read the stream, update topic activity items, read topic and group items and the group collection, send push jobs, ring doorbells and report failed batches — nothing else', () => {
    const grants = grantsOf(stateless, functionId).filter((g) => !/^(logs|xray):/.test(g.action));
    const byAction = Object.fromEntries(grants.map((g) => [g.action, g]));
    expect(Object.keys(byAction).sort()).toEqual(
      [
        'dynamodb:BatchGetItem',
        'dynamodb:DescribeStream',
        'dynamodb:GetItem',
        'dynamodb:GetRecords',
        'dynamodb:GetShardIterator',
        'dynamodb:ListStreams',
        'dynamodb:Query',
        'dynamodb:UpdateItem',
        'sqs:GetQueueAttributes',
        'sqs:GetQueueUrl',
        'sqs:SendMessage',
      ].sort(),
    );
    expect(grants).toHaveLength(13);
    // The push route: which push groups subscribe (topic items; the GROUP collection only for topics
    // saved before they named them), and their jobs.
    expect(grants.find((g) => g.action === 'dynamodb:Query')?.condition).toEqual({ 'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': ['GROUP'] } });
    expect(grants.find((g) => g.action === 'dynamodb:BatchGetItem')?.condition).toEqual({ 'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': ['TOPIC'] } });
    // Doorbells: topic items (`wb`) and group items (`bq`, the queue URL), and the doorbell queues' prefix.
    expect(grants.filter((g) => g.action === 'dynamodb:GetItem').map((g) => g.condition)).toEqual([
      { 'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': ['TOPIC'] } },
      { 'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': ['GROUP'] } },
    ]);
    expect(JSON.stringify(grants.filter((g) => g.action === 'sqs:SendMessage').flatMap((g) => [g.resource].flat()))).toContain(':sluice-test-bell-*');
    const pushQueueId = logicalIdOf(built.stateless, built.stateless.service.pushQueue.queue);
    expect(grants.filter((g) => g.action === 'sqs:SendMessage').flatMap((g) => [g.resource].flat())).toContainEqual({ 'Fn::GetAtt': [pushQueueId, 'Arn'] });
    for (const action of ['dynamodb:DescribeStream', 'dynamodb:GetRecords', 'dynamodb:GetShardIterator']) expect(byAction[action]?.resource).toEqual(tableStreamOutput());
    const tableArnOutput = /GetAttMessagesTable[0-9A-F]+Arn/;
    expect(JSON.stringify(byAction['dynamodb:ListStreams']?.resource)).toMatch(new RegExp(`${tableArnOutput.source}.*/stream/\\*`));
    expect(byAction['dynamodb:UpdateItem']).toMatchObject({
      resource: expect.objectContaining({ 'Fn::GetStackOutput': expect.objectContaining({ OutputName: expect.stringMatching(tableArnOutput) }) }),
      condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['A#*'] } },
    });
    for (const action of ['sqs:GetQueueAttributes', 'sqs:GetQueueUrl']) expect(byAction[action]?.resource).toEqual({ 'Fn::GetAtt': [queueId, 'Arn'] });
    expect(grants.filter((g) => g.action === 'sqs:SendMessage').flatMap((g) => [g.resource].flat())).toContainEqual({ 'Fn::GetAtt': [queueId, 'Arn'] });
  });

  it('may use the table key when the table has a customer managed one', () => {
    const { stateless: stack } = sluiceApp({ customerManagedKey: true });
    const template = Template.fromStack(stack);
    const actions = grantsOf(template, logicalIdOf(stack, stack.service.dispatcher.function)).map((g) => g.action);
    expect(actions).toEqual(expect.arrayContaining(['kms:Decrypt', 'kms:Encrypt', 'kms:GenerateDataKey']));
  });

  it('needs a table with a stream', () => {
    const stack = new Stack(new App({ context: { 'aws:cdk:bundling-stacks': [] } }), 'NoStream');
    const table = new Table(stack, 'Plain', { partitionKey: { name: 'pk', type: AttributeType.STRING } });
    expect(() => new SluiceService(stack, 'Queue', { table })).toThrow(/no stream/);
  });
});

describe('the on-failure queue and the alarms', () => {
  it('keeps failed batches encrypted for 14 days and refuses plain HTTP', () => {
    const resources = stateless.toJSON().Resources;
    expect(resources[queueId].Properties).toMatchObject({ SqsManagedSseEnabled: true, MessageRetentionPeriod: 14 * 86_400, QueueName: 'sluice-test-dispatch-failures' });
    const policy = Object.values(resourcesOf(stateless, 'AWS::SQS::QueuePolicy')).find((p) => JSON.stringify(p.Properties?.Queues).includes(queueId));
    expect(JSON.stringify(policy?.Properties?.PolicyDocument)).toContain('"aws:SecureTransport":"false"');
  });

  it('alarm on the iterator age of the stream and on given-up batches', () => {
    const alarms = Object.values(resourcesOf(stateless, 'AWS::CloudWatch::Alarm')).map((a) => a.Properties ?? {});
    const iterator = alarms.find((a) => a.MetricName === 'IteratorAge');
    expect(iterator).toMatchObject({
      Namespace: 'AWS/Lambda',
      Statistic: 'Maximum',
      Threshold: DISPATCHER_ITERATOR_AGE_ALARM_MS,
      Dimensions: [{ Name: 'FunctionName', Value: { Ref: functionId } }],
      AlarmActions: [alarmTopicArn],
    });
    const depth = alarms.find(
      (a) => a.MetricName === 'ApproximateNumberOfMessagesVisible' && JSON.stringify(a.Dimensions).includes(queueId),
    );
    expect(depth).toMatchObject({ Namespace: 'AWS/SQS', Statistic: 'Maximum', Threshold: 1, AlarmActions: [alarmTopicArn] });
  });
});
