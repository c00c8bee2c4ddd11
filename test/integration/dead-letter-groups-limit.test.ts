/**
 * Groups per dead-letter topic are bounded by construction (docs/design.md, Limits by construction):
 * the topic item names the groups that use it as their dead-letter topic (`dg`, so that it never
 * becomes FIFO under them), so a topic takes at most `Limits.deadLetterGroupsPerTopicMax` of them.
 * Driven at the maximum on DynamoDB Local with the longest names, on a topic item that also carries
 * its other lists at their maximum (1,000 push group names in `pg`, 1,000 parked groups in `wb` with
 * ms times, 256 partitions' `gs` and `pw` with the widest sequence numbers):
 * 498 groups are cloned from one saved through the service (a save each would take minutes), the
 * 500th is saved through the service.
 */
import { GetCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { TooManyDeadLetterGroupsError } from '../../lib/domain/errors.js';
import { Limits } from '../../lib/domain/model.js';
import { PushLimits } from '../../lib/domain/push.js';
import { DoorbellLimits } from '../../lib/domain/doorbell-limits.js';
import { toProblem } from '../../lib/http/problem.js';
import { TOPIC_PK, cursorPk } from '../../lib/adapters/dynamodb/keys.js';
import { newHarness, send, type Harness } from '../helpers/stores.js';
import { catalogGroup, cloneGroups, groupItem as storedGroup, refusalOf } from '../helpers/cloned-groups.js';
import { group, topic } from '../helpers/builders.js';

const MAX = Limits.deadLetterGroupsPerTopicMax;
const DLT = 'shared-dlq';
/** The longest names NAME_PATTERN allows: the topic item's worst case. */
const nameOf = (i: number, prefix = 'g') => `${prefix}${String(i).padStart(4, '0')}-`.padEnd(Limits.nameMaxLength, 'x');
const pullGroup = () => group('orders', { deadLetterTopic: DLT });
let h: Harness;

const topicItem = async () => {
  const read = await h.doc.send(new GetCommand({ TableName: h.table, Key: { pk: TOPIC_PK, sk: DLT }, ConsistentRead: true, ReturnConsumedCapacity: 'TOTAL' }));
  const item = read.Item ?? {};
  return { dg: [...((item.dg as Set<string> | undefined) ?? [])], rru: read.ConsumedCapacity?.CapacityUnits ?? 0 };
};
const groupItem = (name: string) => storedGroup(h, name);
const refusal = (promise: Promise<unknown>) => refusalOf(promise, TooManyDeadLetterGroupsError);

beforeAll(async () => {
  h = await newHarness();
  await h.admin.putTopic('orders', topic());
  // The dead-letter topic at its widest: 256 partitions, and its other lists full.
  await h.admin.putTopic(DLT, topic({ partitions: Limits.partitionsMax }));
  const pushNames = Array.from({ length: PushLimits.pushGroupsPerTopicMax }, (_, i) => nameOf(i, 'p'));
  // A generation start and a purge start per partition, each the widest a sequence number gets.
  const widest = Array.from({ length: Limits.partitionsMax }, () => Number.MAX_SAFE_INTEGER);
  const parked = Object.fromEntries(Array.from({ length: DoorbellLimits.parkedGroupsPerTopicMax }, (_, i) => [nameOf(i, 'w'), 9_999_999_999_999]));
  await h.doc.send(
    new UpdateCommand({
      TableName: h.table,
      Key: { pk: TOPIC_PK, sk: DLT },
      UpdateExpression: 'SET pu = :n, pg = :pg, wb = :wb, wu = :wu, gs = :wide, pw = :wide, pa = :at',
      ExpressionAttributeValues: { ':n': pushNames.length, ':pg': new Set(pushNames), ':wb': parked, ':wu': 9_999_999_999_999, ':wide': widest, ':at': 9_999_999_999_999 },
    }),
  );
  await h.admin.putGroup(nameOf(0), pullGroup());
  // Groups 1–498: copies of group 0's stored item under other names, and their names in `dg`.
  const names = Array.from({ length: MAX - 2 }, (_, i) => nameOf(i + 1));
  await cloneGroups(h, (await groupItem(nameOf(0)))!, names);
  await h.doc.send(
    new UpdateCommand({ TableName: h.table, Key: { pk: TOPIC_PK, sk: DLT }, UpdateExpression: 'ADD dg :names', ExpressionAttributeValues: { ':names': new Set(names) } }),
  );
  expect((await topicItem()).dg).toHaveLength(MAX - 1);
}, 120_000);

describe(`groups per dead-letter topic: at most ${MAX}`, () => {
  it('takes the last one; the item with every list at its maximum stays below 400 KB, and a member saves again', async () => {
    const { group: last } = await h.admin.putGroup(nameOf(MAX - 1), pullGroup());
    expect(last.deadLetterTopic).toBe(DLT);
    const item = await topicItem();
    expect(item.dg).toHaveLength(MAX);
    // A consistent read is billed 1 RRU per 4 KB: 64,000 B of `dg` names + 128,000 of `pg` +
    // ~143,000 of `wb` + 2 × 256 sequence numbers + the rest: 82 RRU measured (≤ 336 KB of the 400 KB).
    expect(item.rru).toBeGreaterThanOrEqual(80);
    expect(item.rru).toBeLessThanOrEqual(88);
    // A group that names it already saves again (it is one of the most).
    await h.admin.patchGroup(nameOf(0), { maxDeliveries: 4 });
    expect((await h.admin.getGroup(nameOf(0))).maxDeliveries).toBe(4);
    // The topic still takes messages.
    await h.queue.send(DLT, send('still works'));
  });

  it('refuses the next one with 409 TooManyDeadLetterGroups and writes nothing', async () => {
    const next = nameOf(MAX);
    const error = await refusal(h.admin.putGroup(next, pullGroup()));
    const { problem } = toProblem(error);
    expect(problem).toMatchObject({ status: 409, code: 'TooManyDeadLetterGroups', errors: [{ path: 'deadLetterTopic', message: `is the dead-letter topic of ${MAX} groups already` }] });
    expect(problem.detail).toContain(`Topic '${DLT}' is the dead-letter topic of ${MAX} groups already`);
    expect(await groupItem(next)).toBeUndefined();
    const cursors = await h.doc.send(new QueryCommand({ TableName: h.table, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': cursorPk(next) } }));
    expect(cursors.Items).toEqual([]);
    // An existing group cannot move to it either.
    await h.admin.putGroup('elsewhere', group('orders'));
    await refusal(h.admin.patchGroup('elsewhere', { deadLetterTopic: DLT }));
    expect((await h.admin.getGroup('elsewhere')).deadLetterTopic).toBe('elsewhere-dlq');
    expect((await topicItem()).dg).toHaveLength(MAX);
  });

  it('keeps the bound in the save transaction itself (a save that read an older list)', async () => {
    const stale = nameOf(MAX + 1);
    const save = h.stores.catalog.putGroup(catalogGroup(stale, { deadLetterTopic: DLT }), h.clock.now(),
      'absent',
    );
    expect((await refusal(save)).topic).toBe(DLT);
    expect(await groupItem(stale)).toBeUndefined();
    expect((await topicItem()).dg).toHaveLength(MAX);
  });

  it('admits one again once one is deleted or names another topic', async () => {
    await h.admin.deleteGroup(nameOf(MAX - 1));
    await h.admin.putGroup(nameOf(MAX), pullGroup());
    await h.admin.patchGroup(nameOf(1), { deadLetterTopic: 'other-dlq' });
    await h.admin.patchGroup('elsewhere', { deadLetterTopic: DLT });
    const item = await topicItem();
    expect(item.dg).toHaveLength(MAX);
    expect(item.dg).toContain(nameOf(MAX));
    expect(item.dg).toContain('elsewhere');
    expect(item.dg).not.toContain(nameOf(1));
  });
});
