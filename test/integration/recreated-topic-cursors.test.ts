/**
 * A group stays subscribed while its topic is deleted, so a topic created again
 * with more partitions (standard) or notice streams (FIFO) has streams the
 * group never had a cursor on. The receive that meets such a stream creates
 * the cursor where the topic's new generation starts there — not at the head,
 * which would skip every message sent to it before that receive (found by a
 * curl check of `npm start`: a FIFO topic re-created with 16 notice streams
 * answered 4 of 16 messages, the shards announced on streams 0–3). A seek that
 * meets such a stream creates the cursor at the same place (missingCursorStart),
 * so one stopped before its own write skips nothing either.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { newHarness, send, type Harness } from '../helpers/stores.js';
import * as build from '../helpers/builders.js';
import { cyclingRandom } from '../helpers/random.js';
import { Seeker } from '../../lib/services/seeker.js';

let h: Harness;


beforeEach(async () => {
  h = await newHarness({ random: cyclingRandom() });
});

/** Receives and commits until `want` bodies came or 60 receives passed; the bodies received. */
async function drain(group: string, want: number): Promise<string[]> {
  const out: string[] = [];
  for (let round = 0; round < 60 && out.length < want; round++) {
    const got = await h.queue.receive(group, { maxMessages: 10, waitSeconds: 0 });
    out.push(...got.map((m) => m.body));
    if (got.length > 0) await h.queue.commit(group, got.map((m) => m.receiptHandle));
  }
  return out;
}

describe('a topic created again with more streams, its groups still subscribed', () => {
  it('FIFO, 4 → 16 notice streams: every message sent before the group\'s first receive is delivered', async () => {
    await h.admin.putTopic('fq', build.topic({ type: 'fifo' }));
    await h.admin.putGroup('fg', build.group('fq'));
    await h.admin.deleteTopic('fq');
    await h.admin.putTopic('fq', build.topic({ type: 'fifo', partitions: 16 }));
    const keys = 'abcdefghijklmnop'.split('');
    for (const k of keys) await h.queue.send('fq', send(`m-${k}`, { shardKey: k }));
    expect((await drain('fg', keys.length)).sort()).toEqual(keys.map((k) => `m-${k}`));
  });

  it('standard, 1 → 8 partitions: every message sent before the group\'s first receive is delivered', async () => {
    await h.admin.putTopic('st', build.topic({ partitions: 1 }));
    await h.admin.putGroup('sg', build.group('st'));
    await h.queue.send('st', send('old generation'));
    await h.admin.deleteTopic('st');
    await h.admin.putTopic('st', build.topic({ partitions: 8 }));
    const bodies = Array.from({ length: 32 }, (_, i) => `new-${i}`);
    for (let i = 0; i < bodies.length; i += 8) await Promise.all(bodies.slice(i, i + 8).map((b) => h.queue.send('st', send(b))));
    expect((await drain('sg', bodies.length)).sort()).toEqual([...bodies].sort());
  });
});

describe('seeking a group on a topic created again with more notice streams', () => {
  const keys = 'abcdefghijklmnop'.split('');
  const recreate = async () => {
    await h.admin.putTopic('fq', build.topic({ type: 'fifo' }));
    await h.admin.putGroup('fg', build.group('fq'));
    await h.admin.deleteTopic('fq');
    await h.admin.putTopic('fq', build.topic({ type: 'fifo', partitions: 16 }));
    for (const k of keys) await h.queue.send('fq', send(`m-${k}`, { shardKey: k }));
  };

  it('to the start, and by time: every message is delivered after each', async () => {
    const sentFrom = h.clock.now();
    await recreate();
    h.clock.advance(1_000);
    const seeker = new Seeker(h.stores, h.clock);
    await seeker.seek('fg', 'earliest', undefined);
    expect((await drain('fg', keys.length)).sort()).toEqual(keys.map((k) => `m-${k}`));
    await seeker.seek('fg', sentFrom, undefined);
    expect((await drain('fg', keys.length)).sort()).toEqual(keys.map((k) => `m-${k}`));
  });

  it('a seek that stops after creating the missing notice cursors (before moving them) skips no message', async () => {
    const sentFrom = h.clock.now();
    await recreate();
    h.clock.advance(1_000);
    // Every notice write of the seek fails (left so for the rest of the test: moves still in
    // flight when the seek rejects fail too), as when its Lambda stops or its calls are throttled.
    h.stores.cursors.seekNotice = async () => {
      throw new Error('injected: the seek stops before its notice write');
    };
    await expect(new Seeker(h.stores, h.clock).seek('fg', sentFrom, undefined)).rejects.toThrow('injected');
    expect((await drain('fg', keys.length)).sort()).toEqual(keys.map((k) => `m-${k}`));
  });
});
