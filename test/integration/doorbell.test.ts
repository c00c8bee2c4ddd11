/**
 * Pull groups' doorbells on DynamoDB Local (docs/design.md, "Waking SDK consumers"): a parking
 * receive creates the group's queue once and records it, parks the group on its topics (`wb`,
 * `wu`) at most once per 5 minutes, answers the doorbell instead of long-polling, and answers
 * messages when there are some; the dispatcher's doorbell route rings each parked group once
 * per invocation; delete-group deletes the queue. SQS has no local twin: aws-sdk-client-mock.
 * The local runtime's path (a parking long poll woken by the in-process doorbell) closes the file.
 */
import { CreateQueueCommand, DeleteQueueCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SqsDoorbell } from '../../lib/adapters/aws/sqs-doorbell.js';
import { DOORBELL_QUEUE_ATTRIBUTES, SqsDoorbellQueues } from '../../lib/adapters/aws/sqs-doorbell-queues.js';
import { Catalog } from '../../lib/adapters/dynamodb/catalog.js';
import { TopicDoorbellGroups } from '../../lib/adapters/dynamodb/doorbell-groups.js';
import { GROUP_PK, TOPIC_PK } from '../../lib/adapters/dynamodb/keys.js';
import type { SegmentChange } from '../../lib/adapters/dynamodb/segment-changes.js';
import { InProcessDoorbell } from '../../lib/adapters/local/in-process-doorbell.js';
import { InProcessNotifier } from '../../lib/ports/notifier.js';
import { cryptoRandom } from '../../lib/ports/random.js';
import { AdminService } from '../../lib/services/admin-service.js';
import { DOORBELL_PARK_FOR_MS, DoorbellParker, STALE_SENDER_SLACK_MS } from '../../lib/services/doorbell-parker.js';
import { DoorbellRoute } from '../../lib/services/doorbell-route.js';
import { DOORBELL_REPAIR_EVERY_MS, QUEUE_USABLE_AFTER_MS, QueueService } from '../../lib/services/queue-service.js';
import { group, topic } from '../helpers/builders.js';
import { whileAdvancing } from '../helpers/advancing.js';
import { FakeClock, newHarness, send, type Harness } from '../helpers/stores.js';

const sqs = mockClient(SQSClient);
const urlOf = (name: string) => `https://sqs.eu-west-1.amazonaws.com/123456789012/${name}`;
let h: Harness;
let aws: QueueService;
let admin: AdminService;
const tableCalls: string[] = [];

beforeAll(async () => {
  sqs.on(CreateQueueCommand).callsFake((input: { QueueName: string }) => ({ QueueUrl: urlOf(input.QueueName) }));
  sqs.on(SendMessageCommand).resolves({ MessageId: 'm' });
  sqs.on(DeleteQueueCommand).resolves({});
  h = await newHarness();
  h.doc.middlewareStack.add((next, context) => (args) => (tableCalls.push(context.commandName ?? ''), next(args)), { step: 'initialize', name: 'count-calls' });
  const queues = new SqsDoorbellQueues(new SQSClient({ region: 'eu-west-1' }), 'sluice-test');
  const doorbells = { parker: new DoorbellParker(h.stores.catalog, h.clock), queues };
  aws = new QueueService(h.stores, h.clock, cryptoRandom, new InProcessNotifier(), h.timers, { pollIntervalMs: 20, doorbells });
  admin = new AdminService(h.stores, h.clock, undefined, { queues });
  await h.admin.putTopic('orders', topic());
  await h.admin.putTopic('refunds', topic());
  await h.admin.putGroup('workers', group(['orders', 'refunds']));
  await h.admin.putGroup('audit', group('orders'));
});
afterAll(() => sqs.restore());

const item = async (pk: string, sk: string) => (await h.doc.send(new GetCommand({ TableName: h.table, Key: { pk, sk }, ConsistentRead: true }))).Item ?? {};
const segment = (topicName: string, id: string): SegmentChange => ({ id, stream: `t:${topicName}/p:0`, seq: 1, count: 1, topics: [topicName], noticeLane: undefined, wake: true });

describe('doorbells on AWS (SQS mocked)', () => {
  it('a parking receive that finds nothing creates the queue, records it, parks the group on its topics and answers the doorbell after a look past park + sender cache + 1 s', async () => {
    const started = Date.now();
    const startedAt = h.clock.now();
    const answer = await whileAdvancing(h.clock, () => aws.receiveOrPark('workers', { maxMessages: 10, waitSeconds: 20, park: true }));
    const answeredAt = h.clock.now();
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(answer.messages).toEqual([]);
    const created = sqs.commandCalls(CreateQueueCommand).map((c) => c.args[0].input);
    expect(created).toHaveLength(1);
    expect(created[0]?.QueueName).toMatch(/^sluice-test-bell-[0-9a-f]{32}$/);
    expect(created[0]?.Attributes).toEqual(DOORBELL_QUEUE_ATTRIBUTES);
    expect(created[0]?.tags).toEqual({ 'sluice:group': 'workers' });
    expect(answer.doorbell).toEqual({ queueUrl: urlOf(created[0]?.QueueName ?? '') });
    expect((await item(GROUP_PK, 'workers')).bq).toBe(answer.doorbell?.queueUrl);
    const parkedAt = Number((await item(TOPIC_PK, 'orders')).wu) - DOORBELL_PARK_FOR_MS;
    expect(parkedAt).toBeGreaterThanOrEqual(startedAt);
    // Senders may hold the topic item from before the park for their catalog cache (5 s by default).
    expect(answeredAt).toBeGreaterThanOrEqual(parkedAt + 5000 + STALE_SENDER_SLACK_MS);
    for (const name of ['orders', 'refunds']) {
      const t = await item(TOPIC_PK, name);
      expect(t.wb).toEqual({ workers: parkedAt + DOORBELL_PARK_FOR_MS });
      expect(t.wu).toBe(parkedAt + DOORBELL_PARK_FOR_MS);
    }
  });

  it('parks again without creating the queue, answers the doorbell at once, and writes the topic items only once 3 minutes of the park have passed', async () => {
    const parkedAt = Number((await item(TOPIC_PK, 'orders')).wu) - DOORBELL_PARK_FOR_MS;
    tableCalls.length = 0;
    const again = await aws.receiveOrPark('workers', { maxMessages: 10, waitSeconds: 20, park: true });
    expect(again.doorbell).toBeDefined();
    expect(sqs.commandCalls(CreateQueueCommand)).toHaveLength(1);
    expect(tableCalls.filter((c) => /^Update/.test(c))).toEqual([]);
    h.clock.advance(parkedAt + 3 * 60_000 - 1 - h.clock.now());
    await aws.receiveOrPark('workers', { maxMessages: 10, waitSeconds: 20, park: true });
    expect(tableCalls.filter((c) => /^Update/.test(c))).toEqual([]);
    // Less than 7 of the 10 minutes left: written again, and still answered at once (the park never lapsed).
    h.clock.advance(parkedAt + 3 * 60_000 + 1 - h.clock.now());
    const refreshed = await aws.receiveOrPark('workers', { maxMessages: 10, waitSeconds: 20, park: true });
    expect(refreshed.doorbell).toBeDefined();
    expect(tableCalls.filter((c) => /^Update/.test(c))).not.toEqual([]);
    expect((await item(TOPIC_PK, 'orders')).wb).toEqual({ workers: parkedAt + 3 * 60_000 + 1 + DOORBELL_PARK_FOR_MS });
    expect(sqs.commandCalls(CreateQueueCommand)).toHaveLength(1);
  });

  it('a second group joins the topic\'s map; `wu` never goes back', async () => {
    const wu = Number((await item(TOPIC_PK, 'orders')).wu);
    h.clock.advance(-1000);
    await aws.receiveOrPark('audit', { maxMessages: 10, waitSeconds: 0, park: true });
    h.clock.advance(1000);
    const orders = await item(TOPIC_PK, 'orders');
    expect(Object.keys(orders.wb as object).sort()).toEqual(['audit', 'workers']);
    expect(orders.wu).toBe(wu);
  });

  it('a send after the park is flagged; the route rings each parked group once for all its segments', async () => {
    sqs.resetHistory();
    await h.queue.send('orders', send('one'));
    const bell = new SqsDoorbell(new SQSClient({ region: 'eu-west-1' }), async (g) => (await h.stores.catalog.getGroup(g))?.doorbellQueueUrl, h.clock);
    const route = new DoorbellRoute(new TopicDoorbellGroups(h.stores.catalog), bell);
    const failed = await route.handle([segment('orders', '1'), segment('orders', '2'), segment('refunds', '3')], h.clock.now());
    expect(failed).toEqual([]);
    const rung = sqs.commandCalls(SendMessageCommand).map((c) => c.args[0].input.QueueUrl);
    expect(rung.sort()).toEqual([(await item(GROUP_PK, 'audit')).bq, (await item(GROUP_PK, 'workers')).bq].sort());
    // A park that ended rings nobody.
    sqs.resetHistory();
    expect(await route.handle([segment('refunds', '4')], h.clock.now() + DOORBELL_PARK_FOR_MS)).toEqual([]);
    expect(sqs.commandCalls(SendMessageCommand)).toHaveLength(0);
  });

  it("the route reads parked groups from the dispatcher's catalog cache: a park is seen within the cache's lifetime, before the park's look ends", async () => {
    const CACHE_MS = 5000;
    // A clock of its own: the file's shared clock stays where the later tests expect it.
    const clock = new FakeClock(h.clock.now());
    await h.admin.putTopic('late', topic());
    await h.admin.putGroup('late-g', group('late'));
    const dispatcherCatalog = new Catalog(h.doc, h.table, { cacheTtlMs: CACHE_MS, now: () => clock.now() });
    const parked = new TopicDoorbellGroups(dispatcherCatalog);
    const readAt = clock.now();
    expect(await parked.parkedOn('late', readAt)).toEqual([]); // cached: no `wb` yet
    clock.advance(100);
    const createdAt = (await h.stores.catalog.getGroup('late-g'))!.createdAt;
    const park = await new DoorbellParker(h.stores.catalog, clock, CACHE_MS).park('late-g', ['late'], createdAt);
    // Still the cached item: not rung. The parking receive looks for what is appended until ringsFrom,
    // which is past the moment this cached item expires.
    expect(await parked.parkedOn('late', clock.now())).toEqual([]);
    expect(park.ringsFrom).toBeGreaterThan(readAt + CACHE_MS);
    clock.t = readAt + CACHE_MS + 1;
    expect(await parked.parkedOn('late', clock.now())).toEqual(['late-g']);
  });

  it('a parking receive that finds messages answers them, without a doorbell', async () => {
    const answer = await aws.receiveOrPark('workers', { maxMessages: 10, waitSeconds: 20, park: true });
    expect(answer.messages.map((m) => m.body)).toEqual(['one']);
    expect(answer.doorbell).toBeUndefined();
  });

  it('a fresh park keeps long-polling until past park + sender cache + 1 s, finding what a stale sender appended; a shorter wait answers without a doorbell', async () => {
    const fresh = new QueueService(h.stores, h.clock, cryptoRandom, new InProcessNotifier(), h.timers, {
      pollIntervalMs: 20,
      doorbells: { parker: new DoorbellParker(h.stores.catalog, h.clock), queues: new SqsDoorbellQueues(new SQSClient({ region: 'eu-west-1' }), 'sluice-test') },
    });
    // A new container (nothing known of the park): a 2 s wait ends before park + 6 s, so no doorbell.
    const short = await whileAdvancing(h.clock, () => fresh.receiveOrPark('workers', { maxMessages: 10, waitSeconds: 2, park: true }));
    expect(short).toEqual({ messages: [] });
    const second = new QueueService(h.stores, h.clock, cryptoRandom, new InProcessNotifier(), h.timers, {
      pollIntervalMs: 20,
      doorbells: { parker: new DoorbellParker(h.stores.catalog, h.clock), queues: new SqsDoorbellQueues(new SQSClient({ region: 'eu-west-1' }), 'sluice-test') },
    });
    h.clock.advance(DOORBELL_PARK_FOR_MS);
    // 'one', leased by an earlier test and not committed, is claimable again now: out of the way first,
    // or the parking receive's first look answers it before the stale send below (a race).
    const leftover = await aws.receive('workers', { maxMessages: 10, waitSeconds: 0 });
    if (leftover.length > 0) await aws.commit('workers', leftover.map((m) => m.receiptHandle));
    // An append no doorbell would ring for (a sender's cached item without `wu`), made while the fresh park's receive waits.
    const pending = second.receiveOrPark('workers', { maxMessages: 10, waitSeconds: 20, park: true });
    const parkedNow = async () => Number(((await item(TOPIC_PK, 'refunds')).wb as Record<string, number> | undefined)?.workers ?? 0);
    await expect.poll(parkedNow, { timeout: 10_000 }).toBeGreaterThan(h.clock.now());
    await h.queue.send('refunds', send('stale'));
    const answer = await whileAdvancing(h.clock, () => pending, 100);
    expect(answer.messages.map((m) => m.body)).toEqual(['stale']);
    expect(answer.doorbell).toBeUndefined();
    await aws.commit('workers', answer.messages.map((m) => m.receiptHandle));
  });

  it('deleting a group deletes its queue; a re-created group gets a queue of another name', async () => {
    const queueUrl = String((await item(GROUP_PK, 'audit')).bq);
    await admin.deleteGroup('audit');
    expect(sqs.commandCalls(DeleteQueueCommand).map((c) => c.args[0].input.QueueUrl)).toEqual([queueUrl]);
    h.clock.advance(60_000);
    await h.admin.putGroup('audit', group('orders'));
    expect((await item(GROUP_PK, 'audit')).bq).toBeUndefined();
    const answer = await whileAdvancing(h.clock, () => aws.receiveOrPark('audit', { maxMessages: 10, waitSeconds: 20, park: true }));
    expect(answer.doorbell?.queueUrl).toBeDefined();
    // The re-created group is parked again (delete-group removed the old entry).
    expect(Object.keys((await item(TOPIC_PK, 'orders')).wb as object)).toContain('audit');
    expect(answer.doorbell?.queueUrl).not.toBe(queueUrl);
  });
});

describe('doorbells on the local runtime', () => {
  it('a parking long poll waits on its group\'s in-process doorbell and receives when the route rings it', async () => {
    const bell = new InProcessDoorbell();
    const local = new QueueService(h.stores, h.clock, cryptoRandom, new InProcessNotifier(), h.timers, {
      pollIntervalMs: 20,
      doorbells: { parker: new DoorbellParker(h.stores.catalog, h.clock), waiter: bell },
    });
    await h.admin.putTopic('local', topic());
    await h.admin.putGroup('local-workers', group('local'));
    // The fake clock does not move by itself: only a ring can end this long poll.
    const polling = local.receiveOrPark('local-workers', { maxMessages: 10, waitSeconds: 20, park: true });
    await expect.poll(async () => (await item(TOPIC_PK, 'local')).wb, { timeout: 10_000 }).toEqual({ 'local-workers': h.clock.now() + DOORBELL_PARK_FOR_MS });
    await h.queue.send('local', send('wake up'));
    expect(await new DoorbellRoute(new TopicDoorbellGroups(h.stores.catalog), bell).handle([segment('local', '1')], h.clock.now())).toEqual([]);
    const answer = await polling;
    expect(answer.messages.map((m) => m.body)).toEqual(['wake up']);
    expect(answer.doorbell).toBeUndefined();
    expect(bell.rings.get('local-workers')).toBe(1);
  });
  it('a doorbell a consumer found gone (doorbellMissing) is created again by the park under the same name, answered a second after, at most once a minute per group here', async () => {
    for (const name of ['mended', 'other']) await h.admin.putGroup(name, group('orders'));
    for (const name of ['mended', 'other']) await whileAdvancing(h.clock, () => aws.receiveOrPark(name, { maxMessages: 10, waitSeconds: 20, park: true }));
    const recorded = String((await item(GROUP_PK, 'mended')).bq);
    const creates = () => sqs.commandCalls(CreateQueueCommand).map((c) => c.args[0].input);
    const before = creates().length;
    const missing = (name = 'mended') => whileAdvancing(h.clock, () => aws.receiveOrPark(name, { maxMessages: 10, waitSeconds: 20, park: true, doorbellMissing: true }));
    const askedAt = h.clock.now();
    const repaired = await missing();
    // CreateQueue of the group's name and attributes: SQS answers the same URL, creating the queue if it is gone;
    // a queue is usable a second after it is created (SQS API Reference, CreateQueue): answered no sooner.
    expect(repaired.doorbell).toEqual({ queueUrl: recorded });
    expect(h.clock.now()).toBeGreaterThanOrEqual(askedAt + QUEUE_USABLE_AFTER_MS);
    expect(creates()).toHaveLength(before + 1);
    expect(urlOf(String(creates()[before]?.QueueName))).toBe(recorded);
    expect(creates()[before]?.Attributes).toEqual(DOORBELL_QUEUE_ATTRIBUTES);
    // The group's other consumers report it too: not again within the minute, and each is answered the doorbell at once.
    h.clock.advance(DOORBELL_REPAIR_EVERY_MS - 1 - (h.clock.now() - askedAt));
    const again = h.clock.now();
    expect((await aws.receiveOrPark('mended', { maxMessages: 10, waitSeconds: 20, park: true, doorbellMissing: true })).doorbell).toEqual({ queueUrl: recorded });
    expect(h.clock.now()).toBe(again);
    expect(creates()).toHaveLength(before + 1);
    // Another group's report within that minute is its own.
    await missing('other');
    expect(creates()).toHaveLength(before + 2);
    expect(urlOf(String(creates()[before + 1]?.QueueName))).toBe(String((await item(GROUP_PK, 'other')).bq));
    h.clock.advance(1);
    await missing();
    expect(creates()).toHaveLength(before + 3);
    expect((await item(GROUP_PK, 'mended')).bq).toBe(recorded);
    // A park that does not report it never creates it.
    await aws.receiveOrPark('mended', { maxMessages: 10, waitSeconds: 20, park: true });
    expect(creates()).toHaveLength(before + 3);
  });

  it('a repair answered without a doorbell (waitSeconds 0) still holds the next park of the group here for the queue\'s first second', async () => {
    await h.admin.putGroup('quick', group('orders'));
    await whileAdvancing(h.clock, () => aws.receiveOrPark('quick', { maxMessages: 10, waitSeconds: 20, park: true }));
    const askedAt = h.clock.now();
    expect(await aws.receiveOrPark('quick', { maxMessages: 10, waitSeconds: 0, park: true, doorbellMissing: true })).toEqual({ messages: [] });
    const next = await whileAdvancing(h.clock, () => aws.receiveOrPark('quick', { maxMessages: 10, waitSeconds: 20, park: true }));
    expect(next.doorbell).toEqual({ queueUrl: String((await item(GROUP_PK, 'quick')).bq) });
    expect(h.clock.now()).toBeGreaterThanOrEqual(askedAt + QUEUE_USABLE_AFTER_MS);
  });

  it('a repair whose CreateQueue fails (the name in its 60 s wait) answers without a doorbell and leaves the minute free for the next report', async () => {
    await h.admin.putGroup('unlucky', group('orders'));
    await whileAdvancing(h.clock, () => aws.receiveOrPark('unlucky', { maxMessages: 10, waitSeconds: 20, park: true }));
    const creates = () => sqs.commandCalls(CreateQueueCommand).length;
    const before = creates();
    sqs.on(CreateQueueCommand).rejectsOnce(Object.assign(new Error('You must wait 60 seconds after deleting a queue'), { name: 'QueueDeletedRecently', $metadata: { httpStatusCode: 400 } }));
    const failed = await whileAdvancing(h.clock, () => aws.receiveOrPark('unlucky', { maxMessages: 10, waitSeconds: 1, park: true, doorbellMissing: true }));
    expect(failed).toEqual({ messages: [] });
    expect(creates()).toBe(before + 1);
    sqs.on(CreateQueueCommand).callsFake((input: { QueueName: string }) => ({ QueueUrl: urlOf(input.QueueName) }));
    const mended = await whileAdvancing(h.clock, () => aws.receiveOrPark('unlucky', { maxMessages: 10, waitSeconds: 20, park: true, doorbellMissing: true }));
    expect(creates()).toBe(before + 2);
    expect(mended.doorbell).toEqual({ queueUrl: String((await item(GROUP_PK, 'unlucky')).bq) });
  });
});
