/**
 * Push groups per topic are bounded by construction (docs/design.md, Limits by construction): a topic
 * item names its push groups (`pg`), so a topic takes at most `PushLimits.pushGroupsPerTopicMax` of them.
 * Driven at the maximum on DynamoDB Local with the longest names: 999 groups are cloned from one saved
 * through the service (a save each would take minutes), the 1,000th is saved through the service.
 */
import { GetCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { TooManyPushGroupsError } from '../../lib/domain/errors.js';
import { Limits } from '../../lib/domain/model.js';
import { PushLimits } from '../../lib/domain/push.js';
import { toProblem } from '../../lib/http/problem.js';
import { TOPIC_PK, cursorPk } from '../../lib/adapters/dynamodb/keys.js';
import { newHarness, send, type Harness } from '../helpers/stores.js';
import { catalogGroup, cloneGroups, groupItem as storedGroup, refusalOf } from '../helpers/cloned-groups.js';
import { group, topic } from '../helpers/builders.js';

const MAX = PushLimits.pushGroupsPerTopicMax;
/** The longest names NAME_PATTERN allows: the topic item's worst case. */
const nameOf = (i: number) => `g${String(i).padStart(4, '0')}-`.padEnd(Limits.nameMaxLength, 'x');
const hook = { url: 'http://127.0.0.1:9/hook' };
/** A push group on `topics` (names this long need their own dead-letter topic: `<name>-dlq` is too long). */
const pushGroup = (topics: string | string[], deadLetterTopic = 'hooks-dlq') => group(topics, { push: hook, deadLetterTopic });
let h: Harness;

const topicItem = async () => {
  const read = await h.doc.send(
    new GetCommand({ TableName: h.table, Key: { pk: TOPIC_PK, sk: 'orders' }, ConsistentRead: true, ReturnConsumedCapacity: 'TOTAL' }),
  );
  const item = read.Item ?? {};
  return { pu: item.pu as number, pg: [...((item.pg as Set<string> | undefined) ?? [])], rru: read.ConsumedCapacity?.CapacityUnits ?? 0 };
};
const groupItem = (name: string) => storedGroup(h, name);
const refusal = (promise: Promise<unknown>) => refusalOf(promise, TooManyPushGroupsError);

beforeAll(async () => {
  h = await newHarness();
  await h.admin.putTopic('orders', topic());
  await h.admin.putTopic('refunds', topic());
  await h.admin.putGroup('pull', group('orders'));
  await h.admin.putGroup(nameOf(0), pushGroup('orders'));
  // Groups 1–998: copies of group 0's stored item under other names, and the topic's count and names.
  const names = Array.from({ length: MAX - 2 }, (_, i) => nameOf(i + 1));
  await cloneGroups(h, (await groupItem(nameOf(0)))!, names);
  await h.doc.send(
    new UpdateCommand({
      TableName: h.table,
      Key: { pk: TOPIC_PK, sk: 'orders' },
      UpdateExpression: 'SET pu = pu + :n ADD pg :names',
      ExpressionAttributeValues: { ':n': names.length, ':names': new Set(names) },
    }),
  );
  expect((await topicItem()).pu).toBe(MAX - 1);
}, 120_000);

describe(`push groups per topic: at most ${MAX}`, () => {
  it('takes the last one; the item at the maximum stays far below 400 KB and the topic still delivers', async () => {
    const { group: last } = await h.admin.putGroup(nameOf(MAX - 1), pushGroup('orders'));
    expect(last.push).toMatchObject(hook);
    const item = await topicItem();
    expect(item.pu).toBe(MAX);
    expect(item.pg).toHaveLength(MAX);
    // A consistent read is billed 1 RRU per 4 KB: ≤ 34 RRU is ≤ 136 KB (128,000 bytes of names).
    expect(item.rru).toBeGreaterThanOrEqual(31);
    expect(item.rru).toBeLessThanOrEqual(34);
    // Sends read and flag the topic as before.
    const sent = await h.queue.send('orders', send('still works'));
    const got = await h.queue.receive('pull', { maxMessages: 10, waitSeconds: 0 });
    expect(got.map((m) => m.messageId)).toEqual([sent.messageId]);
  });

  it('refuses the next one with 409 TooManyPushGroups and changes nothing', async () => {
    const next = nameOf(MAX);
    const error = await refusal(h.admin.putGroup(next, pushGroup(['refunds', 'orders'], 'refused-dlq')));
    const { problem } = toProblem(error);
    expect(problem).toMatchObject({ status: 409, code: 'TooManyPushGroups', errors: [{ path: 'subscriptions/1/topic', message: `has ${MAX} push groups already` }] });
    expect(problem.detail).toContain(`Topic 'orders' already has ${MAX} push groups`);
    expect(await groupItem(next)).toBeUndefined();
    const cursors = await h.doc.send(new QueryCommand({ TableName: h.table, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': cursorPk(next) } }));
    expect(cursors.Items).toEqual([]);
    expect(await h.stores.catalog.getTopic('refused-dlq')).toBeUndefined();
    expect((await h.stores.catalog.getTopic('refunds'))?.pushSubscriptions).toBeUndefined();

    // A pull group of the topic cannot become a push group either.
    await refusal(h.admin.patchGroup('pull', { push: hook }));
    expect((await h.admin.getGroup('pull')).push).toBeNull();
    expect((await topicItem()).pu).toBe(MAX);
  });

  it('keeps the bound in the save transaction itself (a save that read an older count)', async () => {
    const stale = nameOf(MAX + 1);
    const save = h.stores.catalog.putGroup(
      catalogGroup(stale, { deadLetterTopic: 'orders-dlq', push: { target: hook, batchSize: 1, timeoutSeconds: 10, maxConcurrency: 10 } }),
      h.clock.now(),
      'absent',
      [],
      { pushCounts: new Map([['orders', 1]]) },
    );
    expect((await refusal(save)).topic).toBe('orders');
    expect(await groupItem(stale)).toBeUndefined();
    expect((await topicItem()).pu).toBe(MAX);
  });

  it('admits one again once one is deleted', async () => {
    await h.admin.deleteGroup(nameOf(500));
    expect((await topicItem()).pu).toBe(MAX - 1);
    const { group: admitted } = await h.admin.putGroup(nameOf(MAX), pushGroup('orders'));
    expect(admitted.push).toMatchObject(hook);
    const item = await topicItem();
    expect(item.pu).toBe(MAX);
    expect(item.pg).toContain(nameOf(MAX));
    expect(item.pg).not.toContain(nameOf(500));
    await refusal(h.admin.putGroup(nameOf(MAX + 2), pushGroup('orders')));
  });
});
