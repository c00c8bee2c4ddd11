/**
 * A parking receive never answers a doorbell that will not ring. A group's consumer comes back just
 * before its 10-minute park ends: the parking receive refreshes the park, but senders whose catalog
 * cache still holds the old `wu` append without `w` from its end until their caches expire. Until
 * 2026-12-04 the receive dated the refreshed park from the old one and answered the doorbell at
 * once: a send 500 ms after the old `wu` never rang (found by an audit). Now a park ending within
 * the senders' cache time counts as starting now (doorbell-parker.ts).
 */
import { CreateQueueCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, expect, it } from 'vitest';
import { SqsDoorbellQueues } from '../../lib/adapters/aws/sqs-doorbell-queues.js';
import { pollingNotifier, InProcessNotifier } from '../../lib/ports/notifier.js';
import { cryptoRandom } from '../../lib/ports/random.js';
import { DOORBELL_PARK_FOR_MS, DoorbellParker } from '../../lib/services/doorbell-parker.js';
import { QueueService } from '../../lib/services/queue-service.js';
import { createStores } from '../../lib/services/stores.js';
import { group, topic } from '../helpers/builders.js';
import { whileAdvancing } from '../helpers/advancing.js';
import { newHarness, send, testSecrets } from '../helpers/stores.js';

const sqs = mockClient(SQSClient);
afterAll(() => sqs.restore());

it('a park refreshed within the senders\' cache time of its end answers the doorbell only once every sender flags its appends', async () => {
  sqs.on(CreateQueueCommand).callsFake((input: { QueueName: string }) => ({ QueueUrl: `https://sqs.eu-west-1.amazonaws.com/1/${input.QueueName}` }));
  sqs.on(SendMessageCommand).resolves({ MessageId: 'm' });
  const h = await newHarness();
  await h.admin.putTopic('orders', topic());
  await h.admin.putGroup('workers', group('orders'));
  const queues = new SqsDoorbellQueues(new SQSClient({ region: 'eu-west-1' }), 'sluice-test');
  const consumer = new QueueService(h.stores, h.clock, cryptoRandom, new InProcessNotifier(), h.timers, {
    pollIntervalMs: 20,
    doorbells: { parker: new DoorbellParker(h.stores.catalog, h.clock), queues },
  });
  // Another container sends, with the default 5 s catalog cache.
  const senderStores = createStores(h.doc, h.table, { clock: h.clock, secrets: testSecrets, catalog: { cacheTtlMs: 5000, now: () => h.clock.now() } });
  const sender = new QueueService(senderStores, h.clock, cryptoRandom, pollingNotifier, h.timers);

  const first = await whileAdvancing(h.clock, () => consumer.receiveOrPark('workers', { maxMessages: 10, waitSeconds: 20, park: true }));
  expect(first.doorbell).toBeDefined();
  const wu = (await h.stores.catalog.topics(['orders'])).get('orders')?.parkedUntil ?? 0;
  expect(wu).toBeGreaterThan(h.clock.now() + DOORBELL_PARK_FOR_MS - 60_000);

  // The consumer comes back 3 s before its park ends; the sender sends meanwhile (caching wu).
  h.clock.advance(wu - 3000 - h.clock.now());
  await sender.send('orders', send('warm'));
  const got = await consumer.receiveOrPark('workers', { maxMessages: 10, waitSeconds: 20, park: true });
  expect(got.messages.map((m) => m.body)).toEqual(['warm']);
  await consumer.commit('workers', got.messages.map((m) => m.receiptHandle));
  const parkingAt = h.clock.now();
  const parked = await whileAdvancing(h.clock, () => consumer.receiveOrPark('workers', { maxMessages: 10, waitSeconds: 20, park: true }));
  expect(parked.doorbell).toBeDefined();
  // The senders' 5 s cache and 1 s of slack from the refresh.
  expect(h.clock.now() - parkingAt).toBeGreaterThanOrEqual(6000);

  // A send right after the answer, and no sooner than 500 ms past the old wu (within the sender's cache of it, had the answer come at once).
  h.clock.advance(Math.max(0, wu + 500 - h.clock.now()));
  await sender.send('orders', send('rings'));

  // Both segments carry `w` (the second, appended after the doorbell was answered, must: else no ring).
  const { Items = [] } = await h.doc.send(new ScanCommand({ TableName: h.table }));
  const segments = Items.filter((i) => String(i.pk).startsWith('S#t:orders') && i.sk !== '#' && /^\d+$/.test(String(i.sk)));
  expect(segments).toHaveLength(2);
  expect(segments.map((s) => s.w)).toEqual([1, 1]);
}, 60_000);
