/**
 * Found by an audit (2026-12-04); before its fix, a shard stream holds two epochs when its head segment neared its ttl while older
 * segments still live (a time-order group whose topics have different retentions; a topic whose
 * retention was lowered: docs/design.md, Idle shards expire, "Statistics"). A seek to a time
 * binary-searches the stream; a probe that falls in the gap between the epochs moves the search up,
 * so live messages of the old epoch deliverable after the time are skipped.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { Seeker } from '../../lib/services/seeker.js';
import * as build from '../helpers/builders.js';
import { newHarness, send, type Harness } from '../helpers/stores.js';
import { drainBodies } from '../helpers/drain.js';

let h: Harness;
const receive = (g: string, max = 100) => h.queue.receive(g, { maxMessages: max, waitSeconds: 0 });
const drain = (g: string) => drainBodies(h, g);

beforeEach(async () => {
  h = await newHarness();
});

describe('seek to a time over a shard with two live epochs', () => {
  it('time-order group, topics of 1 day and 300 s retention: the old epoch is replayed', async () => {
    await h.admin.putTopic('long', build.topic({ type: 'fifo', orderGroup: 'og', retentionSeconds: 86_400 }));
    await h.admin.putTopic('short', build.topic({ type: 'fifo', orderGroup: 'og', retentionSeconds: 300 }));
    await h.admin.putGroup('g', build.group(['long', 'short'], { deliveryMode: 'concurrent', visibilityTimeoutSeconds: 30 }));
    h.clock.advance(1);
    const from = h.clock.now();
    await h.queue.send('long', send('x1', { shardKey: 'A' }));
    h.clock.advance(1_000);
    await h.queue.send('short', send('y1', { shardKey: 'A' }));
    expect(await drain('g')).toEqual(['x1', 'y1']);
    // The head (y1) within a minute of its ttl: the next append opens a new epoch; x1 lives on (1 day).
    h.clock.advance(270_000);
    await h.queue.send('short', send('y2', { shardKey: 'A' }));
    expect(await drain('g')).toEqual(['y2']);
    // Everything is retained: x1 (1 day), y1 (until from + 301 s), y2.
    await new Seeker(h.stores, h.clock).seek('g', from, undefined);
    expect(await drain('g')).toEqual(['x1', 'y1', 'y2']);
  });

  it('control: seek earliest replays the same three', async () => {
    await h.admin.putTopic('long', build.topic({ type: 'fifo', orderGroup: 'og', retentionSeconds: 86_400 }));
    await h.admin.putTopic('short', build.topic({ type: 'fifo', orderGroup: 'og', retentionSeconds: 300 }));
    await h.admin.putGroup('g', build.group(['long', 'short'], { deliveryMode: 'concurrent', visibilityTimeoutSeconds: 30 }));
    h.clock.advance(1);
    await h.queue.send('long', send('x1', { shardKey: 'A' }));
    h.clock.advance(1_000);
    await h.queue.send('short', send('y1', { shardKey: 'A' }));
    expect(await drain('g')).toEqual(['x1', 'y1']);
    h.clock.advance(270_000);
    await h.queue.send('short', send('y2', { shardKey: 'A' }));
    expect(await drain('g')).toEqual(['y2']);
    await new Seeker(h.stores, h.clock).seek('g', 'earliest', undefined);
    expect(await drain('g')).toEqual(['x1', 'y1', 'y2']);
  });
});
