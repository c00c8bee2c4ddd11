/** Deleting and re-creating consumer groups (issue 17 item 5) on DynamoDB Local. */
import { beforeEach, describe, expect, it } from 'vitest';
import { ConflictError, GroupNotFoundError, InvalidArgumentError } from '../../lib/domain/errors.js';
import { DeleteCommand, GetCommand } from '@aws-sdk/lib-dynamodb';
import { cursorPk, TOPIC_PK } from '../../lib/adapters/dynamodb/keys.js';
import { queryAll } from '../../lib/adapters/dynamodb/call.js';
import { streamId } from '../../lib/domain/streams.js';
import { newHarness, send, type Harness } from '../helpers/stores.js';
import { group, topic } from '../helpers/builders.js';

let h: Harness;

beforeEach(async () => {
  h = await newHarness();
  await h.admin.putTopic('orders', topic());
  await h.admin.putGroup('billing', group('orders', { visibilityTimeoutSeconds: 30, maxDeliveries: 3 }));
});

const receive = (max = 10, name = 'billing') => h.queue.receive(name, { maxMessages: max, waitSeconds: 0 });
const cursorItems = (name: string) =>
  queryAll(h.doc, { TableName: h.table, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': cursorPk(name) } });

describe('DELETE group', () => {
  it('ends leases in flight: later commits and visibility changes answer GroupNotFound; cursors are gone; the DLQ stays', async () => {
    for (const body of ['a', 'b', 'c']) await h.queue.send('orders', send(body));
    const leased = await receive(2);
    expect(leased).toHaveLength(2);
    expect(await cursorItems('billing')).toHaveLength(4);

    const result = await h.admin.deleteGroup('billing');
    expect(result.cursorsRemoved).toBe(4);
    expect(await cursorItems('billing')).toEqual([]);

    await expect(h.queue.commit('billing', [leased[0]!.receiptHandle])).rejects.toBeInstanceOf(GroupNotFoundError);
    await expect(h.queue.changeVisibility('billing', leased[1]!.receiptHandle, 0)).rejects.toBeInstanceOf(GroupNotFoundError);
    await expect(receive()).rejects.toBeInstanceOf(GroupNotFoundError);
    await expect(h.admin.getGroup('billing')).rejects.toBeInstanceOf(GroupNotFoundError);
    await expect(h.admin.deleteGroup('billing')).rejects.toBeInstanceOf(GroupNotFoundError);
    expect((await h.admin.listGroups(100, undefined)).groups.map((g) => g.name)).toEqual([]);
    expect((await h.admin.getTopic('orders')).subscribers).toEqual([]);
    expect((await h.admin.getTopic('billing-dlq')).name).toBe('billing-dlq');
    // The message query no longer names the deleted group.
    expect((await h.queue.getMessage('orders', leased[0]!.messageId)).groups).toEqual([]);
  });

  it('leaves the topic’s other groups alone', async () => {
    await h.admin.putGroup('audit', group('orders'));
    await h.queue.send('orders', send('x'));
    await receive(1);
    await h.admin.deleteGroup('billing');
    const [message] = await receive(1, 'audit');
    expect(message).toMatchObject({ body: 'x', deliveryCount: 1 });
    expect(await h.queue.commit('audit', [message!.receiptHandle])).toMatchObject([{ status: 'committed' }]);
    expect((await h.admin.getGroup('audit')).committed).toBe(1);
  });

  it('a group re-created under the same name starts at latest, with no lease or count of the old one', async () => {
    await h.queue.send('orders', send('old'));
    const [old] = await receive(1);
    await h.admin.deleteGroup('billing');
    await h.queue.send('orders', send('between'));
    h.clock.advance(1);
    const { created } = await h.admin.putGroup('billing', group('orders', { visibilityTimeoutSeconds: 30 }));
    expect(created).toBe(true);
    await h.queue.send('orders', send('new'));
    h.clock.advance(60_000); // the old lease would have expired: it must not come back
    const got = await receive();
    expect(got.map((m) => [m.body, m.deliveryCount])).toEqual([['new', 1]]);
    // The old handle names a lease of the deleted group: it commits nothing.
    const [stale] = await h.queue.commit('billing', [old!.receiptHandle]);
    expect(stale && 'error' in stale).toBe(true);
    expect(await h.admin.getGroup('billing')).toMatchObject({ inFlight: 1, backlog: 0, committed: 0, deadLettered: 0 });
  });

  it('removes cursors a stale container created after the deletion when the group is created again', async () => {
    await h.admin.deleteGroup('billing');
    // What a container still holding the group in its catalog cache could write: a FIFO shard cursor.
    await h.stores.cursors.createIfAbsent('billing', 't:orders/k:stray', 7, h.clock.now());
    expect(await cursorItems('billing')).toHaveLength(1);
    h.clock.advance(1);
    await h.admin.putGroup('billing', group('orders'));
    const orders = await h.stores.catalog.getTopic('orders');
    expect((await cursorItems('billing')).map((c) => c.sk).sort()).toEqual(
      [0, 1, 2, 3].map((partition) => streamId(orders!, { kind: 'partition', partition })).sort(),
    );
  });

  it('deletes a FIFO group’s shard cursors and their ready-index entries', async () => {
    await h.admin.putTopic('ledger', topic({ type: 'fifo' }));
    await h.admin.putGroup('posting', group('ledger'));
    for (const shardKey of ['a', 'b', 'c']) await h.queue.send('ledger', send(shardKey, { shardKey }));
    const got = await receive(10, 'posting');
    expect(got).toHaveLength(3);
    expect((await cursorItems('posting')).length).toBe(4 + 3);
    expect((await h.admin.deleteGroup('posting')).cursorsRemoved).toBe(7);
    expect(await cursorItems('posting')).toEqual([]);
    expect(await h.stores.readyIndex.ready('posting', h.clock.now() + 3_600_000, 100)).toEqual([]);
  });

  it('refuses a bad page token of the group listing', async () => {
    await expect(h.admin.listGroups(10, 'bm9wZQ')).rejects.toBeInstanceOf(InvalidArgumentError);
  });
});

describe('a dead-letter topic stays a standard topic', () => {
  it('refuses a FIFO topic as a group\'s dead-letter topic, and a FIFO topic under a dead-letter topic\'s name; nothing written', async () => {
    // Dead-letter copies go to partition streams: on a FIFO topic no receive or look-up would find them.
    await h.admin.putTopic('ledger', topic({ type: 'fifo' }));
    await expect(h.admin.putGroup('audit', group('orders', { deadLetterTopic: 'ledger' }))).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(h.admin.patchGroup('billing', { deadLetterTopic: 'ledger' })).rejects.toBeInstanceOf(InvalidArgumentError);
    expect(await h.stores.catalog.getGroup('audit')).toBeFalsy();
    expect((await h.stores.catalog.getGroup('billing'))?.deadLetterTopic).toBe('billing-dlq');
    // The other way round: the dead-letter topic deleted, a FIFO topic of its name is refused.
    await h.admin.deleteTopic('billing-dlq');
    h.clock.advance(h.stores.catalog.recreateAfterMs + 1);
    await expect(h.admin.putTopic('billing-dlq', topic({ type: 'fifo' }))).rejects.toBeInstanceOf(ConflictError);
    expect(await h.stores.catalog.getTopic('billing-dlq')).toBeFalsy();
    await h.admin.putTopic('billing-dlq', topic());
    expect((await h.stores.catalog.getTopic('billing-dlq'))?.type).toBe('standard');
  });

  const namedBy = async (name: string) => {
    const { Item } = await h.doc.send(new GetCommand({ TableName: h.table, Key: { pk: TOPIC_PK, sk: name } }));
    return [...((Item?.dg as Set<string> | undefined) ?? [])].sort();
  };

  it('the dead-letter topic item names the groups that use it: saves add and move the name, a delete takes it out', async () => {
    expect(await namedBy('billing-dlq')).toEqual(['billing']);
    await h.admin.putGroup('audit', group('orders', { deadLetterTopic: 'billing-dlq' }));
    expect(await namedBy('billing-dlq')).toEqual(['audit', 'billing']);
    await h.admin.patchGroup('audit', { deadLetterTopic: 'audit-dead' });
    expect(await namedBy('billing-dlq')).toEqual(['billing']);
    expect(await namedBy('audit-dead')).toEqual(['audit']);
    await h.admin.patchGroup('audit', { maxDeliveries: 4 });
    expect(await namedBy('audit-dead')).toEqual(['audit']);
    await h.admin.deleteGroup('audit');
    expect(await namedBy('audit-dead')).toEqual([]);
    // Nobody names it any more: deleted, it may come back as a FIFO topic.
    await h.admin.deleteTopic('audit-dead');
    h.clock.advance(h.stores.catalog.recreateAfterMs + 1);
    await h.admin.putTopic('audit-dead', topic({ type: 'fifo' }));
    expect((await h.stores.catalog.getTopic('audit-dead'))?.type).toBe('fifo');
  });

  it('a save that touches one topic item for two reasons writes it once: subscribing to the old dead-letter topic, naming a push topic it leaves', async () => {
    // PATCH: the dead-letter topic moves from billing-dlq to ledger-dlq, and billing-dlq becomes a subscription.
    const { group: moved } = await h.admin.patchGroup('billing', { deadLetterTopic: 'ledger-dlq', subscriptions: [{ topic: 'orders', tags: undefined }, { topic: 'billing-dlq', tags: undefined }] });
    expect(moved.deadLetterTopic).toBe('ledger-dlq');
    expect(moved.subscriptions.map((s) => s.topic)).toEqual(['orders', 'billing-dlq']);
    expect(await namedBy('billing-dlq')).toEqual([]);
    expect(await namedBy('ledger-dlq')).toEqual(['billing']);
    // A push group leaves topic 'audit' and names it as its dead-letter topic in the same save.
    await h.admin.putTopic('audit', topic());
    await h.admin.putGroup('hooks', group(['orders', 'audit'], { push: { url: 'http://127.0.0.1:9/hook' } }));
    expect((await h.stores.catalog.getTopic('audit'))?.pushSubscriptions).toBe(1);
    const { group: pushed } = await h.admin.patchGroup('hooks', { subscriptions: [{ topic: 'orders', tags: undefined }], deadLetterTopic: 'audit' });
    expect(pushed.deadLetterTopic).toBe('audit');
    expect((await h.stores.catalog.getTopic('audit'))?.pushSubscriptions).toBe(0);
    expect(await namedBy('audit')).toEqual(['hooks']);
  });

  it('a group whose dead-letter topic has no item (a table edited by hand) still moves to another one and is deleted', async () => {
    const gone = () => h.doc.send(new DeleteCommand({ TableName: h.table, Key: { pk: TOPIC_PK, sk: 'billing-dlq' } }));
    await gone();
    await h.admin.patchGroup('billing', { deadLetterTopic: 'ledger-dlq' });
    expect((await h.admin.getGroup('billing')).deadLetterTopic).toBe('ledger-dlq');
    await h.admin.putGroup('audit', group('orders', { deadLetterTopic: 'audit-dead' }));
    await h.doc.send(new DeleteCommand({ TableName: h.table, Key: { pk: TOPIC_PK, sk: 'audit-dead' } }));
    await h.admin.deleteGroup('audit');
    await expect(h.admin.getGroup('audit')).rejects.toBeInstanceOf(GroupNotFoundError);
    // No bare topic item was written in their place.
    const { Item } = await h.doc.send(new GetCommand({ TableName: h.table, Key: { pk: TOPIC_PK, sk: 'audit-dead' } }));
    expect(Item).toBeUndefined();
  });

  it('a group save whose create of its dead-letter topic meets a FIFO topic created meanwhile answers the 400', async () => {
    // The save read 'ledger' absent; a FIFO PUT creates it before the save's create (which then meets another shape).
    const catalog = h.stores.catalog;
    const putTopic = catalog.putTopic.bind(catalog);
    let raced = false;
    catalog.putTopic = async (spec, ...rest) => {
      if (!raced && spec.name === 'ledger' && spec.type === 'standard') {
        raced = true;
        await putTopic({ ...spec, type: 'fifo' }, ...rest);
      }
      return putTopic(spec, ...rest);
    };
    await expect(h.admin.putGroup('audit', group('orders', { deadLetterTopic: 'ledger' }))).rejects.toMatchObject({
      code: 'InvalidArgument',
      issues: [{ path: 'deadLetterTopic', message: 'names a FIFO topic' }],
    });
    expect(raced).toBe(true);
    expect(await catalog.getGroup('audit')).toBeFalsy();
  });

  it('a group save racing a FIFO topic PUT of its dead-letter topic: the topic is created FIFO after the save checked it, and the save is refused', async () => {
    // The save found 'ledger' absent and created it standard; before its write, the topic is deleted
    // and created again as FIFO (a FIFO PUT's check reads every group: none names it yet).
    const catalog = h.stores.catalog;
    const putGroup = catalog.putGroup.bind(catalog);
    let raced = false;
    catalog.putGroup = async (...args) => {
      if (!raced) {
        raced = true;
        await catalog.deleteTopic('ledger', h.clock.now());
        h.clock.advance(catalog.recreateAfterMs + 1);
        await h.admin.putTopic('ledger', topic({ type: 'fifo' }));
      }
      return putGroup(...args);
    };
    await expect(h.admin.putGroup('audit', group('orders', { deadLetterTopic: 'ledger' }))).rejects.toMatchObject({
      code: 'InvalidArgument',
      issues: [{ path: 'deadLetterTopic', message: 'names a FIFO topic' }],
    });
    expect(raced).toBe(true);
    expect(await catalog.getGroup('audit')).toBeFalsy();
    expect((await catalog.getTopic('ledger'))?.type).toBe('fifo');
    expect(await namedBy('ledger')).toEqual([]);
  });

  it('a FIFO topic PUT racing a group save: the group named the topic after the PUT read every group, and the topic is refused', async () => {
    // 'ledger' is a deleted standard topic; the FIFO PUT reads every group (none names it), then a
    // group names it (created standard again) and the topic is deleted again before the PUT writes.
    await h.admin.putTopic('ledger', topic());
    await h.admin.deleteTopic('ledger');
    h.clock.advance(h.stores.catalog.recreateAfterMs + 1);
    const catalog = h.stores.catalog;
    const allGroups = catalog.allGroups.bind(catalog);
    catalog.allGroups = async () => {
      const read = await allGroups();
      await h.admin.putGroup('audit', group('orders', { deadLetterTopic: 'ledger' }));
      await catalog.deleteTopic('ledger', h.clock.now());
      h.clock.advance(catalog.recreateAfterMs + 1);
      return read;
    };
    await expect(h.admin.putTopic('ledger', topic({ type: 'fifo' }))).rejects.toMatchObject({
      message: "Topic 'ledger' is the dead-letter topic of group 'audit': it must stay a standard topic.",
    });
    expect(await catalog.getTopic('ledger')).toBeFalsy();
    expect((await catalog.getGroup('audit'))?.deadLetterTopic).toBe('ledger');
    expect(await namedBy('ledger')).toEqual(['audit']);
  });
});

describe('PATCH group and topic', () => {
  it('changes only the given group settings; PUT replaces them', async () => {
    await h.admin.putGroup('billing', group('orders', { visibilityTimeoutSeconds: 45, maxDeliveries: 7, deliveryMode: 'concurrent' }));
    const { group: patched } = await h.admin.patchGroup('billing', { maxDeliveries: 9 });
    expect(patched).toMatchObject({ visibilityTimeoutSeconds: 45, maxDeliveries: 9, deliveryMode: 'concurrent', deadLetterTopic: 'billing-dlq' });
    const { group: replaced } = await h.admin.putGroup('billing', group('orders'));
    // PUT: what it leaves out takes its default (deliveryMode: an existing group keeps its own).
    expect(replaced).toMatchObject({ visibilityTimeoutSeconds: 30, maxDeliveries: 16, deliveryMode: 'concurrent' });
  });

  it('retryPolicy: defaults 1 s, ×2, 600 s; PATCH merges the fields given; PUT resets what it leaves out; a bad policy changes nothing', async () => {
    expect((await h.admin.getGroup('billing')).retryPolicy).toEqual({ initialSeconds: 1, multiplier: 2, maxSeconds: 600 });
    const { group: put } = await h.admin.putGroup('billing', group('orders', { retryPolicy: { initialSeconds: 5, multiplier: 3 } }));
    expect(put.retryPolicy).toEqual({ initialSeconds: 5, multiplier: 3, maxSeconds: 600 });
    const { group: patched } = await h.admin.patchGroup('billing', { retryPolicy: { maxSeconds: 60 } });
    expect(patched.retryPolicy).toEqual({ initialSeconds: 5, multiplier: 3, maxSeconds: 60 });
    expect((await h.admin.patchGroup('billing', { maxDeliveries: 4 })).group.retryPolicy).toEqual({ initialSeconds: 5, multiplier: 3, maxSeconds: 60 });
    // The merged policy is checked: 90 s initial over the stored 60 s cap is refused, and nothing changes.
    await expect(h.admin.patchGroup('billing', { retryPolicy: { initialSeconds: 90 } })).rejects.toMatchObject({
      code: 'InvalidArgument',
      issues: [{ path: 'retryPolicy/maxSeconds' }],
    });
    expect((await h.admin.getGroup('billing')).retryPolicy).toEqual({ initialSeconds: 5, multiplier: 3, maxSeconds: 60 });
    await expect(h.admin.putGroup('fresh', group('orders', { retryPolicy: { initialSeconds: 0, maxSeconds: 0, multiplier: 10.5 } }))).rejects.toMatchObject({
      issues: [{ path: 'retryPolicy/multiplier' }],
    });
    await expect(h.admin.getGroup('fresh')).rejects.toBeInstanceOf(GroupNotFoundError);
    const { group: replaced } = await h.admin.putGroup('billing', group('orders'));
    expect(replaced.retryPolicy).toEqual({ initialSeconds: 1, multiplier: 2, maxSeconds: 600 });
  });

  it('a subscription added by PATCH starts at latest; two concurrent PATCHes of different fields both take effect', async () => {
    await h.admin.putTopic('audit', topic());
    await h.queue.send('audit', send('before'));
    await Promise.all([
      h.admin.patchGroup('billing', { subscriptions: [{ topic: 'orders', tags: undefined }, { topic: 'audit', tags: undefined }] }),
      h.admin.patchGroup('billing', { visibilityTimeoutSeconds: 99 }),
      h.admin.patchGroup('billing', { maxDeliveries: 5 }),
    ]);
    const saved = await h.admin.getGroup('billing');
    expect(saved).toMatchObject({ visibilityTimeoutSeconds: 99, maxDeliveries: 5 });
    expect(saved.subscriptions.map((s) => s.topic)).toEqual(['orders', 'audit']);
    await h.queue.send('audit', send('after'));
    expect((await receive()).map((m) => m.body)).toEqual(['after']);
  });

  it('answers 404 for a missing group and 409 for a deliveryMode change with messages in flight, changing nothing', async () => {
    await expect(h.admin.patchGroup('nobody', { maxDeliveries: 2 })).rejects.toBeInstanceOf(GroupNotFoundError);
    expect((await h.admin.listGroups(100, undefined)).groups.map((g) => g.name)).toEqual(['billing']);
    await h.queue.send('orders', send('x'));
    await receive(1);
    const before = await h.admin.getGroup('billing');
    await expect(h.admin.patchGroup('billing', { deliveryMode: 'protected', maxDeliveries: 2 })).rejects.toMatchObject({ code: 'Conflict' });
    expect(await h.admin.getGroup('billing')).toEqual(before);
  });

  it('changes only the given topic settings; type and orderGroup only with their current values', async () => {
    await h.admin.putTopic('ledger', topic({ type: 'fifo', orderGroup: 'books', retentionSeconds: 7200, maxDelaySeconds: 60 }));
    expect((await h.admin.patchTopic('ledger', { retentionSeconds: 3600 })).topic).toMatchObject({
      retentionSeconds: 3600,
      maxDelaySeconds: 60,
      type: 'fifo',
      orderGroup: 'books',
    });
    expect((await h.admin.patchTopic('ledger', { type: 'fifo', orderGroup: 'books', maxDelaySeconds: 0 })).topic).toMatchObject({
      retentionSeconds: 3600,
      maxDelaySeconds: 0,
    });
    await expect(h.admin.patchTopic('ledger', { type: 'standard' })).rejects.toMatchObject({ code: 'Conflict' });
    await expect(h.admin.patchTopic('ledger', { orderGroup: 'other', retentionSeconds: 300 })).rejects.toMatchObject({ code: 'Conflict' });
    await expect(h.admin.patchTopic('nope', { retentionSeconds: 300 })).rejects.toMatchObject({ code: 'TopicNotFound' });
    expect(await h.admin.getTopic('ledger')).toMatchObject({ retentionSeconds: 3600, maxDelaySeconds: 0 });
    // PUT replaces: left-out settings take their defaults.
    expect((await h.admin.putTopic('ledger', topic({ type: 'fifo', orderGroup: 'books' }))).topic).toMatchObject({
      retentionSeconds: 259_200,
      maxDelaySeconds: 259_200,
    });
  });

  it('a PATCH of a topic deleted meanwhile changes nothing', async () => {
    const read = await h.stores.catalog.getTopic('orders');
    await h.admin.deleteTopic('orders');
    expect(await h.stores.catalog.patchTopic('orders', read!.generation, { retentionSeconds: 600 }, h.clock.now())).toBeUndefined();
    await expect(h.admin.patchTopic('orders', { retentionSeconds: 600 })).rejects.toMatchObject({ code: 'TopicNotFound' });
  });
});
