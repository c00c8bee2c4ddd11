/** Push group settings (SPEC §3.1, §3.9): validation, the signing secret, rotation, `pu` counts, receive refused. */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { beforeEach, describe, expect, it } from 'vitest';
import { ConflictError, InvalidArgumentError, PushGroupReceiveError } from '../../lib/domain/errors.js';
import { TOPIC_PK } from '../../lib/adapters/dynamodb/keys.js';
import { newHarness, type Harness } from '../helpers/stores.js';
import { group, topic } from '../helpers/builders.js';

const ALLOWED_ARN = 'arn:aws:lambda:eu-west-1:123456789012:function:orders-consumer';
let h: Harness;

beforeEach(async () => {
  h = await newHarness();
  await h.admin.putTopic('orders', topic());
  await h.admin.putTopic('refunds', topic());
});

const pu = async (name: string) =>
  (await h.doc.send(new GetCommand({ TableName: h.table, Key: { pk: TOPIC_PK, sk: name }, ConsistentRead: true }))).Item?.pu as number | undefined;
const issuesOf = async (promise: Promise<unknown>) => {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(InvalidArgumentError);
  return (error as InvalidArgumentError).issues;
};

describe('push settings', () => {
  it('creates a push group with the defaults and answers its signing secret once', async () => {
    const { group: created } = await h.admin.putGroup('hooks', group('orders', { push: { url: 'http://127.0.0.1:9/hook' } }));
    expect(created.push).toEqual({ url: 'http://127.0.0.1:9/hook', batchSize: 1, timeoutSeconds: 10, maxConcurrency: 10 });
    expect((created as { signingSecret?: string }).signingSecret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const again = await h.admin.putGroup('hooks', group('orders', { push: { url: 'http://127.0.0.1:9/hook', batchSize: 5 } }));
    expect((again.group as { signingSecret?: string }).signingSecret).toBeUndefined();
    expect(again.group.push).toMatchObject({ batchSize: 5 });
    const read = await h.admin.getGroup('hooks');
    expect(read.push).toEqual({ url: 'http://127.0.0.1:9/hook', batchSize: 5, timeoutSeconds: 10, maxConcurrency: 10, lastAttempts: [] });
    expect(JSON.stringify(read)).not.toContain('whsec_');
  });

  it('a pull group shows push: null and has no secret to rotate', async () => {
    const { group: pull } = await h.admin.putGroup('pull', group('orders'));
    expect(pull.push).toBeNull();
    expect(await issuesOf(h.admin.rotatePushSecret('pull'))).toEqual([{ path: 'group', message: 'not a push group' }]);
  });

  it.each([
    [{ url: 'http://example.com/hook' }, 'push/url', 'must be https (http only on loopback in the local runtime)'],
    [{ url: 'https://10.0.0.7/hook' }, 'push/url', '10.0.0.7 is a private, link-local or reserved address'],
    [{ url: 'https://169.254.169.254/latest' }, 'push/url', '169.254.169.254 is a private, link-local or reserved address'],
    [{ url: 'not a url' }, 'push/url', 'is not a URL'],
    [{}, 'push', 'must give exactly one of url and lambdaArn'],
    [{ url: 'https://example.com', lambdaArn: ALLOWED_ARN }, 'push', 'must give exactly one of url and lambdaArn'],
    [{ lambdaArn: 'arn:aws:sqs:eu-west-1:123456789012:q' }, 'push/lambdaArn', 'must be a Lambda function ARN'],
    [{ lambdaArn: ALLOWED_ARN }, 'push/lambdaArn', 'not available on the local runtime'],
    [{ url: 'http://127.0.0.1:9/', batchSize: 101 }, 'push/batchSize', 'must be an integer from 1 to 100'],
    [{ url: 'http://127.0.0.1:9/', timeoutSeconds: 31 }, 'push/timeoutSeconds', 'must be an integer from 1 to 30'],
    [{ url: 'http://127.0.0.1:9/', maxConcurrency: 0 }, 'push/maxConcurrency', 'must be an integer from 1 to 100'],
  ])('refuses %j with a precise 400 and writes nothing', async (push, path, message) => {
    const issues = await issuesOf(h.admin.putGroup('hooks', group('orders', { push })));
    expect(issues).toContainEqual({ path, message });
    await expect(h.admin.getGroup('hooks')).rejects.toThrow(/does not exist/);
    expect(await pu('orders')).toBeUndefined();
  });

  it('on AWS takes only the Lambda functions the construct allows', async () => {
    const aws = await newHarness({ pushLambdaArns: [ALLOWED_ARN] });
    await aws.admin.putTopic('orders', topic());
    const { group: created } = await aws.admin.putGroup('fn', group('orders', { push: { lambdaArn: ALLOWED_ARN } }));
    expect(created.push).toMatchObject({ lambdaArn: ALLOWED_ARN });
    const other = ALLOWED_ARN.replace('orders-consumer', 'payroll');
    const error = await aws.admin.putGroup('fn2', group('orders', { push: { lambdaArn: other } })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidArgumentError);
    expect((error as InvalidArgumentError).issues).toEqual([{ path: 'push/lambdaArn', message: 'not an allowed push target' }]);
  });

  it('rotates the secret: a new one, the old one kept signing for 24 h', async () => {
    const { group: created } = await h.admin.putGroup('hooks', group('orders', { push: { url: 'http://127.0.0.1:9/hook' } }));
    const first = (created as { signingSecret?: string }).signingSecret;
    const rotated = await h.admin.rotatePushSecret('hooks');
    expect(rotated.signingSecret).toMatch(/^whsec_/);
    expect(rotated.signingSecret).not.toBe(first);
    const stored = await h.stores.catalog.getGroup('hooks');
    expect(stored?.pushSecret?.previousUntil).toBe(h.clock.now() + 86_400_000);
    expect(stored?.pushSecret?.previous).toBeDefined();
  });

  it('a push group refuses receive with 409 PushGroup', async () => {
    await h.admin.putGroup('hooks', group('orders', { push: { url: 'http://127.0.0.1:9/hook' } }));
    const error = await h.queue.receive('hooks', { maxMessages: 1, waitSeconds: 0 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PushGroupReceiveError);
    expect(error).toBeInstanceOf(ConflictError);
    expect((error as PushGroupReceiveError).code).toBe('PushGroup');
  });
});

describe('pu: push subscriptions per topic', () => {
  it('is kept by create, PATCH of subscriptions or push, PUT without push, and DELETE', async () => {
    await h.admin.putGroup('a', group('orders', { push: { url: 'http://127.0.0.1:9/a' } }));
    await h.admin.putGroup('b', group(['orders', 'refunds'], { push: { url: 'http://127.0.0.1:9/b' } }));
    await h.admin.putGroup('pull', group(['orders', 'refunds']));
    expect([await pu('orders'), await pu('refunds')]).toEqual([2, 1]);

    await h.admin.patchGroup('b', { subscriptions: [{ topic: 'refunds', tags: undefined }] });
    expect([await pu('orders'), await pu('refunds')]).toEqual([1, 1]);

    await h.admin.patchGroup('a', { push: null });
    expect(await pu('orders')).toBe(0);
    const back = await h.admin.patchGroup('a', { push: { url: 'http://127.0.0.1:9/a2', batchSize: 3 } });
    expect(back.group.push).toEqual({ url: 'http://127.0.0.1:9/a2', batchSize: 3, timeoutSeconds: 10, maxConcurrency: 10 });
    // The secret was created with the first push settings and is kept: not answered again.
    expect((back.group as { signingSecret?: string }).signingSecret).toBeUndefined();
    expect(await pu('orders')).toBe(1);

    // A PATCH of other fields keeps push and the counts.
    await h.admin.patchGroup('a', { maxDeliveries: 3 });
    expect((await h.admin.getGroup('a')).push).toMatchObject({ url: 'http://127.0.0.1:9/a2', batchSize: 3 });
    expect(await pu('orders')).toBe(1);

    // PUT without push: a pull group again.
    await h.admin.putGroup('a', group('orders'));
    expect(await pu('orders')).toBe(0);

    await h.admin.deleteGroup('b');
    await h.admin.deleteGroup('pull');
    expect([await pu('orders'), await pu('refunds')]).toEqual([0, 0]);
    expect((await h.stores.catalog.getTopic('refunds'))?.pushSubscriptions).toBe(0);
  });

  it('an invalid push change writes nothing (counts stay)', async () => {
    await h.admin.putGroup('a', group('orders', { push: { url: 'http://127.0.0.1:9/a' } }));
    await expect(h.admin.patchGroup('a', { subscriptions: [{ topic: 'refunds', tags: undefined }], push: { url: 'https://10.1.1.1/' } })).rejects.toBeInstanceOf(InvalidArgumentError);
    expect([await pu('orders'), await pu('refunds')]).toEqual([1, undefined]);
  });
});
