/**
 * The dispatcher's push route finds a topic's push groups on the topic item (`pg`, kept with `pu` in
 * the group-save and group-delete transactions): its table calls do not grow with the number of
 * groups. A topic saved before `pg` existed still reaches its push groups (the route reads the groups).
 */
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { TOPIC_PK } from '../../lib/adapters/dynamodb/keys.js';
import type { SegmentChange } from '../../lib/adapters/dynamodb/segment-changes.js';
import { PushRoute } from '../../lib/services/push-route.js';
import { group, topic } from '../helpers/builders.js';
import { RecordingPushQueue } from '../helpers/push-endpoint.js';
import { newHarness, type Harness } from '../helpers/stores.js';

const PULL_GROUPS = 300;
const hook = { url: 'http://127.0.0.1:9/hook' };
let h: Harness;
const calls: string[] = [];

beforeAll(async () => {
  h = await newHarness();
  h.doc.middlewareStack.add((next, context) => (args) => (calls.push(context.commandName ?? ""), next(args)), { step: 'initialize', name: 'count-calls' });
  await h.admin.putTopic('orders', topic());
  await h.admin.putTopic('refunds', topic());
  for (let i = 0; i < PULL_GROUPS; i += 25) {
    await Promise.all(Array.from({ length: Math.min(25, PULL_GROUPS - i) }, (_, j) => h.admin.putGroup(`pull-${i + j}`, group(i + j < 150 ? 'orders' : 'refunds'))));
  }
  await h.admin.putGroup('hooks', group('orders', { push: hook }));
  await h.admin.putGroup('refund-hooks', group(['orders', 'refunds'], { push: hook }));
}, 300_000);

const segment = (topicName: string, stream: string, id: string): SegmentChange => ({ id, stream, seq: 1, count: 1, topics: [topicName], noticeLane: undefined, wake: true });
const pg = async (name: string) =>
  (await h.doc.send(new GetCommand({ TableName: h.table, Key: { pk: TOPIC_PK, sk: name }, ConsistentRead: true }))).Item?.pg as Set<string> | undefined;

describe('push route', () => {
  it('names each topic\'s push groups on the topic item, and reads topic items only, whatever the number of groups', async () => {
    expect([...((await pg('orders')) ?? [])].sort()).toEqual(['hooks', 'refund-hooks']);
    expect([...((await pg('refunds')) ?? [])]).toEqual(['refund-hooks']);
    const queue = new RecordingPushQueue();
    const route = new PushRoute(h.stores.catalog, queue);
    calls.length = 0;
    const failed = await route.handle([segment('orders', 't:orders/p:0', '1'), segment('orders', 't:orders/p:1', '2'), segment('refunds', 't:refunds/p:0', '3')], h.clock.now());
    expect(failed).toEqual([]);
    expect(queue.sent.map((s) => `${s.job.group} ${s.job.stream}`).sort()).toEqual([
      'hooks t:orders/p:0',
      'hooks t:orders/p:1',
      'refund-hooks t:orders/p:0',
      'refund-hooks t:orders/p:1',
      'refund-hooks t:refunds/p:0',
    ]);
    expect(calls).not.toContain('QueryCommand');
    expect(calls.length).toBeLessThanOrEqual(2);
  });

  it('keeps the names with the group: a push group that leaves a topic or is deleted is no longer named', async () => {
    await h.admin.patchGroup('refund-hooks', { subscriptions: [{ topic: 'refunds', tags: undefined }] });
    expect([...((await pg('orders')) ?? [])]).toEqual(['hooks']);
    await h.admin.deleteGroup('hooks');
    expect(await pg('orders')).toBeUndefined();
    const queue = new RecordingPushQueue();
    await new PushRoute(h.stores.catalog, queue).handle([segment('orders', 't:orders/p:0', '1')], h.clock.now());
    expect(queue.sent).toEqual([]);
  });

  it('a topic saved before the names existed (it counts push groups it does not name) still reaches them', async () => {
    await h.admin.putGroup('legacy-hooks', group('orders', { push: hook }));
    await h.doc.send(new UpdateCommand({ TableName: h.table, Key: { pk: TOPIC_PK, sk: 'orders' }, UpdateExpression: 'REMOVE pg' }));
    const queue = new RecordingPushQueue();
    calls.length = 0;
    await new PushRoute(h.stores.catalog, queue).handle([segment('orders', 't:orders/p:0', '1')], h.clock.now());
    expect(queue.sent.map((s) => s.job.group)).toEqual(['legacy-hooks']);
    expect(calls).toContain('QueryCommand');
  });
});
