/**
 * The `w` flag at append time (design §7.2): a segment of a topic whose item
 * says a consumer is parked (`wu > now`) or a push group is subscribed
 * (`pu > 0`) carries `w = 1`, on every append path (send, batch send, release
 * of a scheduled message, redrive), and reaches the dispatcher's wake route
 * through DynamoDB Local's real stream; a segment of a topic nobody waits on
 * carries nothing and invokes nothing.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { GetCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { WAKE_FLAG, WAKE_TOPICS } from '../../lib/adapters/dynamodb/dispatch-source.js';
import { SENTINEL_SK, TOPIC_PK, streamPk } from '../../lib/adapters/dynamodb/keys.js';
import { storedRecordsOf } from '../../lib/adapters/dynamodb/segment-records.js';
import { noticeStreamsOf, redriveStream, streamId } from '../../lib/domain/streams.js';
import { activityKey } from '../../lib/adapters/dynamodb/keys.js';
import { startDispatchPoller } from '../helpers/dispatch-poller.js';
import { eventually } from '../helpers/fake-streams.js';
import { group, topic } from '../helpers/builders.js';
import { harness, send, testTable } from '../helpers/stores.js';

const cleanups: Array<() => Promise<void> | void> = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function setup() {
  const { endpoint, client, doc, table } = await testTable('wake');
  const h = harness(doc, table);
  const setTopic = (name: string, values: { wu?: number; pu?: number }) =>
    doc.send(
      new UpdateCommand({
        TableName: table,
        Key: { pk: TOPIC_PK, sk: name },
        UpdateExpression: `SET ${Object.keys(values).map((k) => `${k} = :${k}`).join(', ')}`,
        ExpressionAttributeValues: Object.fromEntries(Object.entries(values).map(([k, v]) => [`:${k}`, v])),
      }),
    );
  /** Every segment item of the topic's streams, oldest first, as stored. */
  const streamSegments = async (streams: string[]) => {
    const out: Array<Record<string, unknown>> = [];
    for (const stream of streams) {
      const { Items } = await doc.send(
        new QueryCommand({ TableName: table, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': streamPk(stream) } }),
      );
      out.push(...(Items ?? []).filter((i) => i.sk !== SENTINEL_SK));
    }
    return out;
  };
  const segments = async (name: string) => {
    const t = await h.stores.catalog.getTopic(name);
    if (!t) throw new Error(`no topic ${name}`);
    return streamSegments(Array.from({ length: t.partitions }, (_, partition) => streamId(t, { kind: 'partition', partition })));
  };
  return { endpoint, client, doc, table, h, setTopic, segments, streamSegments };
}

describe('the w flag', () => {
  it('is set on segments of topics with a parked consumer or a push subscription, on every append path', async () => {
    const { h, setTopic, segments } = await setup();
    await h.admin.putTopic('parked', topic({ maxDelaySeconds: 60 }));
    await h.admin.putTopic('pushed', topic());
    await h.admin.putTopic('quiet', topic());
    await h.admin.putTopic('expired', topic());
    await setTopic('parked', { wu: h.clock.now() + 60_000 });
    await setTopic('pushed', { pu: 1 });
    await setTopic('expired', { wu: h.clock.now() - 1 });

    await h.queue.send('parked', send('one'));
    await h.queue.sendBatch('parked', [send('two'), send('three')]);
    await h.queue.send('parked', send('later', { delaySeconds: 5 }));
    h.clock.advance(5_000);
    await h.fire();
    await h.queue.send('pushed', send('p'));
    await h.queue.send('quiet', send('q'));
    await h.queue.send('expired', send('e'));

    const parked = await segments('parked');
    expect(parked.flatMap((s) => storedRecordsOf(s).map((m) => m.b)).sort()).toEqual(['later', 'one', 'three', 'two']);
    expect(parked.map((s) => s[WAKE_FLAG])).toEqual(parked.map(() => 1));
    expect((await segments('pushed')).map((s) => s[WAKE_FLAG])).toEqual([1]);
    expect((await segments('quiet')).map((s) => s[WAKE_FLAG])).toEqual([undefined]);
    expect((await segments('expired')).map((s) => s[WAKE_FLAG])).toEqual([undefined]);
  });

  it('is set on the dead-letter topic\'s copy and on redriven messages when their topics are waited on', async () => {
    const { h, setTopic, segments, streamSegments } = await setup();
    await h.admin.putTopic('work', topic());
    await h.admin.putGroup('g', group('work', { maxDeliveries: 1 }));
    const dlq = 'g-dlq';
    await setTopic(dlq, { wu: h.clock.now() + 3_600_000 });
    await h.queue.send('work', send('fails'));
    expect(await h.queue.receive('g', { maxMessages: 1, waitSeconds: 0 })).toHaveLength(1);
    h.clock.advance(30_001);
    // The lease expired on the last allowed delivery: the next receive dead-letters it.
    expect(await h.queue.receive('g', { maxMessages: 1, waitSeconds: 0 })).toEqual([]);
    const copies = await segments(dlq);
    expect(copies.length).toBeGreaterThanOrEqual(1);
    expect(copies.map((s) => s[WAKE_FLAG])).toEqual(copies.map(() => 1));

    await setTopic('work', { wu: h.clock.now() + 3_600_000 });
    expect(await h.redriver.redrive('g', undefined)).toEqual({ redriven: 1, more: false });
    // Redriven messages enter the group's redrive stream; their topic is still `work`.
    const redriven = await streamSegments([redriveStream('g')]);
    expect(redriven).toHaveLength(1);
    expect(redriven.map((s) => s[WAKE_FLAG])).toEqual([1]);
  });

  it('on a FIFO send, flags the notice segment (naming its topic in `wt`) and not the shard segment it announces', async () => {
    // A wake-up is worth something only once the message can be found, and a FIFO message is found
    // through its notice, written after its segment: a push drain woken by the segment could run
    // before the notice exists, find nothing and end with the message left behind.
    const { endpoint, client, doc, table, h, setTopic, streamSegments } = await setup();
    await h.admin.putTopic('orders', topic({ type: 'fifo' }));
    await h.admin.putTopic('quiet-fifo', topic({ type: 'fifo' }));
    await setTopic('orders', { pu: 1 });
    const { poller, routed, stop } = await startDispatchPoller(endpoint, client, doc, table);
    cleanups.push(stop);

    await h.queue.sendBatch('orders', [send('a', { shardKey: 'k' }), send('b', { shardKey: 'k' })]);
    await h.queue.send('quiet-fifo', send('q', { shardKey: 'k' }));
    const orders = (await h.stores.catalog.getTopic('orders'))!;
    const shard = await streamSegments([streamId(orders, { kind: 'shard', shardKey: 'k' })]);
    expect(shard.map((s) => storedRecordsOf(s).map((m) => m.b))).toEqual([['a', 'b']]);
    expect(shard.map((s) => s[WAKE_FLAG])).toEqual([undefined]);
    // The notice stream the send picked (any of the namespace's: sender.ts, `announce`).
    const notices = await streamSegments(noticeStreamsOf(orders));
    expect(notices.map((s) => [s[WAKE_FLAG], s[WAKE_TOPICS]])).toEqual([[1, ['orders']]]);
    const quiet = (await h.stores.catalog.getTopic('quiet-fifo'))!;
    const quietNotices = await streamSegments(noticeStreamsOf(quiet));
    expect(quietNotices.map((s) => [s[WAKE_FLAG], s[WAKE_TOPICS]])).toEqual([[undefined, undefined]]);

    poller.nudge();
    await eventually(() => routed.length > 0, 3000, 'the wake route');
    await eventually(() => poller.stats.recordsRead >= 1, 3000, 'the notice segment read');
    expect(routed.flat()).toEqual(['orders']);
  });

  it('takes a flagged send through the local stream poller to the wake route, and an unflagged one nowhere', async () => {
    const { endpoint, client, doc, table, h, setTopic } = await setup();
    await h.admin.putTopic('waited', topic());
    await h.admin.putTopic('idle', topic());
    await setTopic('waited', { wu: Date.now() + 60_000 });
    const { poller, routed, stop } = await startDispatchPoller(endpoint, client, doc, table);
    cleanups.push(stop);

    await h.queue.send('idle', send('nobody waits'));
    await h.queue.send('waited', send('someone waits'));
    poller.nudge();
    await eventually(() => routed.length > 0, 3000, 'the wake route');
    await eventually(() => poller.stats.recordsRead >= 2, 3000, 'both segments read');
    expect(routed.flat()).toEqual(['waited']);
    const { Item } = await doc.send(new GetCommand({ TableName: table, Key: activityKey('waited'), ConsistentRead: true }));
    expect(Item?.at).toBeGreaterThan(0);
    const idle = await doc.send(new GetCommand({ TableName: table, Key: activityKey('idle'), ConsistentRead: true }));
    expect(idle.Item).toBeUndefined();
  });
});
