/**
 * Seeking a consumer group on FIFO topics (issue 17 item 2) on DynamoDB Local: notice cursors
 * and every shard cursor move; per shard, order holds from the new position.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { InvalidArgumentError, ReceiptHandleExpiredError } from '../../lib/domain/errors.js';
import type { DeliveryMode } from '../../lib/domain/model.js';
import { Seeker } from '../../lib/services/seeker.js';
import { noticeBucket, noticeStream } from '../../lib/domain/streams.js';
import { newHarness, send, type Harness } from '../helpers/stores.js';
import * as build from '../helpers/builders.js';

let h: Harness;
let seeker: Seeker;

beforeEach(async () => {
  h = await newHarness();
  seeker = new Seeker(h.stores, h.clock);
  await h.admin.putTopic('ledger', build.topic({ type: 'fifo' }));
});

const group = (name: string, topics: string[], mode: DeliveryMode = 'serialized') =>
  h.admin.putGroup(name, build.group(topics, { deliveryMode: mode, visibilityTimeoutSeconds: 30 }));
const receive = (g: string, max = 10) => h.queue.receive(g, { maxMessages: max, waitSeconds: 0 });

interface Got {
  body: string;
  shardKey: string | null;
  sequence: number | null;
  deliveryCount: number;
}

/** Receives and commits until two receives in a row bring nothing; what came, in delivery order. */
async function drain(g: string): Promise<Got[]> {
  const out: Got[] = [];
  let empty = 0;
  for (let round = 0; round < 400 && empty < 2; round++) {
    const got = await receive(g);
    if (got.length === 0) {
      empty++;
      continue;
    }
    empty = 0;
    out.push(...got.map((m) => ({ body: m.body, shardKey: m.shardKey, sequence: m.sequence, deliveryCount: m.deliveryCount })));
    const results = await h.queue.commit(g, got.map((m) => m.receiptHandle));
    expect(results.every((r) => 'status' in r)).toBe(true);
  }
  return out;
}

/** Bodies per shard key, in the order they were delivered. */
const perShard = (got: Got[]): Record<string, string[]> => {
  const out: Record<string, string[]> = {};
  for (const m of got) (out[m.shardKey ?? ''] ??= []).push(m.body);
  return out;
};

const sendShard = async (shard: string, bodies: string[]) => {
  for (const body of bodies) await h.queue.send('ledger', send(body, { shardKey: shard }));
};

describe('seek on FIFO topics', () => {
  it.each(['serialized', 'concurrent', 'protected'] as const)(
    '%s: earliest replays every retained message of every shard in order, deliveryCount 1, also shards sent before the group existed',
    async (mode) => {
      await sendShard('early', ['e1', 'e2']);
      h.clock.advance(1000);
      await group('g', ['ledger'], mode);
      await h.queue.sendBatch('ledger', [send('a1', { shardKey: 'A' }), send('b1', { shardKey: 'B' }), send('a2', { shardKey: 'A' })]);
      await sendShard('A', ['a3']);
      await sendShard('B', ['b2', 'b3']);
      // Subscribed at "latest": the early shard is not delivered.
      expect(perShard(await drain('g'))).toEqual({ A: ['a1', 'a2', 'a3'], B: ['b1', 'b2', 'b3'] });

      const answer = await seeker.seek('g', 'earliest', undefined);
      expect(answer).toMatchObject({ group: 'g', positions: [], shards: [{ topics: ['ledger'], moved: 2 }] });
      expect((await h.admin.getGroup('g')).backlog).toBeGreaterThanOrEqual(6);
      const again = await drain('g');
      expect(perShard(again)).toEqual({ A: ['a1', 'a2', 'a3'], B: ['b1', 'b2', 'b3'], early: ['e1', 'e2'] });
      expect(again.every((m) => m.deliveryCount === 1)).toBe(true);
      // Sequences increase per shard; a shard's first comes from the clock (docs/design.md, Idle shards expire).
      const first = again.find((m) => m.shardKey === 'A')?.sequence ?? 0;
      expect(again.filter((m) => m.shardKey === 'A').map((m) => m.sequence)).toEqual([first, first + 1, first + 2]);
      // Later messages follow in order.
      await sendShard('A', ['a4']);
      expect(perShard(await drain('g'))).toEqual({ A: ['a4'] });
    },
  );

  it('a time replays each shard from its first message deliverable at or after it', async () => {
    const t0 = h.clock.now();
    await sendShard('old', ['o1']); // before the group exists; and only before the time
    await sendShard('before', ['x1']); // before the group exists, after the time
    h.clock.advance(10_000);
    const t10 = h.clock.now();
    await sendShard('before', ['x2']);
    h.clock.advance(10_000);
    await group('g', ['ledger']);
    for (let i = 1; i <= 4; i++) {
      h.clock.advance(10_000);
      await sendShard('A', [`a${i}`]);
      await sendShard('B', [`b${i}`]);
    }
    expect(perShard(await drain('g'))).toEqual({ A: ['a1', 'a2', 'a3', 'a4'], B: ['b1', 'b2', 'b3', 'b4'] });

    // Forwards within what the group has seen: t0 + 50 s is a3's and b3's time.
    await seeker.seek('g', t0 + 50_000, undefined);
    expect(perShard(await drain('g'))).toEqual({ A: ['a3', 'a4'], B: ['b3', 'b4'] });

    // Back to before the group existed: shards it never heard of come too, from the time on.
    await seeker.seek('g', t10, undefined);
    expect(perShard(await drain('g'))).toEqual({ A: ['a1', 'a2', 'a3', 'a4'], B: ['b1', 'b2', 'b3', 'b4'], before: ['x2'] });
    await seeker.seek('g', t0, undefined);
    expect(perShard(await drain('g'))).toEqual({ A: ['a1', 'a2', 'a3', 'a4'], B: ['b1', 'b2', 'b3', 'b4'], before: ['x1', 'x2'], old: ['o1'] });
  });

  it('latest skips everything, also messages the group had not heard of yet; later ones are delivered in order', async () => {
    await group('g', ['ledger']);
    await sendShard('A', ['a1', 'a2']);
    expect(perShard(await drain('g'))).toEqual({ A: ['a1', 'a2'] });
    await sendShard('A', ['a3', 'a4']);
    const held = await receive('g'); // a lease in flight on A (serialized: one per shard)
    expect(held.map((m) => m.body)).toEqual(['a3']);
    await sendShard('A', ['a5']); // known to the group only through a notice it has not read
    await sendShard('C', ['c1']); // a shard the group never heard of
    const answer = await seeker.seek('g', 'latest', undefined);
    expect(answer.shards).toEqual([{ topics: ['ledger'], moved: 1 }]);
    expect(await receive('g')).toEqual([]);
    expect((await h.admin.getGroup('g')).backlog).toBe(0);
    const stale = await h.queue.commit('g', held.map((m) => m.receiptHandle));
    expect(stale.map((r) => 'error' in r && r.error)).toEqual([expect.any(ReceiptHandleExpiredError)]);
    h.clock.advance(1);
    await sendShard('A', ['a6']);
    await sendShard('C', ['c2']);
    await sendShard('D', ['d1']);
    const after = await drain('g');
    expect(perShard(after)).toEqual({ A: ['a6'], C: ['c2'], D: ['d1'] });
    expect(after.every((m) => m.deliveryCount === 1)).toBe(true);
  });

  it('ends leases in flight and drops protected pending commits: the shard replays from the position in order', async () => {
    await group('g', ['ledger'], 'protected');
    await h.queue.sendBatch('ledger', ['p1', 'p2', 'p3'].map((b) => send(b, { shardKey: 'P' })));
    const leased = await receive('g', 3);
    expect(leased.map((m) => m.body)).toEqual(['p1', 'p2', 'p3']);
    // p2 and p3 commit before p1: pending.
    expect(await h.queue.commit('g', [leased[1]!.receiptHandle, leased[2]!.receiptHandle])).toMatchObject([{ status: 'pending' }, { status: 'pending' }]);
    expect(await h.admin.getGroup('g')).toMatchObject({ inFlight: 1, pending: 2 });
    await seeker.seek('g', 'earliest', ['ledger']);
    expect(await h.admin.getGroup('g')).toMatchObject({ inFlight: 0, pending: 0 });
    // p1's handle is over; committing it does not complete the dropped pending commits.
    const [p1] = await h.queue.commit('g', [leased[0]!.receiptHandle]);
    expect(p1 && 'error' in p1 && p1.error).toBeInstanceOf(ReceiptHandleExpiredError);
    await expect(h.queue.changeVisibility('g', leased[2]!.receiptHandle, 10)).rejects.toBeInstanceOf(ReceiptHandleExpiredError);
    const again = await drain('g');
    expect(again.map((m) => [m.body, m.deliveryCount])).toEqual([
      ['p1', 1],
      ['p2', 1],
      ['p3', 1],
    ]);
  });

  it('moves only the group sought, and a standard topic beside it', async () => {
    await h.admin.putTopic('orders', build.topic());
    await group('g', ['ledger', 'orders']);
    await group('other', ['ledger']);
    await sendShard('A', ['a1']);
    await h.queue.send('orders', send('o1'));
    expect((await drain('g')).map((m) => m.body).sort()).toEqual(['a1', 'o1']);
    const answer = await seeker.seek('g', 'earliest', undefined);
    expect(answer.positions).toHaveLength(4);
    expect(answer.shards).toEqual([{ topics: ['ledger'], moved: 1 }]);
    expect((await drain('g')).map((m) => m.body).sort()).toEqual(['a1', 'o1']);
    expect((await drain('other')).map((m) => m.body)).toEqual(['a1']);
    expect(await drain('other')).toEqual([]);
  });

  it('a time-order group moves its subscribed topics together; one alone is refused (400), nothing moves', async () => {
    await h.admin.putTopic('t1', build.topic({ type: 'fifo', orderGroup: 'og' }));
    await h.admin.putTopic('t2', build.topic({ type: 'fifo', orderGroup: 'og' }));
    await group('g', ['t1', 't2']);
    await h.queue.send('t1', send('x1', { shardKey: 'S' }));
    await h.queue.send('t2', send('x2', { shardKey: 'S' }));
    await h.queue.send('t1', send('x3', { shardKey: 'S' }));
    expect((await drain('g')).map((m) => m.body)).toEqual(['x1', 'x2', 'x3']);
    await expect(seeker.seek('g', 'earliest', ['t2'])).rejects.toMatchObject({
      constructor: InvalidArgumentError,
      issues: [{ path: 'topics/0', message: "shares its shards with subscribed topic 't1'" }],
    });
    expect(await drain('g')).toEqual([]);
    const answer = await seeker.seek('g', 'earliest', ['t2', 't1']);
    expect(answer.shards).toEqual([{ topics: ['t2', 't1'], moved: 1 }]);
    expect((await drain('g')).map((m) => m.body)).toEqual(['x1', 'x2', 'x3']);
  });

  it('a shard cursor created from notices read before a seek is refused; under the seek it is created', async () => {
    await group('g', ['ledger']);
    const notices = noticeStream('t:ledger', noticeBucket('Z'));
    const before = await h.stores.cursors.get('g', notices, h.clock.now());
    expect(before?.seek).toBeUndefined();
    await seeker.seek('g', 'latest', undefined);
    const stale = await h.stores.cursors.raiseKnown('g', 't:ledger/k:Z', 1, 1, h.clock.now(), { noticeStream: notices, version: before?.seek?.version });
    expect(stale).toBe(false);
    expect(await h.stores.cursors.get('g', 't:ledger/k:Z', h.clock.now())).toBeUndefined();
    const after = await h.stores.cursors.get('g', notices, h.clock.now());
    expect(after?.seek).toEqual({ version: 1, floor: h.clock.now() + 1 });
    expect(await h.stores.cursors.raiseKnown('g', 't:ledger/k:Z', 1, 1, h.clock.now(), { noticeStream: notices, version: after?.seek?.version })).toBe(true);
    expect((await h.stores.cursors.get('g', 't:ledger/k:Z', h.clock.now()))?.next).toBe(1);
  });

  it('refuses bad input precisely and moves nothing', async () => {
    await h.admin.putTopic('elsewhere', build.topic({ type: 'fifo' }));
    await group('g', ['ledger']);
    await sendShard('A', ['a1']);
    await expect(seeker.seek('g', 'earliest', ['elsewhere'])).rejects.toMatchObject({
      constructor: InvalidArgumentError,
      issues: [{ path: 'topics/0', message: 'not subscribed by this group' }],
    });
    await expect(seeker.seek('g', h.clock.now() + 1000, undefined)).rejects.toMatchObject({ issues: [{ path: 'to', message: 'in the future' }] });
    expect((await drain('g')).map((m) => m.body)).toEqual(['a1']);
  });

  it.each(['earliest', 'latest'] as const)('during a send burst (%s): nothing acknowledged is lost, each shard in order', async (to) => {
    await group('g', ['ledger']);
    const shards = ['A', 'B', 'C', 'D'];
    const acked = new Map<string, Array<{ body: string; at: 'before' | 'during' | 'after' }>>(shards.map((s) => [s, []]));
    let phase: 'before' | 'during' | 'after' = 'before';
    let sending = true;
    // One producer per shard, each sending one message at a time (so acknowledgement order is send order).
    const producers = shards.map(async (shard) => {
      for (let i = 0; sending; i++) {
        const started = phase;
        await h.queue.send('ledger', send(`${shard}${i}`, { shardKey: shard }));
        // A send that started before the seek answered and was acknowledged after it may land on either side.
        acked.get(shard)!.push({ body: `${shard}${i}`, at: started === phase ? phase : 'during' });
      }
    });
    while ([...acked.values()].some((list) => list.length < 5)) await new Promise((resolve) => setTimeout(resolve, 5));
    // The group has received part of it.
    for (let round = 0; round < 3; round++) {
      const got = await receive('g');
      await h.queue.commit('g', got.map((m) => m.receiptHandle));
    }
    phase = 'during';
    await seeker.seek('g', to, undefined);
    phase = 'after';
    while ([...acked.values()].some((list) => list.filter((m) => m.at === 'after').length < 5)) await new Promise((resolve) => setTimeout(resolve, 5));
    sending = false;
    await Promise.all(producers);
    const got = perShard(await drain('g'));
    for (const shard of shards) {
      const sent = acked.get(shard)!;
      const delivered = got[shard] ?? [];
      if (to === 'earliest') {
        // Everything retained, from the shard's first message, in order, once.
        expect(delivered).toEqual(sent.map((m) => m.body));
      } else {
        // A contiguous tail of what was sent, in order: every message acknowledged after the seek
        // answered, none acknowledged before it began.
        const first = sent.findIndex((m) => m.body === delivered[0]);
        expect(first).toBeGreaterThanOrEqual(0);
        expect(delivered).toEqual(sent.slice(first).map((m) => m.body));
        expect(sent.slice(0, first).every((m) => m.at !== 'after')).toBe(true);
        expect(sent.slice(first).every((m) => m.at !== 'before')).toBe(true);
      }
    }
  });
});
