/**
 * Sequenced FIFO topics through the queue service (docs/design.md, Sequenced FIFO topics): many
 * producers on one shard lose no race and break no order; a receive never passes a hole a writer
 * may still fill (a put in flight is delivered in its place, a dead grant is filled after F), and a
 * group's new shard cursor starts under such a hole.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { PutCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { Contention } from '../../lib/adapters/dynamodb/append-contention.js';
import { Sequencer } from '../../lib/adapters/dynamodb/sequencer.js';
import { Seeker } from '../../lib/services/seeker.js';
import { realStopwatch } from '../../lib/ports/stopwatch.js';
import { FILL_AFTER_MS, HOLE_RECHECK_MS } from '../../lib/domain/gaps.js';
import type { DeliveryMode } from '../../lib/domain/model.js';
import * as build from '../helpers/builders.js';
import { harness, newHarness, send, type Harness } from '../helpers/stores.js';

let h: Harness;

const group = (name: string, mode: DeliveryMode) =>
  h.admin.putGroup(name, build.group(['ledger'], { deliveryMode: mode, visibilityTimeoutSeconds: 30 }));
const receive = (g: string, max = 10) => h.queue.receive(g, { maxMessages: max, waitSeconds: 0 });
const bodies = (ms: Array<{ body: string }>) => ms.map((m) => m.body);

/** A document client whose first segment put on a sequenced stream waits until `release()` (a slow writer). */
function slowFirstPut(doc: DynamoDBDocumentClient) {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  let held = false;
  const send = doc.send.bind(doc) as (command: unknown) => Promise<unknown>;
  const wrapped = Object.create(doc) as DynamoDBDocumentClient;
  wrapped.send = (async (command: unknown) => {
    const item = command instanceof PutCommand ? command.input.Item : undefined;
    if (!held && typeof item?.pk === 'string' && item.pk.includes('/q:') && item.ga !== undefined && item.hf === undefined) {
      held = true;
      await gate;
    }
    return send(command);
  }) as DynamoDBDocumentClient['send'];
  return { doc: wrapped, release };
}

/** A send whose segment put waits (its grant taken) until the answered function lands it, and a faster one landing above it. */
const slowThenFast = async (shardKey: string, slowBody: string, fastBody?: string) => {
  const slow = slowFirstPut(h.doc);
  const late = harness(slow.doc, h.table, { clock: h.clock });
  const sent = late.queue.send('ledger', send(slowBody, { shardKey }));
  await new Promise((resolve) => setTimeout(resolve, 50));
  if (fastBody !== undefined) await h.queue.send('ledger', send(fastBody, { shardKey }));
  return async () => {
    slow.release();
    await sent;
  };
};

beforeEach(async () => {
  h = await newHarness();
});
const ledger = () => h.admin.putTopic('ledger', build.topic({ type: 'fifo', sequenced: true }));

describe('sequenced FIFO topics', () => {
  it('64 producers on one shard: every message once, in sequence order, each producer in its order', async () => {
    // 16 notice streams: the sends' notices spread as a standard topic's appends do (on 4, 64
    // producers' notices can wait out the append budget on this machine: 429).
    await h.admin.putTopic('ledger', build.topic({ type: 'fifo', sequenced: true, partitions: 16 }));
    await group('g', 'concurrent');
    // Sent after the group subscribed (a message deliverable in its very millisecond counts as before it).
    h.clock.advance(1);
    // The notices are still chained appends: on DynamoDB Local under 64 writers their time budget
    // is a minute here, not 2 s (a slow machine's 429 is not what this test is about).
    const producers = Array.from({ length: 64 }, () => harness(h.doc, h.table, { clock: h.clock, contention: new Contention(realStopwatch, Math.random, 60_000) }));
    await Promise.all(
      producers.map(async (p, i) => {
        for (let n = 0; n < 3; n++) await p.queue.sendBatch('ledger', [0, 1].map((k) => send(`${i}:${n}:${k}`, { shardKey: 'A' })));
      }),
    );
    const got: Array<{ body: string; sequence: number | null }> = [];
    for (let round = 0; round < 300 && got.length < 384; round++) {
      const batch = await receive('g', 100);
      got.push(...batch);
      if (batch.length > 0) await h.queue.commit('g', batch.map((m) => m.receiptHandle));
      // A shard read while a put was landing is held (the fake clock stands still): looked at again soon.
      else h.clock.advance(HOLE_RECHECK_MS);
    }
    expect(got).toHaveLength(384);
    expect(new Set(bodies(got)).size).toBe(384);
    const seqs = got.map((m) => m.sequence ?? 0);
    expect([...seqs].sort((a, b) => a - b)).toEqual(seqs);
    const byProducer = new Map<string, string[]>();
    for (const { body } of got) {
      const [p, n, k] = body.split(':');
      byProducer.set(p!, [...(byProducer.get(p!) ?? []), `${n}:${k}`]);
    }
    for (const order of byProducer.values()) expect(order).toEqual(['0:0', '0:1', '1:0', '1:1', '2:0', '2:1']);
  }, 120_000);

  it('a put in flight under a landed message: the receive holds, then delivers both in order', async () => {
    await ledger();
    await group('g', 'serialized');
    await h.queue.send('ledger', send('a0', { shardKey: 'A' }));
    const [a0] = await receive('g');
    await h.queue.commit('g', [a0!.receiptHandle]);
    // The slow writer has its grant; a faster one lands above it (with its notice).
    const land = await slowThenFast('A', 'a1', 'a2');
    expect(await receive('g')).toEqual([]);
    await land();
    // Its notice raises nothing (a later one announced more): the held shard is looked at again soon.
    h.clock.advance(HOLE_RECHECK_MS);
    const [a1] = await receive('g');
    expect(a1?.body).toBe('a1');
    await h.queue.commit('g', [a1!.receiptHandle]);
    expect(bodies(await receive('g'))).toEqual(['a2']);
  });

  it('a dead grant is filled after F; the messages above it are delivered then', async () => {
    await ledger();
    await group('g', 'concurrent');
    await h.queue.send('ledger', send('b0', { shardKey: 'B' }));
    expect(bodies(await receive('g'))).toEqual(['b0']);
    // A writer that took its numbers and died.
    await new Sequencer(h.doc, h.table).grant('t:ledger/q:B', 3, h.clock.now());
    await h.queue.sendBatch('ledger', ['b4', 'b5'].map((b) => send(b, { shardKey: 'B' })));
    expect(await receive('g')).toEqual([]);
    h.clock.advance(FILL_AFTER_MS);
    expect(bodies(await receive('g'))).toEqual(['b4', 'b5']);
  });

  it("a group's first notice of a shard comes from above a put in flight: its cursor starts under it", async () => {
    await ledger();
    await group('g', 'concurrent');
    const land = await slowThenFast('C', 'c0', 'c1');
    // The group hears of the shard from c1's notice, while c0's put is still on its way.
    expect(await receive('g')).toEqual([]);
    await land();
    h.clock.advance(HOLE_RECHECK_MS);
    expect(bodies(await receive('g'))).toEqual(['c0', 'c1']);
  });

  it('every writer of a shard takes grants: scheduled releases and commit outputs land in order with sends', async () => {
    await ledger();
    await h.admin.putTopic('in', build.topic());
    await group('g', 'concurrent');
    await h.admin.putGroup('worker', build.group(['in'], { deliveryMode: 'concurrent', visibilityTimeoutSeconds: 30 }));
    h.clock.advance(1);
    await h.queue.send('ledger', send('s1', { shardKey: 'D' }));
    await h.queue.send('ledger', send('later', { shardKey: 'D', delaySeconds: 5 }));
    await h.queue.send('in', send('job'));
    const [job] = await h.queue.receive('worker', { maxMessages: 1, waitSeconds: 0 });
    await h.queue.commit('worker', [{ receiptHandle: job!.receiptHandle, publish: [{ topic: 'ledger', ...send('output', { shardKey: 'D' }) }] }]);
    h.clock.advance(5_000);
    await h.fire();
    await h.queue.send('ledger', send('s2', { shardKey: 'D' }));
    const got: Array<{ body: string; sequence: number | null }> = [];
    for (let i = 0; i < 5 && got.length < 4; i++) got.push(...(await receive('g')));
    expect(bodies(got)).toEqual(['s1', 'output', 'later', 's2']);
    const seqs = got.map((m) => m.sequence ?? 0);
    expect([...seqs].sort((x, y) => x - y)).toEqual(seqs);
  });

  describe('positions placed while a put is in flight (a review found them lost)', () => {
    /** Receives a few times, the fake clock moving F each time, and answers the bodies. */
    const drain = async () => {
      const got: string[] = [];
      for (let i = 0; i < 5; i++) {
        got.push(...bodies(await receive('g')));
        h.clock.advance(FILL_AFTER_MS);
      }
      return got;
    };

    it("an earliest subscription's new shard cursor: the epoch's first put still in flight", async () => {
      await ledger();
      await h.admin.putGroup('g', build.group([{ topic: 'ledger', tags: undefined, startFrom: 'earliest' }], { deliveryMode: 'concurrent', visibilityTimeoutSeconds: 30 }));
      const land = await slowThenFast('C', 'c0', 'c1');
      const got = bodies(await receive('g'));
      await land();
      got.push(...(await drain()));
      expect(got).toEqual(['c0', 'c1']);
    });

    it("seek earliest: the epoch's first put still in flight", async () => {
      await ledger();
      await group('g', 'concurrent');
      const land = await slowThenFast('C', 'c0', 'c1');
      expect(await receive('g')).toEqual([]);
      await new Seeker(h.stores, h.clock).seek('g', 'earliest', undefined);
      await land();
      h.clock.advance(HOLE_RECHECK_MS);
      expect(await drain()).toEqual(['c0', 'c1']);
    });

    it('seek to a time: a put in flight above every landed message', async () => {
      await ledger();
      await group('g', 'concurrent');
      h.clock.advance(1);
      await h.queue.send('ledger', send('a0', { shardKey: 'A' }));
      const [a0] = await receive('g');
      await h.queue.commit('g', [a0!.receiptHandle]);
      h.clock.advance(10_000);
      const at = h.clock.now() - 1000;
      const land = await slowThenFast('A', 'a1');
      await new Seeker(h.stores, h.clock).seek('g', at, undefined);
      await land();
      expect(await drain()).toEqual(['a1']);
    });
  });
});
