/**
 * The doorbell park map's bounds on DynamoDB Local (docs/design.md, Limits by construction):
 * a topic item's `wb` holds at most `DoorbellLimits.parkedGroupsPerTopicMax` groups, next to
 * `pg` at its own maximum the item stays under 400 KB, a new group finding the map full is
 * refused (DoorbellParkRefusedError), and delete-group removes the group's entries.
 */
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { TOPIC_PK } from '../../lib/adapters/dynamodb/keys.js';
import { DoorbellLimits, DoorbellParkRefusedError } from '../../lib/domain/doorbell-limits.js';
import { PushLimits } from '../../lib/domain/push.js';
import { DOORBELL_PARK_FOR_MS } from '../../lib/services/doorbell-parker.js';
import { group, topic } from '../helpers/builders.js';
import { newHarness, type Harness } from '../helpers/stores.js';

let h: Harness;
const max = DoorbellLimits.parkedGroupsPerTopicMax;
/** A 128-character group name (NAME_PATTERN's longest), distinct per `i`. */
const longName = (prefix: string, i: number) => `${prefix}-${String(i).padStart(6, '0')}-`.padEnd(128, 'x');
const topicItem = async () => {
  const got = await h.doc.send(new GetCommand({ TableName: h.table, Key: { pk: TOPIC_PK, sk: 'orders' }, ConsistentRead: true, ReturnConsumedCapacity: 'TOTAL' }));
  return { item: got.Item ?? {}, rcu: got.ConsumedCapacity?.CapacityUnits ?? 0 };
};

beforeAll(async () => {
  h = await newHarness();
  await h.admin.putTopic('orders', topic());
  // Seeded through the store: the map one short of full with 128-character names, and `pg` at its
  // own maximum (1,000 push group names of 128 characters) — the largest topic item there can be.
  const until = h.clock.now() + DOORBELL_PARK_FOR_MS;
  const wb = Object.fromEntries(Array.from({ length: max - 1 }, (_, i) => [longName('seed', i), until]));
  const pg = new Set(Array.from({ length: PushLimits.pushGroupsPerTopicMax }, (_, i) => longName('push', i)));
  await h.doc.send(
    new UpdateCommand({
      TableName: h.table,
      Key: { pk: TOPIC_PK, sk: 'orders' },
      UpdateExpression: 'SET wb = :wb, wu = :wu, pg = :pg',
      ExpressionAttributeValues: { ':wb': wb, ':wu': until, ':pg': pg },
    }),
  );
}, 60_000);

describe('the wb map cap', () => {
  it('admits the 1,000th group with a 128-character name; the item stays under 400 KB', async () => {
    const last = longName('real', 0);
    await h.admin.putGroup(last, group('orders', { deadLetterTopic: 'real-dlq' }));
    const until = h.clock.now() + DOORBELL_PARK_FOR_MS;
    expect(await h.stores.catalog.parkGroup('orders', last, until, h.clock.now() + 5 * 60_000)).toBe(until);
    const { item, rcu } = await topicItem();
    expect(Object.keys(item.wb as object)).toHaveLength(max);
    // A consistent read costs 1 RCU per 4 KB (measured: 65 RCU, ≤ 260 KB); ≤ 75 RCU is ≤ 300 KB.
    expect(rcu).toBeGreaterThan(60);
    expect(rcu).toBeLessThanOrEqual(75);
  });

  it('refuses a new group when the map is full, writing nothing; a group already in it still refreshes', async () => {
    const before = (await topicItem()).item;
    const refused = await h.stores.catalog.parkGroup('orders', 'newcomer', h.clock.now() + DOORBELL_PARK_FOR_MS, h.clock.now() + 5 * 60_000).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(DoorbellParkRefusedError);
    expect((refused as DoorbellParkRefusedError).reason).toBe('full');
    expect((await topicItem()).item).toEqual(before);

    h.clock.advance(5 * 60_000 + 1);
    const seeded = longName('seed', 7);
    const until = h.clock.now() + DOORBELL_PARK_FOR_MS;
    expect(await h.stores.catalog.parkGroup('orders', seeded, until, h.clock.now() + 5 * 60_000)).toBe(until);
    const after = (await topicItem()).item;
    expect((after.wb as Record<string, number>)[seeded]).toBe(until);
    expect(after.wu).toBe(until);
  });

  it('delete-group removes the group\'s entry, which admits one more group', async () => {
    const last = longName('real', 0);
    await h.admin.deleteGroup(last);
    const wb = (await topicItem()).item.wb as Record<string, number>;
    expect(Object.keys(wb)).toHaveLength(max - 1);
    expect(wb[last]).toBeUndefined();
    const until = h.clock.now() + DOORBELL_PARK_FOR_MS;
    expect(await h.stores.catalog.parkGroup('orders', 'newcomer', until, h.clock.now() + 5 * 60_000)).toBe(until);
    expect(Object.keys((await topicItem()).item.wb as object)).toHaveLength(max);
  });
});

describe('creating the wb map', () => {
  it('does not move `wu` back when a park raised it between the read and the create', async () => {
    await h.admin.putTopic('fresh', topic());
    const until = h.clock.now() + DOORBELL_PARK_FOR_MS;
    const later = until + 60_000;
    let raced = false;
    // Just before the create-the-map write, another park raises `wu` past this park's end.
    h.doc.middlewareStack.add(
      (next) => async (args) => {
        const input = args.input as { UpdateExpression?: string; Key?: { sk?: string } };
        if (!raced && input.UpdateExpression === 'SET wb = :wb, wu = :wu' && input.Key?.sk === 'fresh') {
          raced = true;
          await h.doc.send(new UpdateCommand({ TableName: h.table, Key: { pk: TOPIC_PK, sk: 'fresh' }, UpdateExpression: 'SET wu = :w', ExpressionAttributeValues: { ':w': later } }));
        }
        return next(args);
      },
      { step: 'initialize', name: 'race-wu' },
    );
    try {
      expect(await h.stores.catalog.parkGroup('fresh', 'workers', until, h.clock.now() + 5 * 60_000)).toBe(until);
    } finally {
      h.doc.middlewareStack.remove('race-wu');
    }
    expect(raced).toBe(true);
    const got = await h.doc.send(new GetCommand({ TableName: h.table, Key: { pk: TOPIC_PK, sk: 'fresh' }, ConsistentRead: true }));
    expect(got.Item?.wb).toEqual({ workers: until });
    expect(got.Item?.wu).toBe(later);
  });
});
