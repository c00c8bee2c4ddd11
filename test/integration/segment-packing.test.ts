/**
 * Packed segments (segment-records.ts, issue 16) through the real table on
 * DynamoDB Local: a batch send stores its segment as one deflated `mz`, and
 * the messages round-trip byte for byte through receive, message query by id,
 * redrive, seek and the dispatcher's stream path (the segment's topics are
 * read out of `mz` of the stream image). Segments in the per-record form
 * (`m`: written before the packed form existed) still read the same way.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { SENTINEL_SK, TOPIC_PK, streamPk } from '../../lib/adapters/dynamodb/keys.js';
import { itemBytes } from '../../lib/adapters/dynamodb/item-size.js';
import { storedRecordsOf } from '../../lib/adapters/dynamodb/segment-records.js';
import { streamId } from '../../lib/domain/streams.js';
import { Seeker } from '../../lib/services/seeker.js';
import { startDispatchPoller } from '../helpers/dispatch-poller.js';
import { eventually } from '../helpers/fake-streams.js';
import { group, topic } from '../helpers/builders.js';
import { harness, send, testTable } from '../helpers/stores.js';

/** Every DEFLATE the code under test runs, counted (the real one does the work). */
const deflates = vi.hoisted(() => ({ count: 0 }));
vi.mock('node:zlib', async (importOriginal) => {
  const zlib = await importOriginal<typeof import('node:zlib')>();
  return {
    ...zlib,
    deflateRawSync: (...args: Parameters<typeof zlib.deflateRawSync>) => {
      deflates.count++;
      return zlib.deflateRawSync(...args);
    },
  };
});

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A JSON order event of about 1 KB with random ids and values (as the bench sends). */
const order = (n: number): string =>
  JSON.stringify({
    type: 'order.created',
    n,
    orderId: randomUUID(),
    customerId: randomUUID(),
    lines: Array.from({ length: 9 }, (_, i) => ({ sku: `SKU-${randomBytes(3).toString('hex')}`, name: `item ${i} blue cotton shirt`, quantity: 1 + i, unitPrice: Number((Math.random() * 200).toFixed(2)) })),
  });

async function setup() {
  const { endpoint, client, doc, table } = await testTable('packing');
  const h = harness(doc, table);
  /** The segment items of a one-partition topic, oldest first, as stored. */
  const segments = async (name: string) => {
    const t = (await h.stores.catalog.getTopic(name))!;
    const { Items } = await doc.send(
      new QueryCommand({ TableName: table, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': streamPk(streamId(t, { kind: 'partition', partition: 0 })) }, ConsistentRead: true }),
    );
    return (Items ?? []).filter((i) => i.sk !== SENTINEL_SK);
  };
  return { endpoint, client, doc, table, h, segments };
}

const batch = () => [
  ...Array.from({ length: 8 }, (_, i) => send(order(i), { keys: [`order-${i}`], properties: { region: 'eu' }, tag: 'created' })),
  send(Buffer.from(order(8)).toString('base64'), { encoding: 'base64' }),
  send('Grüße, 東京 🚀 "quoted" \\ \n'),
];

describe('packed segments on the real table', () => {
  it('a batch of 10 is stored as one mz, below the per-record form, and round-trips through the dispatcher, receive and GET by id', async () => {
    const { endpoint, client, doc, table, h, segments } = await setup();
    await h.admin.putTopic('orders', topic({ partitions: 1 }));
    await h.admin.putGroup('billing', group('orders'));
    // A parked consumer: the segment carries `w` and goes through the dispatcher's stream path.
    await doc.send(new UpdateCommand({ TableName: table, Key: { pk: TOPIC_PK, sk: 'orders' }, UpdateExpression: 'SET wu = :wu', ExpressionAttributeValues: { ':wu': Date.now() + 60_000 } }));
    const { poller, routed, stop } = await startDispatchPoller(endpoint, client, doc, table);
    cleanups.push(stop);

    const inputs = batch();
    const results = await h.queue.sendBatch('orders', inputs);
    const ids = results.map((r) => ('result' in r ? r.result.messageId : ''));
    expect(ids.every(Boolean)).toBe(true);

    const [segment, ...others] = await segments('orders');
    expect(others).toEqual([]);
    expect(segment?.m).toBeUndefined();
    expect(segment?.mz).toBeInstanceOf(Uint8Array);
    expect(segment?.n).toBe(10);
    const perRecord = itemBytes({ ...segment, mz: undefined, m: storedRecordsOf(segment!) });
    expect(itemBytes(segment!)).toBeLessThan(perRecord * 0.7);

    poller.nudge();
    await eventually(() => routed.length > 0, 3000, 'the wake route');
    expect(routed.flat()).toEqual(['orders']);

    const received = await h.queue.receive('billing', { maxMessages: 10, waitSeconds: 0 });
    expect(received.map((m) => m.messageId)).toEqual(ids);
    expect(received.map((m) => [m.body, m.encoding, m.keys, m.properties, m.tag])).toEqual(
      inputs.map((i) => [i.body, i.encoding, i.keys, i.properties, i.tag ?? null]),
    );
    for (const [index, id] of ids.entries()) {
      expect((await h.queue.getMessage('orders', id)).body).toBe(inputs[index]?.body);
    }
  });

  it('dead letters and redrive read packed segments', async () => {
    const { h, segments } = await setup();
    await h.admin.putTopic('work', topic({ partitions: 1 }));
    await h.admin.putGroup('g', group('work', { maxDeliveries: 1 }));
    const inputs = batch();
    await h.queue.sendBatch('work', inputs);
    expect((await segments('work'))[0]?.mz).toBeInstanceOf(Uint8Array);
    expect(await h.queue.receive('g', { maxMessages: 10, waitSeconds: 0 })).toHaveLength(10);
    h.clock.advance(30_001);
    // Every lease expired on the last allowed delivery: the next receive dead-letters them (copies: packed too).
    expect(await h.queue.receive('g', { maxMessages: 10, waitSeconds: 0 })).toEqual([]);
    const redriven = await h.redriver.redrive('g', undefined);
    expect(redriven.redriven).toBe(10);
    const again = await h.queue.receive('g', { maxMessages: 10, waitSeconds: 0 });
    expect(again.map((m) => m.body).sort()).toEqual(inputs.map((i) => i.body).sort());
  });

  it('seek by time reads the send times out of packed segments', async () => {
    const { h, segments } = await setup();
    await h.admin.putTopic('timed', topic({ partitions: 1 }));
    await h.admin.putGroup('g', group('timed'));
    const first = batch();
    await h.queue.sendBatch('timed', first);
    h.clock.advance(10_000);
    const secondAt = h.clock.now();
    const second = batch();
    await h.queue.sendBatch('timed', second);
    expect((await segments('timed')).map((s) => s.mz instanceof Uint8Array)).toEqual([true, true]);
    const seeker = new Seeker(h.stores, h.clock);
    await seeker.seek('g', secondAt, undefined);
    const got = await h.queue.receive('g', { maxMessages: 10, waitSeconds: 0 });
    expect(got.map((m) => m.body)).toEqual(second.map((i) => i.body));
    await seeker.seek('g', 'earliest', undefined);
    const all = await h.queue.receive('g', { maxMessages: 10, waitSeconds: 0 });
    expect(all.map((m) => m.body)).toEqual(first.map((i) => i.body));
  });

  it('reads a multi-record segment in the per-record form (written before packing) the same way', async () => {
    const { doc, table, h, segments } = await setup();
    await h.admin.putTopic('legacy', topic({ partitions: 1 }));
    await h.admin.putGroup('old', group('legacy'));
    const inputs = batch();
    const results = await h.queue.sendBatch('legacy', inputs);
    const ids = results.map((r) => ('result' in r ? r.result.messageId : ''));
    // Rewrite the segment as the code before packing wrote it: the entries in `m`.
    const [packed] = await segments('legacy');
    const { mz: _mz, ...rest } = packed!;
    await doc.send(new PutCommand({ TableName: table, Item: { ...rest, m: storedRecordsOf(packed!) } }));
    const [legacy] = await segments('legacy');
    expect(legacy?.mz).toBeUndefined();
    expect(legacy?.m).toHaveLength(10);

    const received = await h.queue.receive('old', { maxMessages: 10, waitSeconds: 0 });
    expect(received.map((m) => [m.messageId, m.body, m.encoding])).toEqual(inputs.map((i, n) => [ids[n], i.body, i.encoding]));
    expect((await h.queue.getMessage('legacy', ids[8]!)).body).toBe(inputs[8]?.body);
  });
  it('with packing off (an upgrade\'s first step) a batch is written per record, as releases before packing read it', async () => {
    const { doc, table, segments } = await setup();
    const h = harness(doc, table, { packSegments: false });
    await h.admin.putTopic('upgrading', topic({ partitions: 1 }));
    await h.admin.putGroup('g', group('upgrading'));
    const inputs = batch();
    await h.queue.sendBatch('upgrading', inputs);
    const [segment] = await segments('upgrading');
    expect(segment?.mz).toBeUndefined();
    expect(segment?.m).toHaveLength(10);
    const received = await h.queue.receive('g', { maxMessages: 10, waitSeconds: 0 });
    expect(received.map((m) => m.body)).toEqual(inputs.map((i) => i.body));
  });

  it('with packing off no frame is deflated (before: deflated, then thrown away); with it on, one per batch', async () => {
    const { doc, table } = await testTable('packing');
    // Bodies below COMPRESS_FROM_BYTES: no body is deflated on its own, so every DEFLATE is a frame's.
    const small = Array.from({ length: 10 }, (_, i) => send(`small ${i} ${'x'.repeat(100)}`));
    for (const [packSegments, frames] of [[false, 0], [true, 1]] as const) {
      const h = harness(doc, table, { packSegments });
      const name = `small-${packSegments}`;
      await h.admin.putTopic(name, topic({ partitions: 1 }));
      deflates.count = 0;
      await h.queue.sendBatch(name, small);
      expect(deflates.count).toBe(frames);
    }
  });
});
