/**
 * Found by an audit (2026-12-04): a group delete whose container dies after the tombstone, before its cursors are
 * deleted. Design: "one a crash between the two steps left behind is removed when the group is
 * created again". The tombstone expires by TTL a day after the re-create window; a create after
 * that finds no tombstone and removes nothing, so the new group inherits the old cursors.
 */
import { DeleteCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { GROUP_PK, cursorPk } from '../../lib/adapters/dynamodb/keys.js';
import { GroupNotFoundError } from '../../lib/domain/errors.js';
import { group, topic } from '../helpers/builders.js';
import { crashAt } from '../helpers/release-faults.js';
import { FakeClock, harness, send, testTable } from '../helpers/stores.js';

const isCursorDelete = (command: string, input: unknown) => command === 'DeleteItemCommand' && JSON.stringify(input).includes(`"${cursorPk('billing')}"`);

describe('group delete cut off after its tombstone', () => {
  it('a group created under the name after the tombstone expired starts at latest, with nothing of the old group', async () => {
    const { client, doc, table } = await testTable('crash-gd');
    const clock = new FakeClock();
    const h = harness(doc, table, { clock });
    await h.admin.putTopic('orders', topic({ partitions: 1, retentionSeconds: 7 * 86_400 }));
    await h.admin.putGroup('billing', group('orders', { visibilityTimeoutSeconds: 30, maxDeliveries: 1 }));
    await h.queue.send('orders', send('old-1'));
    await h.queue.send('orders', send('old-2'));
    await h.queue.send('orders', send('old-3'));
    // old-1 leased and left to expire with maxDeliveries 1 (dead-lettered by the next receive); old-2 leased.
    expect((await h.queue.receive('billing', { maxMessages: 1, waitSeconds: 0 })).map((m) => m.body)).toEqual(['old-1']);
    clock.advance(31_000);
    expect((await h.queue.receive('billing', { maxMessages: 1, waitSeconds: 0 })).map((m) => m.body)).toEqual(['old-2']);

    // The container dies at the first cursor delete (after the tombstone's write).
    const crash = crashAt(client, isCursorDelete);
    await expect(h.admin.deleteGroup('billing')).rejects.toThrow();
    expect(crash.hit()).toBe(true);
    // The client's retry cannot finish it: the group is already gone.
    await expect(h.admin.deleteGroup('billing')).rejects.toBeInstanceOf(GroupNotFoundError);

    // Two days later: DynamoDB's TTL has removed the tombstone (ttl = window + 1 day); DynamoDB Local
    // runs no TTL, so the test deletes it as TTL would.
    clock.advance(2 * 86_400_000);
    await doc.send(new DeleteCommand({ TableName: table, Key: { pk: GROUP_PK, sk: 'billing' } }));
    await h.queue.send('orders', send('between'));

    const { created } = await h.admin.putGroup('billing', group('orders', { visibilityTimeoutSeconds: 30 }));
    expect(created).toBe(true);
    await h.queue.send('orders', send('new'));
    const got = await h.queue.receive('billing', { maxMessages: 10, waitSeconds: 0 });
    const figures = await h.admin.getGroup('billing');
    expect({ bodies: got.map((m) => m.body), deadLettered: figures.deadLettered, inFlight: figures.inFlight }).toEqual({ bodies: ['new'], deadLettered: 0, inFlight: 1 });
  });

  it('a group create cut off after its cursors, before its group write: the group created later starts at latest', async () => {
    const { client, doc, table } = await testTable('crash-gc');
    const clock = new FakeClock();
    const h = harness(doc, table, { clock });
    await h.admin.putTopic('orders', topic({ partitions: 1, retentionSeconds: 7 * 86_400 }));
    // The create's group write (a transaction with the dead-letter topic's `dg`) is where the container dies.
    const crash = crashAt(client, (command, input) => ['TransactWriteItemsCommand', 'UpdateItemCommand'].includes(command) && JSON.stringify(input).includes(`"${GROUP_PK}"`) && JSON.stringify(input).includes('"billing"'));
    await expect(h.admin.putGroup('billing', group('orders'))).rejects.toThrow();
    expect(crash.hit()).toBe(true);
    expect(await h.stores.catalog.getGroup('billing')).toBeUndefined();
    // Nobody retries; the next days' traffic, then the group is created.
    for (const body of ['day-1', 'day-2']) {
      await h.queue.send('orders', send(body));
      clock.advance(86_400_000);
    }
    expect((await h.admin.putGroup('billing', group('orders'))).created).toBe(true);
    await h.queue.send('orders', send('new'));
    const got = await h.queue.receive('billing', { maxMessages: 10, waitSeconds: 0 });
    expect(got.map((m) => m.body)).toEqual(['new']);
  });
});
