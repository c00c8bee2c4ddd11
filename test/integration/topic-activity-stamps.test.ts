/**
 * Partition stamps on the topic activity item (docs/design.md, "Receive with many partitions"), on
 * DynamoDB Local: stamped by the dispatcher's touch, read with `at` in one GetItem of ½ read unit
 * at the maximum partition count, and never lost to a concurrent invocation that moved `at` first.
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { Limits } from '../../lib/domain/model.js';
import { TopicActivity, activityKey } from '../../lib/adapters/dynamodb/topic-activity.js';
import { testTable } from '../helpers/stores.js';
import { ActivityRoute } from '../../lib/services/activity-route.js';
import type { SegmentChange } from '../../lib/adapters/dynamodb/segment-changes.js';
import type { Topic } from '../../lib/domain/model.js';
import * as build from '../helpers/builders.js';

describe('topic activity partition stamps', () => {
  it('stamps partitions with `at`; a touch that finds `at` moved past it lands 1 ms later, stamps included', async () => {
    const { doc, table } = await testTable();
    const activity = new TopicActivity(doc, table);
    const now = 1_800_000_000_000;
    expect(await activity.touch('t', now, [3, 7, 3])).toBe(true);
    expect(await activity.activity('t')).toEqual({ at: now, partitions: new Map([[3, now], [7, now]]) });
    // Another invocation got there first with a later time: this one's stamps still land, and `at`
    // moves past the other's, so a waiter that looked after the other's write wakes again.
    expect(await activity.touch('t', now + 5, [9])).toBe(true);
    expect(await activity.touch('t', now + 2, [11])).toBe(true);
    const read = await activity.activity('t');
    expect(read.at).toBe(now + 6);
    expect(read.partitions.get(11)).toBe(now + 6);
    expect(read.partitions.get(9)).toBe(now + 5);
    // Without partitions (FIFO notices, other topics' writes) an older time changes nothing, as before.
    expect(await activity.touch('t', now, [])).toBe(false);
    expect(await activity.lastActivity('t')).toBe(now + 6);
    expect(await activity.activity('never')).toEqual({ at: 0, partitions: new Map() });
  });

  it(`every one of ${Limits.partitionsMax} partitions stamped, with a 128-character topic name: the item stays one 4 KB read unit (½ RRU eventually consistent)`, async () => {
    const { doc, table } = await testTable();
    const activity = new TopicActivity(doc, table);
    const topic = 'x'.repeat(128);
    const now = 1_800_000_000_000;
    const all = Array.from({ length: Limits.partitionsMax }, (_, p) => p);
    // A dispatcher invocation holds at most 100 segments: at most 100 partitions per touch.
    for (let i = 0; i < all.length; i += 100) expect(await activity.touch(topic, now + i, all.slice(i, i + 100))).toBe(true);
    const read = await activity.activity(topic);
    expect(read.partitions.size).toBe(Limits.partitionsMax);
    const { ConsumedCapacity } = await doc.send(new GetCommand({ TableName: table, Key: activityKey(topic), ReturnConsumedCapacity: 'TOTAL' }));
    expect(ConsumedCapacity?.CapacityUnits).toBe(0.5);
  });

  it('a FIFO topic with 16 notice streams: stamps of streams 0–3 land too after another invocation moved `at` first', async () => {
    const { doc, table } = await testTable();
    const activity = new TopicActivity(doc, table);
    const topic = { ...build.topic({ type: 'fifo', partitions: 16 }), name: 'wide', generation: 1, createdAt: 0 } as Topic;
    const route = new ActivityRoute(activity, undefined, { topic: async (name) => (name === 'wide' ? topic : undefined) });
    const notice = (b: number, id: string): SegmentChange => ({ id, stream: `t:wide/n:${b}`, seq: 1, count: 1, topics: ['wide'], noticeLane: undefined, wake: true });
    const now = 1_800_000_000_000;
    expect(await route.handle([notice(9, 'a')], now + 5)).toEqual([]);
    // A later-arriving invocation with an earlier time, stamping streams 2 and 3 only.
    expect(await route.handle([notice(2, 'b'), notice(3, 'c')], now + 2)).toEqual([]);
    const read = await activity.activity('wide');
    expect(read.at).toBe(now + 6);
    expect(new Map([...read.partitions].sort((x, y) => x[0] - y[0]))).toEqual(new Map([[2, now + 6], [3, now + 6], [9, now + 5]]));
  });
});
