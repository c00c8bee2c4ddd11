/**
 * A group's notice cursor lags behind what a container absorbed (issue 16, docs/design.md, Group
 * notice cursors): its `advance` is written once it is NOTICE_LAG_MAX (8) notices behind, or at once
 * when a receive meets notices another container absorbed. The container reads on from where it
 * absorbed, but only while the cursor is the one it absorbed for: a seek or a group made again
 * sends it back to the cursor's position, else shards announced there would never be heard of.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import type { DeliveryMode } from '../../lib/domain/model.js';
import { NOTICE_BUCKETS, noticeStream } from '../../lib/domain/streams.js';
import { Seeker } from '../../lib/services/seeker.js';
import { countWrites } from '../helpers/index-units.js';
import { harness, newHarness, send, type Harness } from '../helpers/stores.js';
import * as build from '../helpers/builders.js';

let h: Harness;
let writes: string[];

const receive = (queue: Harness['queue'], g: string, max = 10) => queue.receive(g, { maxMessages: max, waitSeconds: 0, topics: undefined });
const subscribe = (g: string, mode: DeliveryMode = 'serialized', startFrom: 'latest' | 'earliest' = 'latest') =>
  h.admin.putGroup(g, build.group([{ topic: 'ledger', tags: undefined, startFrom }], { deliveryMode: mode, visibilityTimeoutSeconds: 30 }));
/** Two shard keys. One container's sends stick to one notice stream (sender.ts, `announce`): both keys' notices go there. */
const sameBucket = (): { keys: [string, string] } => ({ keys: ['A', 'B'] });
/** The one notice stream (bucket) the sends so far wrote to. */
const bucketWritten = async (): Promise<number> => {
  const written: number[] = [];
  for (let b = 0; b < NOTICE_BUCKETS; b++) if ((await h.stores.log.head(noticeStream('t:ledger', b))).kind === 'segment') written.push(b);
  expect(written).toHaveLength(1);
  return written[0]!;
};
const noticeNext = async (g: string, bucket: number): Promise<number> =>
  Number(
    (await h.doc.send(new GetCommand({ TableName: h.table, Key: { pk: `C#${g}`, sk: noticeStream('t:ledger', bucket) }, ConsistentRead: true })))
      .Item?.nx,
  );

/** Receives and commits on `queue` until a receive brings nothing; the bodies, in delivery order. */
async function drain(queue: Harness['queue'], g: string): Promise<string[]> {
  const out: string[] = [];
  for (let round = 0; round < 50; round++) {
    const got = await receive(queue, g);
    if (got.length === 0) break;
    out.push(...got.map((m) => m.body));
    expect((await queue.commit(g, got.map((m) => m.receiptHandle))).every((r) => 'status' in r && r.status === 'committed')).toBe(true);
  }
  return out;
}

beforeEach(async () => {
  h = await newHarness();
  writes = [];
  countWrites(h.doc, (command) => writes.push(command));
  await h.admin.putTopic('ledger', build.topic({ type: 'fifo' }));
});

describe('the FIFO notice cursor lags behind what a container absorbed', () => {
  it('moves once 8 notices behind; until then a receive writes only its claim, and reads no notice twice', async () => {
    await subscribe('g');
    const { keys } = sameBucket();
    // Both shards' cursors exist (their creation is a transaction of its own): 2 notices absorbed.
    await h.queue.send('ledger', send('a0', { shardKey: keys[0] }));
    await h.queue.send('ledger', send('b0', { shardKey: keys[1] }));
    const bucket = await bucketWritten();
    const start = await noticeNext('g', bucket);
    expect((await drain(h.queue, 'g')).sort()).toEqual(['a0', 'b0']);
    expect(await noticeNext('g', bucket)).toBe(start);
    for (let absorbed = 3; absorbed <= 17; absorbed++) {
      await h.queue.send('ledger', send(`m${absorbed}`, { shardKey: keys[absorbed % 2] }));
      writes = [];
      const got = await receive(h.queue, 'g');
      expect(got.map((m) => m.body)).toEqual([`m${absorbed}`]);
      // The claim, and the notice cursor's advance only with the 8th and 16th notice.
      expect(writes).toEqual(absorbed % 8 === 0 ? ['UpdateItemCommand', 'UpdateItemCommand'] : ['UpdateItemCommand']);
      expect(await noticeNext('g', bucket)).toBe(start + 8 * Math.floor(absorbed / 8));
      expect((await h.queue.commit('g', [got[0]!.receiptHandle]))[0]).toMatchObject({ status: 'committed' });
    }
    writes = [];
    expect(await receive(h.queue, 'g')).toEqual([]);
    expect(writes).toEqual([]);
  });

  it('another container reads the notices again: nothing is delivered twice, and it moves the cursor at once', async () => {
    await subscribe('g');
    const { keys } = sameBucket();
    const other = harness(h.doc, h.table, { clock: h.clock });
    await h.queue.send('ledger', send('a1', { shardKey: keys[0] }));
    await h.queue.send('ledger', send('b1', { shardKey: keys[1] }));
    const bucket = await bucketWritten();
    const start = await noticeNext('g', bucket);
    expect((await drain(h.queue, 'g')).sort()).toEqual(['a1', 'b1']);
    expect(await noticeNext('g', bucket)).toBe(start);
    // The other container starts at the cursor: it reads both notices again, finds their shards
    // raised and idle, delivers nothing and moves the cursor past them.
    expect(await drain(other.queue, 'g')).toEqual([]);
    expect(await noticeNext('g', bucket)).toBe(start + 2);
    // Having met notices another container absorbed, it moves the cursor at every receive with news
    // (for NOTICE_SHARED_MS), so the first container does not read its notices again either.
    await h.queue.send('ledger', send('a2', { shardKey: keys[0] }));
    expect(await drain(other.queue, 'g')).toEqual(['a2']);
    expect(await noticeNext('g', bucket)).toBe(start + 3);
    await h.queue.send('ledger', send('b2', { shardKey: keys[1] }));
    expect(await drain(h.queue, 'g')).toEqual(['b2']);
    // One fresh notice and one the other container absorbed, one message wanted: the absorbed one is
    // met by a claim or by its raise on its own, and either way the cursor moves past both.
    await h.queue.send('ledger', send('a3', { shardKey: keys[0] }));
    const [a3] = await receive(h.queue, 'g', 1);
    expect(a3?.body).toBe('a3');
    await h.queue.send('ledger', send('b3', { shardKey: keys[1] }));
    expect((await receive(other.queue, 'g', 1)).map((m) => m.body)).toEqual(['b3']);
    expect(await noticeNext('g', bucket)).toBe(start + 6);
  });

  it('a lease that expires behind a lagging cursor is delivered again, by either container, in order', async () => {
    await subscribe('g');
    const { keys } = sameBucket();
    const other = harness(h.doc, h.table, { clock: h.clock });
    await h.queue.send('ledger', send('a1', { shardKey: keys[0] }));
    await h.queue.send('ledger', send('a2', { shardKey: keys[0] }));
    const [first] = await receive(h.queue, 'g');
    expect(first?.body).toBe('a1');
    // Nobody commits it: the other container re-reads the notice, finds the lease held: nothing.
    expect(await receive(other.queue, 'g')).toEqual([]);
    h.clock.advance(31_000);
    // A third container's first receive reads the notice again too: the shard it announced is
    // claimed (its index entry is due), not passed over as a notice absorbed before.
    const third = harness(h.doc, h.table, { clock: h.clock });
    const again = await receive(third.queue, 'g');
    expect(again.map((m) => [m.body, m.deliveryCount])).toEqual([['a1', 2]]);
    expect((await third.queue.commit('g', [again[0]!.receiptHandle]))[0]).toMatchObject({ status: 'committed' });
    expect(await drain(other.queue, 'g')).toEqual(['a2']);
  });

  it('after a seek to earliest, a container reads from the cursor again: shards announced before the group are heard of', async () => {
    const { keys } = sameBucket();
    // Announced before the group existed: the group's notice cursor starts after it.
    await h.queue.send('ledger', send('old', { shardKey: keys[1] }));
    await subscribe('g');
    await h.queue.send('ledger', send('new', { shardKey: keys[0] }));
    expect(await drain(h.queue, 'g')).toEqual(['new']);
    await new Seeker(h.stores, h.clock).seek('g', 'earliest', undefined);
    // Without the seek count in the memo's validity, this container would read on after 'new'.
    expect((await drain(h.queue, 'g')).sort()).toEqual(['new', 'old']);
  });

  it('a group deleted and made again reads from its new cursors, not from what the old group absorbed', async () => {
    const { keys } = sameBucket();
    await subscribe('g', 'serialized', 'earliest');
    await h.queue.send('ledger', send('a1', { shardKey: keys[0] }));
    expect(await drain(h.queue, 'g')).toEqual(['a1']);
    await h.admin.deleteGroup('g');
    h.clock.advance(60_000);
    await subscribe('g', 'serialized', 'earliest');
    // Without the cursor's creation time in the memo's validity, the new group would skip 'a1'.
    expect(await drain(h.queue, 'g')).toEqual(['a1']);
  });
});
