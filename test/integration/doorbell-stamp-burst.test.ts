/**
 * Found by a review (2026-12-04), before its fix: a doorbell ring's receive leads with the 4 last-stamped partitions of a
 * sampled topic. Five producers (five sender containers, five partitions) send at once; the dispatcher's
 * one invocation stamps all five partitions (same `now`) and rings. The consumer (SDK Consumer behaviour:
 * receive with park while messages come, then back to the SQS doorbell) should get all five before it goes
 * back to waiting on the doorbell. It gets four; the fifth waits for later 5-minute receives, each of which
 * now leads with the same 4 stale stamps (named: half the sample), so the rotation covers only 4 a look.
 */
import { CreateQueueCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ActivityRoute } from '../../lib/services/activity-route.js';
import { cryptoRandom, type Random } from '../../lib/ports/random.js';
import { QueueService } from '../../lib/services/queue-service.js';
import { group, topic } from '../helpers/builders.js';
import { whileAdvancing } from '../helpers/advancing.js';
import { newHarness, send, type Harness } from '../helpers/stores.js';
import { awsDoorbells } from '../helpers/aws-doorbells.js';
import { InProcessNotifier } from '../../lib/ports/notifier.js';

const sqs = mockClient(SQSClient);
let h: Harness;
let aws: QueueService;
let route: ActivityRoute;
let appended: string[];
/** Rotation and fair pointer start at partition 0 (deterministic). */
const fixed = (f: number): Random => ({ ...cryptoRandom, fraction: () => f });

beforeAll(async () => {
  sqs.on(CreateQueueCommand).callsFake((input: { QueueName: string }) => ({ QueueUrl: `https://sqs.eu-west-1.amazonaws.com/123456789012/${input.QueueName}` }));
  sqs.on(SendMessageCommand).resolves({ MessageId: 'm' });
  h = await newHarness();
  ({ aws, route, appended } = awsDoorbells(h, fixed(0)));
});
afterAll(() => sqs.restore());

describe('five messages on five partitions of a 256-partition topic, one dispatcher invocation, a doorbell consumer', () => {
  it('the receives the ring starts answer all five', async () => {
    await h.admin.putTopic('five', topic({ partitions: 256 }));
    await h.admin.putGroup('g5', group('five'));
    expect((await whileAdvancing(h.clock, () => aws.receiveOrPark('g5', { maxMessages: 10, waitSeconds: 20, park: true }))).doorbell).toBeDefined();
    const segments = [];
    for (const [i, p] of [100, 120, 140, 160, 180].entries()) {
      // Another sender container each: its sticky partition is p.
      const sender = new QueueService(h.stores, h.clock, fixed((p + 0.5) / 256), new InProcessNotifier(), h.timers);
      await sender.send('five', send(`m-${p}`));
      const stream = appended.filter((s) => s.startsWith('t:five/p:')).at(-1) ?? '';
      expect(stream).toBe(`t:five/p:${p}`);
      segments.push({ id: `s${i}`, stream, seq: 1, count: 1, topics: ['five'], noticeLane: undefined, wake: true });
    }
    // One dispatcher invocation for the five flagged segments: stamps p100..p180 with one `now`, rings.
    await route.handle(segments, h.clock.now());
    // The SDK consumer: receives (park) while messages come; an empty answer sends it back to the doorbell.
    const got: string[] = [];
    for (;;) {
      const answer = await aws.receiveOrPark('g5', { maxMessages: 10, waitSeconds: 20, park: true });
      if (answer.messages.length === 0) break;
      got.push(...answer.messages.map((m) => m.body));
      await aws.commit('g5', answer.messages.map((m) => m.receiptHandle));
    }
    console.log(`answered by the ring's receives: ${JSON.stringify([...got].sort())}`);
    // How many 5-minute receives the rest waits for (informational).
    let receives = 0;
    while (got.length < 5 && receives < 100) {
      h.clock.advance(5 * 60_000);
      const answer = await aws.receiveOrPark('g5', { maxMessages: 10, waitSeconds: 20, park: true });
      got.push(...answer.messages.map((m) => m.body));
      receives++;
    }
    expect({ fiveMinuteReceivesAfterTheRing: receives, got: [...got].sort() }).toEqual({
      fiveMinuteReceivesAfterTheRing: 0,
      got: ['m-100', 'm-120', 'm-140', 'm-160', 'm-180'],
    });
  });
});
