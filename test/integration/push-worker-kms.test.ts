/**
 * The push worker handler (functions/push/worker.ts) on a cold container as on Lambda
 * (SLUICE_KMS_KEY_ID set: KmsSecretBox), on DynamoDB Local, SQS mocked, and KMS mocked so that it
 * allows only what the push-worker role's synthesized policy allows (kms:Decrypt with the
 * encryption-context conditions of its statements), as IAM would. The local runtime seals with a
 * local key and checks no policy: until 2026-12-04 the role could not open the message-id key, and
 * on AWS no push job delivered anything (found by an audit).
 */
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { DecryptCommand, EncryptCommand, KMSClient } from '@aws-sdk/client-kms';
import { SendMessageCommand, SendMessageBatchCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { Context, SQSEvent } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { SluiceService } from '../../cdk/index.js';
import * as build from '../helpers/builders.js';
import { pushEndpoint, type PushEndpoint } from '../helpers/push-endpoint.js';
import { send, testTable } from '../helpers/stores.js';
import { grantsOf, logicalIdOf } from '../cdk/synth.js';

const kms = mockClient(KMSClient);
const sqs = mockClient(SQSClient);
/** null: every context allowed (the API functions that set things up); else the purposes the role may Decrypt. */
let allowedDecrypt: Set<string> | null = null;
let endpoint: PushEndpoint;

function pushWorkerDecryptPurposes(): Set<string> {
  const stack = new Stack(new App({ context: { 'aws:cdk:bundling-stacks': [] } }), 'S', { env: { account: '123456789012', region: 'eu-west-1' } });
  const service = new SluiceService(stack, 'Queue');
  const grants = grantsOf(Template.fromStack(stack), logicalIdOf(stack, service.functions.get('push-worker')!));
  return new Set(
    grants
      .filter((g) => g.action === 'kms:Decrypt')
      .map((g) => (g.condition as { StringEquals: Record<string, string> }).StringEquals['kms:EncryptionContext:purpose']!),
  );
}

beforeAll(async () => {
  // A fake KMS: the ciphertext carries the context and the plaintext; Decrypt checks the role's policy.
  kms.on(EncryptCommand).callsFake((input: { Plaintext: Uint8Array; EncryptionContext: Record<string, string> }) => ({
    CiphertextBlob: Buffer.from(JSON.stringify({ ctx: input.EncryptionContext, p: Buffer.from(input.Plaintext).toString('base64') })),
  }));
  kms.on(DecryptCommand).callsFake((input: { CiphertextBlob: Uint8Array; EncryptionContext: Record<string, string> }) => {
    const { ctx, p } = JSON.parse(Buffer.from(input.CiphertextBlob).toString('utf8')) as { ctx: Record<string, string>; p: string };
    if (allowedDecrypt && !allowedDecrypt.has(input.EncryptionContext.purpose ?? '')) {
      throw Object.assign(new Error(`User is not authorized to perform: kms:Decrypt (purpose=${input.EncryptionContext.purpose})`), { name: 'AccessDeniedException' });
    }
    expect(input.EncryptionContext).toEqual(ctx);
    return { Plaintext: Buffer.from(p, 'base64') };
  });
  sqs.on(SendMessageCommand).resolves({});
  sqs.on(SendMessageBatchCommand).resolves({ Successful: [], Failed: [] });
  endpoint = await pushEndpoint();
  const { endpoint: dynamo, table } = await testTable('push-kms');
  Object.assign(process.env, {
    SLUICE_TABLE_NAME: table,
    DYNAMODB_ENDPOINT: dynamo,
    SLUICE_NOTIFIER: 'in-process',
    SLUICE_TIMERS: 'aws',
    SLUICE_SCHEDULE_GROUP: 'sluice-timers',
    SLUICE_SCHEDULER_ROLE_ARN: 'arn:aws:iam::123456789012:role/scheduler',
    SLUICE_TIMER_FUNCTION_ARN: 'arn:aws:lambda:eu-west-1:123456789012:function:minute',
    SLUICE_DELAY_QUEUE_URL: 'https://sqs.eu-west-1.amazonaws.com/123456789012/delay',
    SLUICE_CHECK_QUEUE_URL: 'https://sqs.eu-west-1.amazonaws.com/123456789012/checks',
    SLUICE_PUSH_QUEUE_URL: 'https://sqs.eu-west-1.amazonaws.com/123456789012/push',
    SLUICE_KMS_KEY_ID: 'arn:aws:kms:eu-west-1:123456789012:key/1234',
    SLUICE_ALLOW_LOOPBACK_CHECKERS: 'true',
    POWERTOOLS_LOG_LEVEL: 'CRITICAL',
  });
  // The API side (every grant): a topic, a push group, one message.
  const { container } = await import('../../functions/commons/container.js');
  await container().admin.putTopic('orders', build.topic());
  await container().admin.putGroup('hooks', build.group('orders', { push: { url: `${endpoint.url}/hook`, batchSize: 10 } } as never));
  await container().queue.send('orders', send('hello'));
});
afterAll(async () => endpoint?.close());

describe('push worker on AWS', () => {
  it('pushes a message with only the grants its role has', async () => {
    allowedDecrypt = pushWorkerDecryptPurposes();
    // A cold push-worker container (its own module instances, its own message-id key cache).
    vi.resetModules();
    const { handler } = (await import('../../functions/push/worker.js')) as unknown as {
      handler: (e: SQSEvent, c: Context) => Promise<{ batchItemFailures: Array<{ itemIdentifier: string }> }>;
    };
    const event = {
      Records: [{ messageId: 'job-1', receiptHandle: 'r', body: JSON.stringify({ group: 'hooks' }), attributes: {}, messageAttributes: {}, md5OfBody: '', eventSource: 'aws:sqs', eventSourceARN: 'arn:aws:sqs:eu-west-1:123456789012:push', awsRegion: 'eu-west-1' }],
    } as unknown as SQSEvent;
    const answer = await handler(event, {} as Context);
    const denied = kms.commandCalls(DecryptCommand).filter((c) => allowedDecrypt && !allowedDecrypt.has(c.args[0].input.EncryptionContext?.purpose ?? ''));
    expect(denied.map((c) => c.args[0].input.EncryptionContext)).toEqual([]);
    expect(answer.batchItemFailures).toEqual([]);
    expect(endpoint.requests.map((r) => r.messages.map((m) => m.body))).toEqual([['hello']]);
  });
});
