/**
 * The AWS timer path end to end on DynamoDB Local (issue 14 items 5 and 6):
 * the container built as on Lambda (SLUICE_TIMERS=aws, check queue URL set),
 * SQS and EventBridge Scheduler mocked with aws-sdk-client-mock (no local twin
 * here). Asserts the SQS message bodies the adapters send and feeds them back
 * to the release and check-worker Lambda handlers as SQS events.
 */
import { CreateScheduleCommand, SchedulerClient } from '@aws-sdk/client-scheduler';
import { SendMessageBatchCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { Context, SQSEvent } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { minuteOf } from '../../lib/adapters/dynamodb/keys.js';
import * as build from '../helpers/builders.js';
import { startChecker, type TestChecker } from '../helpers/checker.js';
import { recordCalls, type CallRecorder } from '../helpers/call-recorder.js';
import { send, testTable } from '../helpers/stores.js';

const DELAY_QUEUE = 'https://sqs.us-east-1.amazonaws.com/123456789012/sluice-delay';
const CHECK_QUEUE = 'https://sqs.us-east-1.amazonaws.com/123456789012/sluice-checks';
const sqs = mockClient(SQSClient);
const scheduler = mockClient(SchedulerClient);

type Container = typeof import('../../functions/commons/container.js');
let container: Container['container'];
let release: (event: SQSEvent, context: Context) => Promise<{ batchItemFailures: Array<{ itemIdentifier: string }> }>;
let worker: typeof release;
let checker: TestChecker;
let calls: CallRecorder;

const context = {} as Context;
/** The SQS event the Lambda event source mapping hands the function for these bodies. */
const sqsEvent = (queueUrl: string, bodies: string[]): SQSEvent => ({
  Records: bodies.map((body, i) => ({
    messageId: `m-${i}`,
    receiptHandle: `r-${i}`,
    body,
    attributes: { ApproximateReceiveCount: '1', SentTimestamp: String(Date.now()), SenderId: 'AIDA', ApproximateFirstReceiveTimestamp: String(Date.now()) },
    messageAttributes: {},
    md5OfBody: '',
    eventSource: 'aws:sqs',
    eventSourceARN: `arn:aws:sqs:us-east-1:123456789012:${queueUrl.split('/').pop()}`,
    awsRegion: 'us-east-1',
  })),
});
const sentBodies = () => sqs.commandCalls(SendMessageCommand).map((c) => c.args[0].input);
const sentChecks = () => sqs.commandCalls(SendMessageBatchCommand).flatMap((c) => (c.args[0].input.Entries ?? []).map((e) => ({ queue: c.args[0].input.QueueUrl, ...e })));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

beforeAll(async () => {
  const { endpoint, table } = await testTable('aws-timers');
  Object.assign(process.env, {
    SLUICE_TABLE_NAME: table,
    DYNAMODB_ENDPOINT: endpoint,
    SLUICE_NOTIFIER: 'in-process',
    SLUICE_TIMERS: 'aws',
    SLUICE_SCHEDULE_GROUP: 'sluice-timers',
    SLUICE_SCHEDULER_ROLE_ARN: 'arn:aws:iam::123456789012:role/scheduler',
    SLUICE_TIMER_FUNCTION_ARN: 'arn:aws:lambda:us-east-1:123456789012:function:minute',
    SLUICE_DELAY_QUEUE_URL: DELAY_QUEUE,
    SLUICE_CHECK_QUEUE_URL: CHECK_QUEUE,
    SLUICE_ALLOW_LOOPBACK_CHECKERS: 'true',
    SLUICE_CHECK_TIMEOUT_MS: '2000',
    POWERTOOLS_LOG_LEVEL: 'ERROR',
  });
  container = (await import('../../functions/commons/container.js')).container;
  release = (await import('../../functions/timers/release.js')).handler as never;
  worker = (await import('../../functions/checks/worker.js')).handler as never;
  calls = recordCalls(container().dynamo);
  checker = await startChecker(() => 'unknown');
  // One partition: a release round is counted as the segment it appends.
  await container().admin.putTopic('jobs', build.topic({ partitions: 1 }));
  await container().admin.putGroup('g', build.group('jobs', { visibilityTimeoutSeconds: 30 }));
  const created = await container().transactions.putProducer('shop', build.producer(checker.url, { checkIntervalSeconds: 7, maxChecks: 3 }));
  checker.secrets = [(created as { signingSecret: string }).signingSecret];
});
afterAll(async () => checker?.close());
beforeEach(() => {
  sqs.reset();
  scheduler.reset();
  sqs.on(SendMessageCommand).resolves({ MessageId: 'sqs-1' });
  sqs.on(SendMessageBatchCommand).resolves({ Successful: [], Failed: [] });
  scheduler.on(CreateScheduleCommand).resolves({ ScheduleArn: 'arn' });
  calls.reset();
});

describe('scheduled delivery on AWS: the delay message carries the ids due in its second', () => {
  it('delaySeconds 1: one SQS message with the id, released by the release Lambda without the due index', async () => {
    const sent = await container().queue.send('jobs', send('soon', { delaySeconds: 1 }));
    const due = Date.parse(sent.deliverAt!);
    const [input, ...more] = sentBodies();
    expect(more).toEqual([]);
    expect(scheduler.commandCalls(CreateScheduleCommand)).toEqual([]);
    expect(input).toMatchObject({ QueueUrl: DELAY_QUEUE, DelaySeconds: 1 });
    expect(JSON.parse(input!.MessageBody!)).toEqual({ kind: 'release', minute: minuteOf(due), second: Math.floor(due / 1000), ids: [sent.messageId.slice(1)] });
    await sleep(Math.max(0, due - Date.now()));
    calls.recording = true;
    const result = await release(sqsEvent(DELAY_QUEUE, [input!.MessageBody!]), context);
    calls.recording = false;
    expect(result).toEqual({ batchItemFailures: [] });
    expect(calls.indexQueries).toEqual([]);
    const got = await container().queue.receive('g', { maxMessages: 10, waitSeconds: 0 });
    expect(got.map((m) => m.body)).toEqual(['soon']);
    expect(Date.now() - due).toBeLessThan(2000);
  });

  it('wake-ups of one second in one SQS event are released by one flight: one segment, no write failed', async () => {
    const due = (Math.floor(Date.now() / 1000) + 2) * 1000 + 100;
    const sent = [];
    for (const body of ['s-0', 's-1', 's-2']) sent.push(await container().queue.send('jobs', send(body, { deliverAt: due })));
    const bodies = sentBodies().map((input) => input.MessageBody!);
    expect(bodies.map((b) => JSON.parse(b).ids)).toEqual(sent.map((s) => [s.messageId.slice(1)])); // one wake-up per send
    await sleep(Math.max(0, due - Date.now()));
    calls.recording = true;
    const result = await release(sqsEvent(DELAY_QUEUE, bodies), context);
    calls.recording = false;
    expect(result).toEqual({ batchItemFailures: [] });
    expect(calls.segments).toBe(1);
    expect(calls.failedConditions).toBe(0);
    expect(calls.transactions.failed).toBe(0);
    const got = await container().queue.receive('g', { maxMessages: 10, waitSeconds: 0 });
    expect(got.map((m) => m.body).sort()).toEqual(['s-0', 's-1', 's-2']);
    for (const s of sent) expect(await container().queue.getMessage('jobs', s.messageId)).toMatchObject({ state: 'deliverable' });
  });

  it('a release event with a malformed body fails that record alone (partial batch response)', async () => {
    const result = await release(sqsEvent(DELAY_QUEUE, ['{"kind":"release","minute":1,"second":60,"ids":[""]}']), context);
    expect(result).toEqual({ batchItemFailures: [{ itemIdentifier: 'm-0' }] });
  });

  it('a message due beyond the delay queue reach: a minute schedule, then the minute handler sends the ids', async () => {
    const sent = await container().queue.send('jobs', send('far', { delaySeconds: 20 * 60 }));
    const due = Date.parse(sent.deliverAt!);
    expect(sentBodies()).toEqual([]);
    const [schedule] = scheduler.commandCalls(CreateScheduleCommand).map((c) => c.args[0].input);
    expect(JSON.parse(schedule!.Target!.Input!)).toEqual({ kind: 'minute', minute: minuteOf(due) });
    await container().timers.onMinute(minuteOf(due)); // what the schedule's target runs
    const [input] = sentBodies();
    expect(input!.DelaySeconds).toBe(900); // SQS's limit; the release re-arms the rest
    expect(JSON.parse(input!.MessageBody!)).toMatchObject({ second: Math.floor(due / 1000), ids: [sent.messageId.slice(1)] });
    sqs.resetHistory();
    expect(await release(sqsEvent(DELAY_QUEUE, [input!.MessageBody!]), context)).toEqual({ batchItemFailures: [] });
    const [again] = sentBodies(); // came 20 min early (the test did not wait): armed again with the same id
    expect(JSON.parse(again!.MessageBody!)).toMatchObject({ ids: [sent.messageId.slice(1)] });
    await container().queue.cancel('jobs', sent.messageId);
  });
});

describe('check-backs on AWS: second precision through the same timer path', () => {
  const half = (body: string, checkAfterSeconds: number) =>
    container().queue.send('jobs', send(body, { transaction: { producerGroup: 'shop', checkAfterSeconds } }));

  it('checkAfterSeconds 2: the check queue gets the transaction delayed 2 s; the worker checks and arms the next at checkIntervalSeconds', async () => {
    const sent = await half('tx', 2);
    const [entry, ...more] = sentChecks();
    expect(more).toEqual([]);
    expect(entry).toMatchObject({ queue: CHECK_QUEUE, DelaySeconds: 2, MessageBody: JSON.stringify({ transactionId: sent.transactionId }) });
    await sleep(2000);
    sqs.resetHistory();
    expect(await worker(sqsEvent(CHECK_QUEUE, [entry!.MessageBody!]), context)).toEqual({ batchItemFailures: [] });
    expect(checker.calls.filter((c) => c.transactionId === sent.transactionId).map((c) => c.checkCount)).toEqual([1]);
    expect(sentChecks()).toMatchObject([{ queue: CHECK_QUEUE, DelaySeconds: 7, MessageBody: JSON.stringify({ transactionId: sent.transactionId }) }]);
    expect(await container().transactions.get(sent.transactionId!)).toMatchObject({ state: 'prepared', checkCount: 1 });
    await container().transactions.rollback(sent.transactionId!);
  });

  it('checkAfterSeconds 3600: the minute schedule, then the minute handler sends the check delayed to its second', async () => {
    const sent = await half('tx-far', 3600);
    const at = Date.now() + 3_600_000;
    expect(sentChecks()).toEqual([]);
    const minutes = scheduler.commandCalls(CreateScheduleCommand).map((c) => JSON.parse(c.args[0].input.Target!.Input!).minute as number);
    expect(minutes).toHaveLength(1);
    expect(Math.abs(minutes[0]! - minuteOf(at))).toBeLessThanOrEqual(1);
    await container().timers.onMinute(minutes[0]!);
    expect(sentChecks()).toMatchObject([{ queue: CHECK_QUEUE, DelaySeconds: 900, MessageBody: JSON.stringify({ transactionId: sent.transactionId }) }]);
    await container().transactions.rollback(sent.transactionId!);
  });

  it('a check that cannot be armed (SQS refuses) is logged, the send still answers, and the sweep finds it when due', async () => {
    sqs.on(SendMessageBatchCommand).rejects(Object.assign(new Error('down'), { name: 'InternalError', $metadata: { httpStatusCode: 500 } }));
    const sent = await half('tx-lost', 1);
    expect(sent.state).toBe('prepared');
    await sleep(1100);
    sqs.on(SendMessageBatchCommand).resolves({ Successful: [], Failed: [] });
    sqs.resetHistory();
    expect(await container().transactions.sweep()).toBeGreaterThanOrEqual(1);
    expect(sentChecks().map((e) => e.MessageBody)).toContain(JSON.stringify({ transactionId: sent.transactionId }));
    await container().transactions.rollback(sent.transactionId!);
  });
});
