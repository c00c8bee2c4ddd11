/**
 * A group stays subscribed while its topic is deleted, so a topic created again
 * with more partitions (standard) or notice streams (FIFO) has streams the
 * group never had a cursor on. The receive that meets such a stream creates
 * the cursor where the topic's new generation starts there — not at the head,
 * which would skip every message sent to it before that receive (found by a
 * curl check of `npm start`: a FIFO topic re-created with 16 notice streams
 * answered 4 of 16 messages, the shards announced on streams 0–3).
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { newHarness, send, type Harness } from '../helpers/stores.js';
import * as build from '../helpers/builders.js';
import { cyclingRandom } from '../helpers/random.js';

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
