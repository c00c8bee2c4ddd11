/**
 * The doorbell pieces of design "Waking SDK consumers": the dispatcher route rings each parked
 * group once per invocation and fails exactly the segments whose groups it could not ring; the
 * in-process doorbell wakes a waiting group; the SQS doorbell sends one message per group
 * (aws-sdk-client-mock: SQS has no local twin).
 */
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { mockClient } from 'aws-sdk-client-mock';
import { describe, expect, it } from 'vitest';
import type { SegmentChange } from '../../lib/adapters/dynamodb/segment-changes.js';
import { SqsDoorbell } from '../../lib/adapters/aws/sqs-doorbell.js';
import { InProcessDoorbell } from '../../lib/adapters/local/in-process-doorbell.js';
import type { Doorbell, ParkedGroups } from '../../lib/ports/doorbell.js';
import { DoorbellRoute } from '../../lib/services/doorbell-route.js';

const NOW = 1_800_000_000_000;
const segment = (id: string, topics: string[]): SegmentChange => ({ id, stream: `t:${topics[0]}/p:0`, seq: 1, count: topics.length, topics, noticeLane: undefined, wake: true });

const parkedBy = (byTopic: Record<string, string[] | Error>): ParkedGroups & { reads: string[] } => {
  const reads: string[] = [];
  return {
    reads,
    parkedOn: async (topic) => {
      reads.push(topic);
      const groups = byTopic[topic] ?? [];
      if (groups instanceof Error) throw groups;
      return groups;
    },
  };
};

class RecordingDoorbell implements Doorbell {
  readonly rings: string[][] = [];
  constructor(private readonly refuse: readonly string[] = []) {}
  async ring(groups: readonly string[]) {
    this.rings.push([...groups]);
    return groups.filter((g) => this.refuse.includes(g));
  }
}

describe('DoorbellRoute', () => {
  it('rings each parked group once per invocation, however many segments and topics name it', async () => {
    const parked = parkedBy({ a: ['g1', 'g2'], b: ['g2'], c: [] });
    const bell = new RecordingDoorbell();
    const failed = await new DoorbellRoute(parked, bell).handle([segment('1', ['a']), segment('2', ['a', 'b']), segment('3', ['b']), segment('4', ['c'])], NOW);
    expect(failed).toEqual([]);
    expect(parked.reads.sort()).toEqual(['a', 'b', 'c']);
    expect(bell.rings).toHaveLength(1);
    expect(bell.rings[0]?.sort()).toEqual(['g1', 'g2']);
  });

  it('rings nothing when no group is parked on the topics', async () => {
    const bell = new RecordingDoorbell();
    expect(await new DoorbellRoute(parkedBy({}), bell).handle([segment('1', ['a'])], NOW)).toEqual([]);
    expect(bell.rings).toEqual([]);
  });

  it('fails the segments of the topics whose groups were not rung, and only those', async () => {
    const bell = new RecordingDoorbell(['g2']);
    const failed = await new DoorbellRoute(parkedBy({ a: ['g1'], b: ['g2'] }), bell).handle([segment('1', ['a']), segment('2', ['b']), segment('3', ['a', 'b'])], NOW);
    expect([...failed].sort()).toEqual(['2', '3']);
  });

  it('fails the segments of a topic whose parked groups could not be read, and still rings the others', async () => {
    const bell = new RecordingDoorbell();
    const failed = await new DoorbellRoute(parkedBy({ a: new Error('throttled'), b: ['g2'] }), bell).handle([segment('1', ['a']), segment('2', ['b'])], NOW);
    expect(failed).toEqual(['1']);
    expect(bell.rings).toEqual([['g2']]);
  });

  it('fails every segment of the rung groups when the doorbell throws', async () => {
    const bell: Doorbell = { ring: () => Promise.reject(new Error('down')) };
    const failed = await new DoorbellRoute(parkedBy({ a: ['g1'] }), bell).handle([segment('1', ['a']), segment('2', ['z'])], NOW);
    expect(failed).toEqual(['1']);
  });
});

describe('InProcessDoorbell', () => {
  it('wakes the waiters of a rung group at once, not those of another group', async () => {
    const bell = new InProcessDoorbell();
    const started = Date.now();
    const g1 = bell.wait('g1', 5_000);
    const g2 = bell.wait('g2', 200);
    await bell.ring(['g1']);
    expect(await g1).toBe(true);
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(await g2).toBe(false);
  });

  it('ends a wait when its time is up, and at once when the group was rung after the mark', async () => {
    const bell = new InProcessDoorbell();
    expect(await bell.wait('g', 20)).toBe(false);
    const mark = bell.mark();
    await bell.ring(['g']);
    // Rung between the mark (before a look) and the wait: the wait does not sleep.
    expect(await bell.wait('g', 60_000, mark)).toBe(true);
    expect(await bell.wait('other', 20, mark)).toBe(false);
    expect(bell.rings.get('g')).toBe(1);
  });
});

describe('SqsDoorbell', () => {
  it('sends one message to each group queue and reports the groups SQS refused; groups without a queue are skipped', async () => {
    const sqs = mockClient(SQSClient);
    sqs.on(SendMessageCommand).callsFake((input: { QueueUrl: string }) => {
      if (input.QueueUrl.endsWith('bell-g2')) throw Object.assign(new Error('throttled'), { name: 'ThrottlingException' });
      return { MessageId: 'm' };
    });
    const urls: Record<string, string> = { g1: 'https://sqs.eu-west-1.amazonaws.com/123456789012/p-bell-g1', g2: 'https://sqs.eu-west-1.amazonaws.com/123456789012/p-bell-g2' };
    const bell = new SqsDoorbell(new SQSClient({ region: 'eu-west-1' }), async (g) => urls[g], { now: () => NOW });
    const failed = await bell.ring(['g1', 'g2', 'g3']);
    expect(failed).toEqual(['g2']);
    const sent = sqs.commandCalls(SendMessageCommand).map((c) => c.args[0].input);
    expect(sent.map((i) => i.QueueUrl).sort()).toEqual([urls.g1, urls.g2]);
    expect(JSON.parse(sent.find((i) => i.QueueUrl === urls.g1)?.MessageBody ?? '{}')).toEqual({ group: 'g1', at: NOW });
    sqs.restore();
  });
});
