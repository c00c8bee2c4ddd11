/**
 * The dispatcher on AWS: one function on the table's stream through an event
 * source mapping whose filters, batching and error handling are the ones the
 * local poller applies (lib/adapters/dynamodb/dispatch-source.ts), an SQS
 * on-failure destination, least-privilege grants and alarms on how far it
 * lags (IteratorAge) and on what it gave up (the destination's depth).
 */
import { Duration, Validations } from 'aws-cdk-lib';
import type { IMetric } from 'aws-cdk-lib/aws-cloudwatch';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { FilterCriteria, StartingPosition } from 'aws-cdk-lib/aws-lambda';
import { SqsDlq } from 'aws-cdk-lib/aws-lambda-event-sources';
import { Queue, QueueEncryption, type IQueue } from 'aws-cdk-lib/aws-sqs';
import { DISPATCH_FILTERS, DISPATCH_SOURCE } from '../lib/adapters/dynamodb/dispatch-source.js';
import { activityKey, GROUP_PK, TOPIC_PK } from '../lib/adapters/dynamodb/keys.js';
import { nagResourceName } from './background.js';
import { KEY_READ_ACTIONS, KEY_WRITE_ACTIONS, TableAccess, type SluiceFunction } from './sluice-function.js';
import type { SluiceFunctionOptions } from './sluice-service.js';

export const DISPATCHER_FUNCTION = {
  name: 'dispatcher',
  handlerModule: 'dispatch/dispatcher',
  description: 'Table stream trigger: routes flagged segment inserts (topic activity, push jobs; FIFO notices later)',
  // Its one table write is granted below, on activity items only.
  tableAccess: TableAccess.NONE,
  timeout: Duration.seconds(30),
  // It waits on a few small writes per invocation; memory buys nothing here.
  memorySize: 256,
} as const satisfies SluiceFunctionOptions;

/** Iterator age (ms) from which wake-ups are late enough to page someone. */
export const DISPATCHER_ITERATOR_AGE_ALARM_MS = 60_000;

/** The parts of SluiceService the dispatcher is built with. */
export interface DispatcherHost {
  readonly table: ITable;
  addFunction(options: SluiceFunctionOptions): SluiceFunction;
  addAlarm(id: string, metric: IMetric, description: string, options?: { readonly threshold?: number }): unknown;
}

export interface Dispatcher {
  readonly function: SluiceFunction;
  /** Lambda's on-failure destination: metadata (shard, sequence numbers) of batches given up. */
  readonly deadLetterQueue: Queue;
}

export function addDispatcher(
  host: DispatcherHost,
  options: { readonly queueName?: string; readonly pushQueue?: IQueue; readonly doorbellQueueArn?: string } = {},
): Dispatcher {
  const { table } = host;
  const { tableStreamArn } = table;
  if (!tableStreamArn) {
    throw new Error('The Sluice table has no stream: create it with SluiceTable, or pass a table with a NEW_IMAGE stream (tableStreamArn).');
  }
  const fn = host.addFunction(DISPATCHER_FUNCTION);
  const scope = fn.node.scope ?? fn;
  const deadLetterQueue = new Queue(scope, 'DispatcherFailures', {
    ...(options.queueName ? { queueName: options.queueName } : {}),
    encryption: QueueEncryption.SQS_MANAGED,
    enforceSSL: true,
    retentionPeriod: Duration.days(14),
  });
  Validations.of(deadLetterQueue).acknowledge({
    id: 'AwsSolutions-SQS3',
    reason:
      "This queue is itself a dead-letter queue: the on-failure destination of the dispatcher's stream event source mapping, which sends it the metadata of batches it gave up; nothing consumes it but an operator, so it needs no DLQ of its own.",
  });

  // Topic activity: UpdateItem on `A#<topic>` items only.
  const activityPrefix = activityKey('').pk;
  fn.addToRolePolicy(
    new PolicyStatement({
      actions: ['dynamodb:UpdateItem'],
      resources: [table.tableArn],
      conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [`${activityPrefix}*`] } },
    }),
  );
  // Push jobs: the push route reads which push groups subscribe — from topic items (`pg`), or, for
  // a topic saved before `pg` existed, a Query of the GROUP collection — and sends jobs to the push queue.
  if (options.pushQueue) {
    fn.addToRolePolicy(
      new PolicyStatement({
        actions: ['dynamodb:GetItem', 'dynamodb:BatchGetItem'],
        resources: [table.tableArn],
        conditions: { 'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': [TOPIC_PK] } },
      }),
    );
    fn.addToRolePolicy(
      new PolicyStatement({
        actions: ['dynamodb:Query'],
        resources: [table.tableArn],
        conditions: { 'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': [GROUP_PK] } },
      }),
    );
    fn.addToRolePolicy(new PolicyStatement({ actions: ['sqs:SendMessage'], resources: [options.pushQueue.queueArn] }));
  }
  // Doorbells: the doorbell route reads topic items (`wb`) and group items (`bq`, the queue URL)
  // and sends one message per parked group to its queue, `<prefix>-bell-*`.
  if (options.doorbellQueueArn) {
    fn.addToRolePolicy(
      new PolicyStatement({
        actions: ['dynamodb:GetItem'],
        resources: [table.tableArn],
        // Topic items are readable already when the push route is there.
        conditions: { 'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': options.pushQueue ? [GROUP_PK] : [TOPIC_PK, GROUP_PK] } },
      }),
    );
    fn.addToRolePolicy(new PolicyStatement({ actions: ['sqs:SendMessage'], resources: [options.doorbellQueueArn] }));
    Validations.of(fn.role ?? fn).acknowledge({
      id: `AwsSolutions-IAM5[Resource::${nagResourceName(fn, options.doorbellQueueArn)}]`,
      reason: "Pull groups' doorbell queues are created at run time by parking receives (one per group, named by a hash), so their names are unknown at deploy time; the grant is SendMessage on the deployment's doorbell prefix only.",
    });
  }
  // Stream records and items of a table with a customer managed key are read and written through it.
  table.encryptionKey?.grant(fn, ...KEY_READ_ACTIONS, ...KEY_WRITE_ACTIONS);

  // Reading the stream, as the event source mapping does it with the function's role. Granted here
  // rather than by DynamoEventSource, which adds dynamodb:ListStreams on "*": the table's own
  // streams are enough (the DynamoDB developer guide's policy for a stream-triggered function
  // scopes all four actions to table/<name>/stream/*).
  fn.addToRolePolicy(new PolicyStatement({ actions: ['dynamodb:DescribeStream', 'dynamodb:GetRecords', 'dynamodb:GetShardIterator'], resources: [tableStreamArn] }));
  const tableStreams = `${table.tableArn}/stream/*`;
  fn.addToRolePolicy(new PolicyStatement({ actions: ['dynamodb:ListStreams'], resources: [tableStreams] }));
  Validations.of(fn.role ?? fn).acknowledge({
    id: `AwsSolutions-IAM5[Resource::${nagResourceName(fn, tableStreams)}]`,
    reason:
      "dynamodb:ListStreams on this table's streams only: a stream's ARN ends in its creation label, which changes whenever the stream is re-enabled, so the event source mapping's role names the table's streams (as the DynamoDB developer guide's policy for stream-triggered functions does).",
  });
  fn.addEventSourceMapping('TableStream', {
    eventSourceArn: tableStreamArn,
    startingPosition: StartingPosition[DISPATCH_SOURCE.startingPosition],
    batchSize: DISPATCH_SOURCE.batchSize,
    maxBatchingWindow: Duration.seconds(DISPATCH_SOURCE.maxBatchingWindowSeconds),
    bisectBatchOnError: DISPATCH_SOURCE.bisectBatchOnError,
    retryAttempts: DISPATCH_SOURCE.retryAttempts,
    maxRecordAge: Duration.seconds(DISPATCH_SOURCE.maxRecordAgeSeconds),
    reportBatchItemFailures: DISPATCH_SOURCE.reportBatchItemFailures,
    onFailure: new SqsDlq(deadLetterQueue),
    filters: DISPATCH_FILTERS.map((pattern) => FilterCriteria.filter(pattern as Record<string, unknown>)),
  });

  const fiveMinutes = Duration.minutes(5);
  host.addAlarm(
    'DispatcherIteratorAge',
    fn.metric('IteratorAge', { period: fiveMinutes, statistic: 'Maximum' }),
    `The dispatcher read a stream record more than ${DISPATCHER_ITERATOR_AGE_ALARM_MS / 1000} s after it was written: wake-ups (and, later, FIFO notices and pushes) are late.`,
    { threshold: DISPATCHER_ITERATOR_AGE_ALARM_MS },
  );
  host.addAlarm(
    'DispatcherFailures',
    deadLetterQueue.metricApproximateNumberOfMessagesVisible({ period: fiveMinutes, statistic: 'Maximum' }),
    'The dispatcher gave up stream records (retries or maximum record age exhausted); the queue holds their shard and sequence numbers.',
  );
  return { function: fn, deadLetterQueue };
}
