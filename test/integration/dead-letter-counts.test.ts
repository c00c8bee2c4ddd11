/**
 * A group's `deadLettered` figure from its dead-letter counters (dead-letter-counts.ts): one of 8
 * counter items incremented in the dead-letter transaction, read in one BatchGetItem whatever the
 * number of cursors, kept when a FIFO shard cursor expires, started again when the group is
 * created again under its name. On DynamoDB Local.
 */
import { DeleteCommand, GetCommand } from '@aws-sdk/lib-dynamodb';
import { beforeEach, describe, expect, it } from 'vitest';
import { DEAD_LETTER_COUNT_KEYS } from '../../lib/adapters/dynamodb/dead-letter-counts.js';
import { cursorPk, deadLetterCountKey } from '../../lib/adapters/dynamodb/keys.js';
import { newHarness, send, type Harness } from '../helpers/stores.js';
import { group, topic } from '../helpers/builders.js';

let h: Harness;

beforeEach(async () => {
  h = await newHarness();
});

const receive = (name: string, max = 100) => h.queue.receive(name, { maxMessages: max, waitSeconds: 0 });

/** Every counter item of the group, as stored (`c`, or undefined for one never written). */
async function counters(name: string): Promise<Array<number | undefined>> {
  const created = (await h.stores.catalog.getGroup(name))!.createdAt;
  return Promise.all(
    Array.from({ length: DEAD_LETTER_COUNT_KEYS }, async (_, n) => {
      const { Item } = await h.doc.send(new GetCommand({ TableName: h.table, Key: deadLetterCountKey(name, created, n), ConsistentRead: true }));
      return Item === undefined ? undefined : Number(Item.c);
    }),
  );
}

/** Sends `n` messages and lets a maxDeliveries-1 group's leases of them expire; the next receive dead-letters them. */
async function deadLetter(topicName: string, groupName: string, n: number, shardKey?: (i: number) => string) {
  for (let i = 0; i < n; i++) await h.queue.send(topicName, send(`m${i}`, shardKey ? { shardKey: shardKey(i) } : {}));
  let got = 0;
  for (let round = 0; got < n && round < n + 5; round++) got += (await receive(groupName)).length;
  expect(got).toBe(n);
  h.clock.advance(30_001);
  // Expired FIFO leases are dead-lettered as their shards are claimed: receive until nothing is left.
  for (let round = 0; round < n + 5 && (await receive(groupName)).length + (await h.admin.getGroup(groupName)).backlog > 0; round++);
}

describe('dead-letter counters', () => {
  it('count every dead letter in the dead-letter transaction, spread over the counter keys', async () => {
    await h.admin.putTopic('orders', topic());
    await h.admin.putGroup('billing', group('orders', { maxDeliveries: 1 }));
    await deadLetter('orders', 'billing', 40);
    const stored = await counters('billing');
    expect(stored.reduce<number>((a, c) => a + (c ?? 0), 0)).toBe(40);
    // 40 picks among 8 keys: more than one key takes them (all on one: 8^-39).
    expect(stored.filter((c) => c !== undefined).length).toBeGreaterThan(1);
    expect(await h.admin.getGroup('billing')).toMatchObject({ deadLettered: 40, backlog: 0, inFlight: 0 });
    // The copies are in the dead-letter topic, one per count.
    await h.admin.putGroup('dlq-reader', group([{ topic: 'billing-dlq', tags: undefined, startFrom: 'earliest' }]));
    let copies = 0;
    for (let round = 0; round < 10; round++) copies += (await receive('dlq-reader')).length;
    expect(copies).toBe(40);
  });

  it('keep a FIFO shard cursor’s dead letters after the cursor is gone (TTL)', async () => {
    await h.admin.putTopic('f', topic({ type: 'fifo' }));
    await h.admin.putGroup('g', group('f', { maxDeliveries: 1, deliveryMode: 'concurrent' }));
    await deadLetter('f', 'g', 3, (i) => `k${i}`);
    expect((await h.admin.getGroup('g')).deadLettered).toBe(3);
    // TTL deletes idle shard cursors 15 days after their last activity: gone, the count stays.
    const shards = (await h.stores.cursors.list('g', h.clock.now())).filter((c) => c.stream.includes('/k:'));
    expect(shards.length).toBe(3);
    for (const cursor of shards) await h.doc.send(new DeleteCommand({ TableName: h.table, Key: { pk: cursorPk('g'), sk: cursor.stream } }));
    expect((await h.admin.getGroup('g')).deadLettered).toBe(3);
  });

  it('start again at 0 for a group created again under its name; the deleted group’s counters are removed', async () => {
    await h.admin.putTopic('orders', topic());
    await h.admin.putGroup('billing', group('orders', { maxDeliveries: 1 }));
    await deadLetter('orders', 'billing', 5);
    const before = (await h.stores.catalog.getGroup('billing'))!.createdAt;
    await h.admin.deleteGroup('billing');
    for (let n = 0; n < DEAD_LETTER_COUNT_KEYS; n++) {
      const { Item } = await h.doc.send(new GetCommand({ TableName: h.table, Key: deadLetterCountKey('billing', before, n), ConsistentRead: true }));
      expect(Item).toBeUndefined();
    }
    h.clock.advance(1);
    await h.admin.putGroup('billing', group('orders', { maxDeliveries: 1 }));
    expect((await h.admin.getGroup('billing')).deadLettered).toBe(0);
    await deadLetter('orders', 'billing', 2);
    expect((await h.admin.getGroup('billing')).deadLettered).toBe(2);
  });
});
