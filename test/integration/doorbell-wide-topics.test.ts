/**
 * Found by an audit (2026-12-04): an SDK consumer parked on its group's SQS doorbell (AWS mode, SQS mocked) on a wide
 * FIFO topic (and, the same way, on a standard topic of 256 partitions). A ring makes the consumer receive once with `park: true`; that receive makes one look
 * and answers the doorbell again when the look found nothing. The look reads a sample of 8 of the
 * topic's notice streams, with no stamps to lead it (the doorbell path never reads `A#<topic>`).
 */
import { CreateQueueCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ActivityRoute } from '../../lib/services/activity-route.js';
import { QueueService } from '../../lib/services/queue-service.js';
import { group, topic } from '../helpers/builders.js';
import { whileAdvancing } from '../helpers/advancing.js';
import { newHarness, send, type Harness } from '../helpers/stores.js';
import { awsDoorbells } from '../helpers/aws-doorbells.js';

const sqs = mockClient(SQSClient);
let h: Harness;
let aws: QueueService;
/** The dispatcher's activity route (stamps `A#<topic>` for each flagged notice segment), and the notice streams sends wrote to. */
let route: ActivityRoute;
let noticed: string[];
/** The streams sends appended segments to (a standard topic's partitions). */
let appended: string[];

beforeAll(async () => {
  sqs.on(CreateQueueCommand).callsFake((input: { QueueName: string }) => ({ QueueUrl: `https://sqs.eu-west-1.amazonaws.com/123456789012/${input.QueueName}` }));
  sqs.on(SendMessageCommand).resolves({ MessageId: 'm' });
  h = await newHarness();
  ({ aws, route, appended, noticed } = awsDoorbells(h));
});
afterAll(() => sqs.restore());

describe('a lone message on a FIFO topic of 256 notice streams, a doorbell consumer', () => {
  it('is answered by the receive its ring starts, not only after many 5-minute receives', async () => {
    await h.admin.putTopic('lone', topic({ type: 'fifo', partitions: 256 }));
    await h.admin.putGroup('gl', group('lone'));
    expect((await whileAdvancing(h.clock, () => aws.receiveOrPark('gl', { maxMessages: 10, waitSeconds: 20, park: true }))).doorbell).toBeDefined();
    await h.queue.send('lone', send('only', { shardKey: 'order-42' }));
    await route.handle([{ id: 'lone', stream: noticed.at(-1) ?? '', seq: 1, count: 1, topics: ['lone'], noticeLane: undefined, wake: true }], h.clock.now());
    // The ring's receive, then the Consumer's real receive every 5 minutes (DOORBELL_RECEIVE_EVERY_MS).
    let receives = 0;
    let got: string[] = [];
    while (got.length === 0 && receives < 40) {
      got = (await aws.receiveOrPark('gl', { maxMessages: 10, waitSeconds: 20, park: true })).messages.map((m) => m.body);
      receives++;
      if (got.length === 0) h.clock.advance(5 * 60_000);
    }
    expect(got).toEqual(['only']);
    expect(receives).toBe(1);
  });
});

describe.each([256])('a doorbell consumer of a FIFO topic of %i notice streams', (partitions) => {
  it('the receive a ring starts answers the message the ring was for', async () => {
    const t = `wide${partitions}`;
    const g = `g${partitions}`;
    await h.admin.putTopic(t, topic({ type: 'fifo', partitions }));
    await h.admin.putGroup(g, group(t));
    // The consumer parks: nothing yet, so it gets its doorbell.
    const parked = await whileAdvancing(h.clock, () => aws.receiveOrPark(g, { maxMessages: 10, waitSeconds: 20, park: true }));
    expect(parked.doorbell).toBeDefined();
    const late: string[] = [];
    for (const key of ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h']) {
      // A producer (another container) sends; the dispatcher rings; the consumer receives once.
      await h.queue.send(t, send(`m-${key}`, { shardKey: key }));
      // The dispatcher's invocation for the flagged notice segment: it stamps `A#<topic>` and rings.
      await route.handle([{ id: key, stream: noticed.at(-1) ?? '', seq: 1, count: 1, topics: [t], noticeLane: undefined, wake: true }], h.clock.now());
      const rung = await aws.receiveOrPark(g, { maxMessages: 10, waitSeconds: 20, park: true });
      const bodies = rung.messages.map((m) => m.body);
      if (!bodies.includes(`m-${key}`)) late.push(`m-${key}`);
      if (rung.messages.length > 0) await aws.commit(g, rung.messages.map((m) => m.receiptHandle));
      h.clock.advance(1000);
    }
    expect(late).toEqual([]);
  });
});

describe('a lone message on a standard topic of 256 partitions, a doorbell consumer', () => {
  it('is answered by the receive its ring starts (the partition the dispatcher stamped leads the sample)', async () => {
    await h.admin.putTopic('lone-standard', topic({ partitions: 256 }));
    await h.admin.putGroup('gs', group('lone-standard'));
    expect((await whileAdvancing(h.clock, () => aws.receiveOrPark('gs', { maxMessages: 10, waitSeconds: 20, park: true }))).doorbell).toBeDefined();
    await h.queue.send('lone-standard', send('only'));
    const stream = appended.filter((s) => s.startsWith('t:lone-standard/p:')).at(-1) ?? '';
    await route.handle([{ id: 'lone-standard', stream, seq: 1, count: 1, topics: ['lone-standard'], noticeLane: undefined, wake: true }], h.clock.now());
    let receives = 0;
    let got: string[] = [];
    while (got.length === 0 && receives < 40) {
      got = (await aws.receiveOrPark('gs', { maxMessages: 10, waitSeconds: 20, park: true })).messages.map((m) => m.body);
      receives++;
      if (got.length === 0) h.clock.advance(5 * 60_000);
    }
    expect(got).toEqual(['only']);
    expect(receives).toBe(1);
  });
});
