import { beforeEach, describe, expect, it } from 'vitest';
import { newHarness, send, type Harness } from '../helpers/stores.js';
import * as build from '../helpers/builders.js';
import type { DeliveryMode } from '../../lib/domain/model.js';

let h: Harness;

const topic = (name: string, orderGroup?: string) =>
  h.admin.putTopic(name, build.topic({ type: 'fifo', orderGroup }));
const group = (name: string, topics: string[], mode: DeliveryMode, extra: { maxDeliveries?: number } = {}) =>
  h.admin.putGroup(name, build.group(topics, { deliveryMode: mode, visibilityTimeoutSeconds: 30, maxDeliveries: extra.maxDeliveries }));
const receive = (g: string, max = 10, topics?: string[]) => h.queue.receive(g, { maxMessages: max, waitSeconds: 0, topics });
const commit = (g: string, ...handles: string[]) => h.queue.commit(g, handles);
const bodies = (ms: Array<{ body: string }>) => ms.map((m) => m.body);

beforeEach(async () => {
  h = await newHarness();
  await topic('ledger');
});

describe('FIFO topics', () => {
  it('assign gap-free sequences per shard and keep batch order', async () => {
    const results = await h.queue.sendBatch('ledger', [
      send('a1', { shardKey: 'A' }),
      send('b1', { shardKey: 'B' }),
      send('a2', { shardKey: 'A' }),
      send('a3', { shardKey: 'A' }),
    ]);
    const seqs = results.map((r) => ('result' in r ? r.result.sequence! : 0));
    // A new shard's first epoch starts from the clock (docs/design.md, Idle shards expire), then counts up by one.
    const [a, b] = [seqs[0]! - 1, seqs[1]! - 1];
    expect(a).toBe(h.clock.now() * 1000);
    expect(seqs.map((seq, i) => seq - (i === 1 ? b : a))).toEqual([1, 1, 2, 3]);
    const next = await h.queue.send('ledger', send('a4', { shardKey: 'A' }));
    expect(next.sequence! - a).toBe(4);
  });

  it('serialized: one message of a shard in flight; the next after the commit', async () => {
    await group('g', ['ledger'], 'serialized');
    const sent = await h.queue.sendBatch('ledger', ['a1', 'a2', 'a3'].map((b) => send(b, { shardKey: 'A' })));
    await h.queue.sendBatch('ledger', ['b1', 'b2'].map((b) => send(b, { shardKey: 'B' })));
    const first = await receive('g');
    expect(bodies(first).sort()).toEqual(['a1', 'b1']);
    expect(await receive('g')).toEqual([]);
    const a1 = first.find((m) => m.body === 'a1')!;
    // The shard's first message (its first sequence comes from the clock: docs/design.md, Idle shards expire).
    expect(a1.sequence).toBe('result' in sent[0]! ? sent[0].result.sequence : -1);
    await commit('g', a1.receiptHandle);
    expect(bodies(await receive('g'))).toEqual(['a2']);
  });

  it('concurrent: several in flight, in order, commits in any order', async () => {
    await group('g', ['ledger'], 'concurrent');
    await h.queue.sendBatch('ledger', ['a1', 'a2', 'a3'].map((b) => send(b, { shardKey: 'A' })));
    const got = await receive('g');
    expect(bodies(got)).toEqual(['a1', 'a2', 'a3']);
    const results = await commit('g', got[2]!.receiptHandle, got[0]!.receiptHandle);
    expect(results.map((r) => ('status' in r ? r.status : 'error'))).toEqual(['committed', 'committed']);
  });

  it('redelivers an expired lease ahead of later messages', async () => {
    await group('g', ['ledger'], 'concurrent');
    await h.queue.sendBatch('ledger', ['a1', 'a2'].map((b) => send(b, { shardKey: 'A' })));
    const [a1, a2] = await receive('g');
    await h.queue.changeVisibility('g', a2!.receiptHandle, 300);
    await h.queue.send('ledger', send('a3', { shardKey: 'A' }));
    h.clock.advance(31_000);
    const again = await receive('g');
    expect(bodies(again)).toEqual(['a1', 'a3']);
    expect(again[0]).toMatchObject({ deliveryCount: 2, sequence: a1!.sequence });
  });

  it('protected: early commits are pending and complete, with their outputs in input order, when the oldest commits', async () => {
    await topic('out');
    await group('g', ['ledger'], 'protected');
    await group('reader', ['out'], 'concurrent');
    await h.queue.sendBatch('ledger', ['a1', 'a2', 'a3'].map((b) => send(b, { shardKey: 'A' })));
    const got = await receive('g');
    expect(bodies(got)).toEqual(['a1', 'a2', 'a3']);
    const publish = (m: { body: string }) => [{ topic: 'out', ...send(`out-${m.body}`, { shardKey: 'X' }) }];
    const c3 = await h.queue.commit('g', [{ receiptHandle: got[2]!.receiptHandle, publish: publish(got[2]!) }]);
    const c2 = await h.queue.commit('g', [{ receiptHandle: got[1]!.receiptHandle, publish: publish(got[1]!) }]);
    expect(c3[0]).toMatchObject({ status: 'pending' });
    expect(c2[0]).toMatchObject({ status: 'pending' });
    expect(await receive('reader')).toEqual([]);
    expect((await h.admin.getGroup('g')).pending).toBe(2);
    // A repeated early commit stays pending; nothing is published twice.
    expect((await commit('g', got[2]!.receiptHandle))[0]).toMatchObject({ status: 'pending' });
    const c1 = await h.queue.commit('g', [{ receiptHandle: got[0]!.receiptHandle, publish: publish(got[0]!) }]);
    expect(c1[0]).toMatchObject({ status: 'committed' });
    const out = await receive('reader');
    expect(bodies(out)).toEqual(['out-a1', 'out-a2', 'out-a3']);
    const outBase = out[0]!.sequence! - 1;
    expect(out.map((m) => m.sequence! - outBase)).toEqual([1, 2, 3]);
    expect((await commit('g', got[2]!.receiptHandle))[0]).toMatchObject({ status: 'committed' });
    expect((await h.admin.getGroup('g')).pending).toBe(0);
  });

  it('publishes outputs if and only if the commit takes effect', async () => {
    await topic('out');
    await group('g', ['ledger'], 'concurrent');
    await group('reader', ['out'], 'concurrent');
    await h.queue.send('ledger', send('a1', { shardKey: 'A' }));
    const [first] = await receive('g');
    h.clock.advance(31_000);
    const [second] = await receive('g');
    const stale = await h.queue.commit('g', [{ receiptHandle: first!.receiptHandle, publish: [{ topic: 'out', ...send('o', { shardKey: 'X' }) }] }]);
    expect(stale[0]).toHaveProperty('error');
    expect(await receive('reader')).toEqual([]);
    const fresh = await h.queue.commit('g', [{ receiptHandle: second!.receiptHandle, publish: [{ topic: 'out', ...send('o', { shardKey: 'X' }) }] }]);
    expect(fresh[0]).toMatchObject({ status: 'committed' });
    // A repeat of the commit that took effect is idempotent and publishes nothing more.
    await h.queue.commit('g', [{ receiptHandle: second!.receiptHandle, publish: [{ topic: 'out', ...send('o', { shardKey: 'X' }) }] }]);
    expect(bodies(await receive('reader'))).toEqual(['o']);
  });

  it('time-order groups deliver several topics in one order', async () => {
    await topic('orders', 'shop');
    await topic('payments', 'shop');
    await group('g', ['orders', 'payments'], 'serialized');
    await h.queue.send('orders', send('order-created', { shardKey: 'o1' }));
    await h.queue.send('payments', send('payment-received', { shardKey: 'o1' }));
    await h.queue.send('orders', send('order-shipped', { shardKey: 'o1' }));
    const seen: string[] = [];
    let base = 0;
    for (let i = 0; i < 3; i++) {
      const [m] = await receive('g');
      seen.push(`${m!.topic}:${m!.body}:${m!.sequence! - (seen.length === 0 ? m!.sequence! - 1 : base)}`);
      if (seen.length === 1) base = m!.sequence! - 1;
      await commit('g', m!.receiptHandle);
    }
    expect(seen).toEqual(['orders:order-created:1', 'payments:payment-received:2', 'orders:order-shipped:3']);
  });

  it('a receive limited to one topic of an order group never skips ahead of the other', async () => {
    await topic('orders', 'shop');
    await topic('payments', 'shop');
    await group('g', ['orders', 'payments'], 'concurrent');
    await h.queue.send('payments', send('p1', { shardKey: 'o1' }));
    await h.queue.send('orders', send('o2', { shardKey: 'o1' }));
    expect(await receive('g', 10, ['orders'])).toEqual([]);
    expect(bodies(await receive('g', 10))).toEqual(['p1', 'o2']);
  });

  it('dead-letters a poison message and moves the shard on', async () => {
    await group('g', ['ledger'], 'serialized', { maxDeliveries: 2 });
    await h.queue.sendBatch('ledger', ['poison', 'next'].map((b) => send(b, { shardKey: 'A' })));
    for (let i = 0; i < 2; i++) {
      expect(bodies(await receive('g'))).toEqual(['poison']);
      h.clock.advance(31_000);
    }
    expect(bodies(await receive('g'))).toEqual(['next']);
    expect((await h.admin.getGroup('g')).deadLettered).toBe(1);
  });

  it('gives a group only the messages sent after it subscribed, per shard', async () => {
    await h.queue.send('ledger', send('early', { shardKey: 'A' }));
    await group('g', ['ledger'], 'concurrent');
    await h.queue.send('ledger', send('late', { shardKey: 'A' }));
    expect(bodies(await receive('g'))).toEqual(['late']);
  });
});
