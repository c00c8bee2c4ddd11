import { beforeEach, describe, expect, it } from 'vitest';
import { mockClient } from 'aws-sdk-client-mock';
import { ConflictException, CreateScheduleCommand, SchedulerClient } from '@aws-sdk/client-scheduler';
import { SendMessageBatchCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { EventBridgeScheduler } from '../../lib/adapters/aws/scheduler.js';
import { SqsDelayQueue } from '../../lib/adapters/aws/delay-queue.js';
import { SqsCheckDispatcher } from '../../lib/adapters/aws/check-dispatcher.js';
import { MAX_IDS_PER_WAKE } from '../../lib/ports/timers.js';
import { TimerService } from '../../lib/services/timer-service.js';
import { MisconfiguredError, ThrottledError, UnavailableError } from '../../lib/domain/errors.js';
import { toProblem } from '../../lib/http/problem.js';

const scheduler = mockClient(SchedulerClient);
const sqs = mockClient(SQSClient);
const target = { groupName: 'sluice-timers', functionArn: 'arn:aws:lambda:eu-west-1:1:function:minute', roleArn: 'arn:aws:iam::1:role/scheduler' };
const throttling = () => Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException' });

beforeEach(() => {
  scheduler.reset();
  sqs.reset();
});

describe('EventBridge Scheduler adapter', () => {
  it('creates a one-time schedule that deletes itself after firing', async () => {
    scheduler.on(CreateScheduleCommand).resolves({ ScheduleArn: 'arn' });
    const at = Date.UTC(2026, 11, 1, 10, 30, 0);
    await new EventBridgeScheduler(new SchedulerClient({ region: 'eu-west-1' }), target).scheduleAt('sluice-m123', at, { kind: 'minute', minute: 123 });
    const calls = scheduler.commandCalls(CreateScheduleCommand);
    expect(calls).toHaveLength(1);
    expect(calls[0]?.args[0].input).toEqual({
      Name: 'sluice-m123',
      GroupName: 'sluice-timers',
      ScheduleExpression: 'at(2026-12-01T10:30:00)',
      ScheduleExpressionTimezone: 'UTC',
      FlexibleTimeWindow: { Mode: 'OFF' },
      ActionAfterCompletion: 'DELETE',
      Target: { Arn: target.functionArn, RoleArn: target.roleArn, Input: JSON.stringify({ kind: 'minute', minute: 123 }) },
    });
  });

  it('treats ConflictException (the bucket is armed already) as done', async () => {
    scheduler.on(CreateScheduleCommand).rejects(new ConflictException({ message: 'exists', Message: 'exists', $metadata: {} }));
    await expect(
      new EventBridgeScheduler(new SchedulerClient({ region: 'eu-west-1', maxAttempts: 1 }), target).scheduleAt('n', 0, { kind: 'minute', minute: 1 }),
    ).resolves.toBeUndefined();
  });

  it('retries throttling, then answers a retryable Throttled error', async () => {
    scheduler.on(CreateScheduleCommand).rejectsOnce(throttling()).resolves({ ScheduleArn: 'arn' });
    const adapter = new EventBridgeScheduler(new SchedulerClient({ region: 'eu-west-1', maxAttempts: 1 }), target);
    await adapter.scheduleAt('n', 0, { kind: 'minute', minute: 1 });
    expect(scheduler.commandCalls(CreateScheduleCommand)).toHaveLength(2);
    scheduler.reset();
    scheduler.on(CreateScheduleCommand).rejects(throttling());
    await expect(adapter.scheduleAt('n', 0, { kind: 'minute', minute: 1 })).rejects.toBeInstanceOf(ThrottledError);
    expect(scheduler.commandCalls(CreateScheduleCommand)).toHaveLength(6);
  }, 20_000);
});

describe('Scheduler errors other than throttling and conflict (issue 14 item 8)', () => {
  const awsError = (name: string, status: number) => Object.assign(new Error(`${name} from the service`), { name, $metadata: { httpStatusCode: status } });
  const adapter = () => new EventBridgeScheduler(new SchedulerClient({ region: 'eu-west-1', maxAttempts: 1 }), target);

  it.each([
    ['AccessDeniedException', 403, 'may not use it'],
    ['ResourceNotFoundException', 404, 'schedule group or the target does not exist'],
    ['ValidationException', 400, 'refused the request'],
  ])('%s → a logged 500 Misconfigured problem that names the cause', async (name, status, hint) => {
    scheduler.on(CreateScheduleCommand).rejects(awsError(name, status));
    const error = await adapter().scheduleAt('n', 0, { kind: 'minute', minute: 1 }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(MisconfiguredError);
    expect((error as Error).message).toContain(`EventBridge Scheduler answered ${name}`);
    expect((error as Error).message).toContain(hint);
    expect((error as Error).cause).toMatchObject({ name });
    const { problem, headers, unexpected } = toProblem(error);
    expect(problem).toMatchObject({ status: 500, code: 'Misconfigured', title: 'Service misconfigured' });
    expect(JSON.stringify(problem)).not.toContain('from the service'); // the AWS message is logged, not answered
    expect(headers).toEqual({});
    expect(unexpected).toBe(true); // the edge logs it with its cause
  });

  it.each([
    ['InternalServerException', 500, 1],
    ['ServiceUnavailableException', 503, 1],
    ['ServiceQuotaExceededException', 402, 60],
  ])('%s → a 503 with Retry-After %i s', async (name, status, retryAfter) => {
    scheduler.on(CreateScheduleCommand).rejects(awsError(name, status));
    const error = await adapter().scheduleAt('n', 0, { kind: 'minute', minute: 1 }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(UnavailableError);
    expect(toProblem(error)).toMatchObject({ problem: { status: 503, code: 'ServiceUnavailable' }, headers: { 'retry-after': String(retryAfter) }, unexpected: false });
  });

  it('maps a delay queue that does not exist the same way', async () => {
    sqs.on(SendMessageCommand).rejects(awsError('AWS.SimpleQueueService.NonExistentQueue', 400));
    const queue = new SqsDelayQueue(new SQSClient({ region: 'eu-west-1', maxAttempts: 1 }), 'https://sqs.eu-west-1.amazonaws.com/1/delay');
    await expect(queue.send({ kind: 'release', minute: 1, second: 60 }, 1000)).rejects.toThrow(/SQS delay queue answered .*the queue does not exist/);
  });
});

describe('SQS delay queue adapter', () => {
  it('rounds the delay up to whole seconds within 0–900', async () => {
    sqs.on(SendMessageCommand).resolves({ MessageId: 'm' });
    const queue = new SqsDelayQueue(new SQSClient({ region: 'eu-west-1' }), 'https://sqs.eu-west-1.amazonaws.com/1/delay');
    const wake = { kind: 'release' as const, minute: 5, second: 300 };
    await queue.send(wake, 1200);
    await queue.send(wake, -5);
    await queue.send(wake, 2_000_000);
    const delays = sqs.commandCalls(SendMessageCommand).map((c) => c.args[0].input.DelaySeconds);
    expect(delays).toEqual([2, 0, 900]);
    expect(sqs.commandCalls(SendMessageCommand)[0]?.args[0].input).toMatchObject({
      QueueUrl: 'https://sqs.eu-west-1.amazonaws.com/1/delay',
      MessageBody: JSON.stringify(wake),
    });
  });
});

describe('release wake-ups carry the ids due in their second (issue 14 item 5)', () => {
  const ulid = (n: number) => `01J${String(n).padStart(23, '0')}`; // 26 characters, as deferred ids are
  const unused = new Proxy({}, { get: () => () => Promise.reject(new Error('the near path reads and writes nothing in DynamoDB')) });

  it(`splits ${MAX_IDS_PER_WAKE + 1}+ ids of one second into wake-ups of ≤ ${MAX_IDS_PER_WAKE} ids, each body in one 64 KiB SQS chunk`, async () => {
    sqs.on(SendMessageCommand).resolves({ MessageId: 'm' });
    const now = Date.UTC(2026, 11, 1, 10, 0, 0, 300);
    const timers = new TimerService(
      unused as never,
      unused as never,
      new SqsDelayQueue(new SQSClient({ region: 'eu-west-1' }), 'https://sqs.eu-west-1.amazonaws.com/1/delay'),
      { now: () => now },
      async () => ({ released: 0, pending: [] }),
    );
    const wakes = Array.from({ length: 2500 }, (_, i) => ({ id: ulid(i), dueAt: now + 5000 + (i % 700) }));
    await timers.arm(wakes);
    const inputs = sqs.commandCalls(SendMessageCommand).map((c) => c.args[0].input);
    expect(inputs).toHaveLength(3);
    const bodies = inputs.map((i) => JSON.parse(i.MessageBody!) as { kind: string; second: number; minute: number; ids: string[] });
    expect(bodies.map((b) => b.ids.length)).toEqual([1000, 1000, 500]);
    expect(bodies.flatMap((b) => b.ids).sort()).toEqual(wakes.map((w) => w.id).sort());
    for (const [i, body] of bodies.entries()) {
      expect(body).toMatchObject({ kind: 'release', second: Math.floor((now + 5000) / 1000), minute: Math.floor((now + 5000) / 60_000) });
      expect(inputs[i]!.DelaySeconds).toBe(5);
      expect(Buffer.byteLength(inputs[i]!.MessageBody!)).toBeLessThanOrEqual(64 * 1024);
    }
  });
});

describe('SQS check dispatcher (issue 14 item 6)', () => {
  it('sends armed check-backs with DelaySeconds rounded up, at most 900, in batches of 10', async () => {
    sqs.on(SendMessageBatchCommand).resolves({ Successful: [], Failed: [] });
    const dispatcher = new SqsCheckDispatcher(new SQSClient({ region: 'eu-west-1' }), 'https://sqs.eu-west-1.amazonaws.com/1/checks');
    await dispatcher.dispatch(Array.from({ length: 12 }, (_, i) => `t${i}`), 1500);
    await dispatcher.dispatch(['t-far'], 3_600_000);
    await dispatcher.dispatch(['t-now']);
    const calls = sqs.commandCalls(SendMessageBatchCommand).map((c) => c.args[0].input);
    expect(calls.map((c) => c.Entries!.length)).toEqual([10, 2, 1, 1]);
    expect(calls[0]!.Entries![0]).toEqual({ Id: '0', MessageBody: JSON.stringify({ transactionId: 't0' }), DelaySeconds: 2 });
    expect(calls[2]!.Entries![0]!.DelaySeconds).toBe(900);
    expect(calls[3]!.Entries![0]).toEqual({ Id: '0', MessageBody: JSON.stringify({ transactionId: 't-now' }) });
  });
});
