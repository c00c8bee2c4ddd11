/**
 * A group save or delete changes every topic item it touches in one transaction (a push group
 * replacing its 20 subscriptions: 40 and its dead-letter topics), and a topic item with its lists
 * full takes ≈ 358 KB, where DynamoDB takes 4 MB a transaction — a bound DynamoDB Local does not
 * enforce, so `guardTransactionSize` enforces it here as DynamoDB does (docs/design.md, "A group
 * save's transaction within 4 MB"). Driven with 17 topics whose `pg` and `wb` are nearly full and
 * 128-character names: the unbounded save would send ≈ 4.7 MB (500 on AWS).
 */
import { GetCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { createDynamoClients } from '../../lib/adapters/dynamodb/client.js';
import { itemBytes } from '../../lib/adapters/dynamodb/item-size.js';
import { TOPIC_PK, cursorPk } from '../../lib/adapters/dynamodb/keys.js';
import { TOPIC_ITEMS_AT_WORST, TOPIC_ITEM_MAX_BYTES, TOPIC_ITEM_REST_MAX_BYTES, listCountsOf, topicItemBoundBytes, topicItemBoundFromRead } from '../../lib/adapters/dynamodb/topic-item-bound.js';
import { DoorbellLimits } from '../../lib/domain/doorbell-limits.js';
import { TopicItemsTooLargeError } from '../../lib/domain/errors.js';
import { Limits } from '../../lib/domain/model.js';
import { PushLimits } from '../../lib/domain/push.js';
import { toProblem } from '../../lib/http/problem.js';
import { group, topic } from '../helpers/builders.js';
import { refusalOf } from '../helpers/cloned-groups.js';
import { harness, testTable, type Harness } from '../helpers/stores.js';
import { DYNAMODB_TRANSACTION_BYTES, guardTransactionSize, type TransactionSizeGuard } from '../helpers/transaction-size-guard.js';

/** The longest names NAME_PATTERN allows. */
const nameOf = (i: number, prefix: string) => `${prefix}${String(i).padStart(4, '0')}-`.padEnd(Limits.nameMaxLength, 'x');
const TOPICS = 17;
/** 20 topics whose lists grow long with short names. */
const shortLists = Array.from({ length: 20 }, (_, i) => `short${String(i).padStart(2, '0')}`);
const topicNames = (prefix: string) => Array.from({ length: TOPICS }, (_, i) => `${prefix}${String(i).padStart(2, '0')}`);
let h: Harness;
let client: DynamoDBClient;
let guard: TransactionSizeGuard;
const transactions = { sent: 0, failed: 0 };
/** Run once before the next transaction is sent (a concurrent writer between a save's read and its write). */
let beforeNextTransaction: (() => Promise<void>) | undefined;

/** Fills a topic item's `pg` with `pushGroups` names (and `pu`) and `wb` with `parked` entries (names as `name` makes them). */
const fillLists = async (name: string, pushGroups: number, parked: number, keep: readonly string[] = [], named = nameOf) => {
  const pg = new Set([...keep, ...Array.from({ length: pushGroups - keep.length }, (_, i) => named(i, 'p'))]);
  const wb = Object.fromEntries(Array.from({ length: parked }, (_, i) => [named(i, 'w'), 9_999_999_999_999]));
  await h.doc.send(
    new UpdateCommand({ TableName: h.table, Key: { pk: TOPIC_PK, sk: name }, UpdateExpression: 'SET pu = :n, pg = :pg, wb = :wb', ExpressionAttributeValues: { ':n': pg.size, ':pg': pg, ':wb': wb } }),
  );
};
const storedTopic = async (name: string) => (await h.doc.send(new GetCommand({ TableName: h.table, Key: { pk: TOPIC_PK, sk: name }, ConsistentRead: true }))).Item;
const cursorCount = async (groupName: string) =>
  (await h.doc.send(new QueryCommand({ TableName: h.table, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': cursorPk(groupName) }, Select: 'COUNT' }))).Count ?? 0;

beforeAll(async () => {
  const table = await testTable();
  client = table.client;
  guard = guardTransactionSize(client, createDynamoClients({ endpoint: table.endpoint, requestTimeoutMs: 10_000 }).client);
  client.middlewareStack.add(
    (next, context) => async (args) => {
      if (context.commandName !== 'TransactWriteItemsCommand') return next(args);
      const before = beforeNextTransaction;
      beforeNextTransaction = undefined;
      await before?.();
      transactions.sent++;
      try {
        return await next(args);
      } catch (error) {
        transactions.failed++;
        throw error;
      }
    },
    { step: 'initialize', name: 'transactionCounter' },
  );
  h = harness(table.doc, table.table);
  for (const name of [...topicNames('full'), ...topicNames('small'), ...topicNames('hook'), ...shortLists]) await h.admin.putTopic(name, topic({ partitions: 1 }));
  // 999 push groups and 1,000 parked groups of 128-character names on each `full` topic: ≈ 278 KB an item.
  for (const name of topicNames('full')) await fillLists(name, PushLimits.pushGroupsPerTopicMax - 1, DoorbellLimits.parkedGroupsPerTopicMax);
}, 120_000);

describe('a topic item\'s size, bounded by its lists', () => {
  it('holds for the widest topic item: 256 partitions, every list at its maximum, every name 128 characters', async () => {
    await h.admin.putTopic('widest', topic({ partitions: Limits.partitionsMax }));
    await fillLists('widest', PushLimits.pushGroupsPerTopicMax, DoorbellLimits.parkedGroupsPerTopicMax);
    const widest = Array.from({ length: Limits.partitionsMax }, () => Number.MAX_SAFE_INTEGER);
    const dg = new Set(Array.from({ length: Limits.deadLetterGroupsPerTopicMax }, (_, i) => nameOf(i, 'd')));
    await h.doc.send(
      new UpdateCommand({ TableName: h.table, Key: { pk: TOPIC_PK, sk: 'widest' }, UpdateExpression: 'SET gs = :w, pw = :w, dg = :dg, wu = :at, pa = :at', ExpressionAttributeValues: { ':w': widest, ':dg': dg, ':at': 9_999_999_999_999 } }),
    );
    const item = (await storedTopic('widest'))!;
    const bytes = itemBytes(item);
    expect(listCountsOf(item)).toEqual({ pushGroups: 1000, parked: 1000, deadLetterGroups: 500 });
    const { pg: _pg, wb: _wb, dg: _dg, ...rest } = item;
    expect(itemBytes(rest)).toBeLessThanOrEqual(TOPIC_ITEM_REST_MAX_BYTES);
    expect(bytes).toBeLessThanOrEqual(topicItemBoundBytes(listCountsOf(item)));
    expect(bytes).toBeLessThanOrEqual(topicItemBoundFromRead(item, {}));
    expect(topicItemBoundBytes(listCountsOf(item))).toBe(TOPIC_ITEM_MAX_BYTES);
    // Within 10% of the widest item (a parked entry's number is counted at 21 B, here 8).
    expect(bytes / TOPIC_ITEM_MAX_BYTES).toBeGreaterThan(0.9);
    expect(TOPIC_ITEMS_AT_WORST).toBe(9);
  });
});

describe('a group save within one transaction\'s 4 MB', () => {
  it('refuses, before any write, a save whose 18 topic items may pass it: 409 TopicItemsTooLarge, no group, cursor or dead-letter topic', async () => {
    const sentBefore = transactions.sent;
    const refusedBefore = guard.refused;
    const error = await refusalOf(h.admin.putGroup('wide', group(topicNames('full'))), TopicItemsTooLargeError);
    expect(error.message).toContain(`changes ${TOPICS + 1} topic items`);
    const { problem } = toProblem(error);
    expect(problem.status).toBe(409);
    expect(problem.code).toBe('TopicItemsTooLarge');
    expect(transactions.sent).toBe(sentBefore);
    expect(await h.stores.catalog.getGroup('wide')).toBeUndefined();
    expect(await cursorCount('wide')).toBe(0);
    expect(await storedTopic('wide-dlq')).toBeUndefined();
    expect(guard.refused).toBe(refusedBefore);
  });

  it('the catalog refuses such a save at its transaction too (lists grown after the service\'s check)', async () => {
    const sentBefore = transactions.sent;
    const subscribed = [...(await h.stores.catalog.getTopics(topicNames('full'))).values()];
    const error = await refusalOf(
      h.stores.catalog.putGroup(
        { name: 'direct', subscriptions: topicNames('full').map((topic) => ({ topic, tags: undefined })), deliveryMode: 'concurrent', visibilityTimeoutSeconds: 30, maxDeliveries: 5, retryPolicy: { initialSeconds: 1, multiplier: 2, maxSeconds: 600 }, deadLetterTopic: 'direct-dlq', push: undefined },
        h.clock.now(),
        'absent',
        subscribed,
      ),
      TopicItemsTooLargeError,
    );
    expect(error.message).toContain('the group was not saved');
    expect(transactions.sent).toBe(sentBefore);
    expect(await h.stores.catalog.getGroup('direct')).toBeUndefined();
  });

  it('takes the same subscriptions in two steps, each transaction within 4 MB', async () => {
    const names = topicNames('full');
    const refusedBefore = guard.refused;
    guard.largest = 0;
    await h.admin.putGroup('wide', group(names.slice(0, 8)));
    // 9 newly subscribed topics and the dead-letter topic: 10 items, read and pinned, ≈ 3.1 MB counted:
    // 9 × ≈ 302 KB (≈ 265 KB of lists, 16 KB for the rest, 21 B a parked entry's value) + the group at 400 KB.
    const { group: saved } = await h.admin.patchGroup('wide', { subscriptions: names.map((topic) => ({ topic, tags: undefined })) });
    expect(saved.subscriptions.map((s) => s.topic)).toEqual(names);
    expect(await cursorCount('wide')).toBe(TOPICS);
    expect(guard.refused).toBe(refusedBefore);
    expect(guard.largest).toBeGreaterThan(2_000_000);
    expect(guard.largest).toBeLessThanOrEqual(DYNAMODB_TRANSACTION_BYTES);
  });

  it('switches a pull group of 20 subscriptions to push over topics with long lists of short names (counted as read, not at 128 B a name)', async () => {
    const named = (i: number, prefix: string) => `${prefix}${i}`;
    const refusedBefore = guard.refused;
    await h.admin.putGroup('switch', group(shortLists));
    // 300 push groups and 800 parked groups on each: ≈ 11 KB of lists, ≈ 174 KB each counted at 128 B a name.
    for (const name of shortLists) await fillLists(name, 300, 800, [], named);
    const sentBefore = transactions.sent;
    const { group: saved } = await h.admin.patchGroup('switch', { push: { url: 'http://127.0.0.1:9/hook' } });
    expect(saved.push).toBeDefined();
    expect(transactions.sent - sentBefore).toBe(1);
    expect(guard.refused).toBe(refusedBefore);
    for (const name of shortLists) expect((await storedTopic(name))?.pg.has('switch')).toBe(true);
  });

  it('saves 17 subscriptions to topics with short lists at once', async () => {
    const sentBefore = transactions.sent;
    const { group: saved } = await h.admin.putGroup('many', group(topicNames('small')));
    expect(saved.subscriptions).toHaveLength(TOPICS);
    expect(transactions.sent - sentBefore).toBe(1);
  });

  it('a list grown between the read and the write fails the transaction (pinned), and the save reads again', async () => {
    const before = { ...transactions };
    // A group parks on one of the topics after the save read them: its `wb` is one entry longer.
    beforeNextTransaction = async () => {
      await h.doc.send(
        new UpdateCommand({ TableName: h.table, Key: { pk: TOPIC_PK, sk: 'small03' }, UpdateExpression: 'SET wb = :wb', ExpressionAttributeValues: { ':wb': { latecomer: 9_999_999_999_999 } } }),
      );
    };
    const { group: saved } = await h.admin.putGroup('many-too', group(topicNames('small')));
    expect(saved.subscriptions).toHaveLength(TOPICS);
    expect(transactions.sent - before.sent).toBe(2);
    expect(transactions.failed - before.failed).toBe(1);
  });
});

describe('a group delete within one transaction\'s 4 MB', () => {
  it('refuses a push group\'s delete whose 18 topic items may pass it; after a PATCH that drops 8 subscriptions it deletes', async () => {
    const names = topicNames('hook');
    await h.admin.putGroup('hooks', group(names, { push: { url: 'http://127.0.0.1:9/hook' } }));
    // Its topics fill up afterwards: 999 push groups (itself among them) and 1,000 parked groups each.
    for (const name of names) await fillLists(name, PushLimits.pushGroupsPerTopicMax - 1, DoorbellLimits.parkedGroupsPerTopicMax, ['hooks']);
    const refusedBefore = guard.refused;
    guard.largest = 0;
    const error = await refusalOf(h.admin.deleteGroup('hooks'), TopicItemsTooLargeError);
    expect(toProblem(error).problem.status).toBe(409);
    expect(error.message).toContain('Remove some of its subscriptions first');
    expect(await h.stores.catalog.getGroup('hooks')).toBeDefined();
    await h.admin.patchGroup('hooks', { subscriptions: names.slice(0, 9).map((topic) => ({ topic, tags: undefined })) });
    await h.admin.deleteGroup('hooks');
    expect(await h.stores.catalog.getGroup('hooks')).toBeUndefined();
    for (const name of names) expect((await storedTopic(name))?.pg.has('hooks')).toBe(false);
    expect(guard.refused).toBe(refusedBefore);
    expect(guard.largest).toBeLessThanOrEqual(DYNAMODB_TRANSACTION_BYTES);
  });
});
