/** Redrive (issue 17 item 3): a group's dead letters come back to that group only, on DynamoDB Local. */
import { randomBytes } from 'node:crypto';
import { beforeEach, describe, expect, it } from 'vitest';
import { newHarness, send, type Harness } from '../helpers/stores.js';
import { group, topic } from '../helpers/builders.js';
import { Seeker } from '../../lib/services/seeker.js';

let h: Harness;

beforeEach(async () => {
  h = await newHarness();
  await h.admin.putTopic('orders', topic());
});

const receive = (name: string, max = 10) => h.queue.receive(name, { maxMessages: max, waitSeconds: 0 });

/** Receives everything `name` has `times` times, letting the leases expire; the last receive dead-letters them. */
async function deadLetterAll(name: string, times: number, expected: number) {
  for (let i = 1; i <= times; i++) {
    const got = await receive(name, 100);
    expect(got.map((m) => m.deliveryCount)).toEqual(Array(expected).fill(i));
    h.clock.advance(30_001);
  }
  expect(await receive(name, 100)).toEqual([]);
}

async function commitAll(name: string) {
  const got = await receive(name, 100);
  const results = await h.queue.commit(name, got.map((m) => m.receiptHandle));
  expect(results.every((r) => 'status' in r && r.status === 'committed')).toBe(true);
  return got;
}

describe('redrive', () => {
  it('brings back only the messages this group dead-lettered, to this group only, same id, deliveryCount 1', async () => {
    await h.admin.putGroup('billing', group('orders', { maxDeliveries: 1 }));
    await h.admin.putGroup('shipping', group('orders'));
    const a = await h.queue.send('orders', send('a', { keys: ['k-a'], properties: { p: '1' }, tag: 't' }));
    const b = await h.queue.send('orders', send('b'));
    expect((await commitAll('shipping')).length).toBe(2);
    await deadLetterAll('billing', 1, 2);
    expect((await h.admin.getGroup('billing')).deadLettered).toBe(2);

    expect(await h.redriver.redrive('billing', undefined)).toEqual({ redriven: 2, more: false });

    expect(await receive('shipping')).toEqual([]);
    const back = await receive('billing');
    expect(back.map((m) => m.messageId).sort()).toEqual([a.messageId, b.messageId].sort());
    expect(back.every((m) => m.deliveryCount === 1 && m.topic === 'orders')).toBe(true);
    const redrivenA = back.find((m) => m.messageId === a.messageId)!;
    // The original again: its own content, none of the copy's properties.
    expect(redrivenA).toMatchObject({ body: 'a', tag: 't', keys: ['k-a'], properties: { p: '1' } });
    const stats = await h.admin.getGroup('billing');
    expect(stats).toMatchObject({ deadLettered: 0, inFlight: 2 });

    // The query: state in this group is the redriven message's; the copy is still named (it stays).
    const view = await h.queue.getMessage('orders', a.messageId);
    expect(view.groups.find((g) => g.group === 'billing')).toMatchObject({ state: 'in-flight', deliveryCount: 1 });
    expect(view.groups.find((g) => g.group === 'billing')?.deadLetter?.topic).toBe('billing-dlq');
    expect(view.groups.find((g) => g.group === 'shipping')).toMatchObject({ state: 'committed' });

    const results = await h.queue.commit('billing', back.map((m) => m.receiptHandle));
    expect(results.every((r) => 'status' in r && r.status === 'committed')).toBe(true);
    expect((await h.queue.getMessage('orders', a.messageId)).groups.find((g) => g.group === 'billing')).toMatchObject({ state: 'committed' });
    // Nothing more to redrive: a second redrive brings nothing back.
    expect(await h.redriver.redrive('billing', undefined)).toEqual({ redriven: 0, more: false });
    expect(await receive('billing')).toEqual([]);
  });

  it('seek latest on every topic skips what a redrive brought back and the group has not received; a seek of one topic of two leaves it', async () => {
    await h.admin.putTopic('refunds', topic());
    await h.admin.putGroup('billing', group(['orders', 'refunds'], { maxDeliveries: 1 }));
    await h.queue.send('orders', send('a'));
    await h.queue.send('orders', send('b'));
    await deadLetterAll('billing', 1, 2);
    expect(await h.redriver.redrive('billing', 1)).toMatchObject({ redriven: 1 });
    const seeker = new Seeker(h.stores, h.clock);
    // One topic of two: the redrive stream is not that topic's.
    await seeker.seek('billing', 'latest', ['orders']);
    // (a and b were dead-lettered together: either comes back first.)
    const first = await receive('billing');
    expect(first).toHaveLength(1);
    expect(['a', 'b']).toContain(first[0]!.body);
    expect(await h.redriver.redrive('billing', undefined)).toMatchObject({ redriven: 1 });
    await seeker.seek('billing', 'latest', undefined);
    expect(await receive('billing')).toEqual([]);
    // A message sent after the seek is received.
    await h.queue.send('orders', send('c'));
    expect((await receive('billing')).map((m) => m.body)).toEqual(['c']);
  });

  it('serves a dead-letter topic shared by two groups: each redrives its own', async () => {
    await h.admin.putGroup('one', group('orders', { maxDeliveries: 1, deadLetterTopic: 'shared-dlq' }));
    await h.admin.putGroup('two', group('orders', { maxDeliveries: 1, deadLetterTopic: 'shared-dlq' }));
    const m = await h.queue.send('orders', send('x'));
    await deadLetterAll('one', 1, 1);
    await deadLetterAll('two', 1, 1);

    expect(await h.redriver.redrive('one', undefined)).toEqual({ redriven: 1, more: false });
    const one = await receive('one');
    expect(one.map((x) => x.messageId)).toEqual([m.messageId]);
    expect(await receive('two')).toEqual([]);
    expect((await h.admin.getGroup('two')).deadLettered).toBe(1);

    expect(await h.redriver.redrive('two', undefined)).toEqual({ redriven: 1, more: false });
    expect((await receive('two')).map((x) => x.messageId)).toEqual([m.messageId]);
    expect(await receive('one')).toEqual([]); // still leased to `one`
  });

  it('redrives FIFO messages in the order they were dead-lettered, without a shard sequence', async () => {
    await h.admin.putTopic('ledger', topic({ type: 'fifo' }));
    await h.admin.putGroup('audit', group('ledger', { maxDeliveries: 1 }));
    const sent = [];
    for (const body of ['1', '2', '3']) sent.push(await h.queue.send('ledger', send(body, { shardKey: 'acct-1' })));
    // Serialized: one at a time, each dead-lettered before the next is delivered.
    for (let i = 0; i < 3; i++) {
      const [m] = await receive('audit');
      expect(m?.messageId).toBe(sent[i]!.messageId);
      h.clock.advance(30_001);
    }
    expect(await receive('audit')).toEqual([]);
    const later = await h.queue.send('ledger', send('4', { shardKey: 'acct-1' }));
    h.clock.advance(1);

    expect(await h.redriver.redrive('audit', undefined)).toEqual({ redriven: 3, more: false });
    const got = await receive('audit');
    const redriven = got.filter((m) => m.messageId !== later.messageId);
    expect(redriven.map((m) => m.messageId)).toEqual(sent.map((s) => s.messageId));
    expect(redriven.every((m) => m.shardKey === 'acct-1' && m.sequence === null && m.deliveryCount === 1)).toBe(true);
    // The shard's newer message is delivered on its own, not held behind the redriven ones.
    expect(got.map((m) => m.messageId)).toContain(later.messageId);
  });

  it('works after the original topic was deleted', async () => {
    await h.admin.putGroup('billing', group('orders', { maxDeliveries: 1 }));
    const m = await h.queue.send('orders', send('kept', { keys: ['k1'] }));
    await deadLetterAll('billing', 1, 1);
    await h.admin.deleteTopic('orders');

    expect(await h.redriver.redrive('billing', undefined)).toEqual({ redriven: 1, more: false });
    const [back] = await receive('billing');
    expect(back).toMatchObject({ messageId: m.messageId, topic: 'orders', body: 'kept', keys: ['k1'], deliveryCount: 1 });
    expect(await h.queue.commit('billing', [back!.receiptHandle])).toEqual([{ receiptHandle: back!.receiptHandle, status: 'committed' }]);
  });

  it('redrives a message that was dead-lettered again after its redrive', async () => {
    // deadLetterAll redelivers right at each expiry: no retry back-off (retry-policy.test.ts has it).
    await h.admin.putGroup('billing', group('orders', { maxDeliveries: 2, retryPolicy: { initialSeconds: 0 } }));
    const m = await h.queue.send('orders', send('again'));
    await deadLetterAll('billing', 2, 1);
    expect((await h.redriver.redrive('billing', undefined)).redriven).toBe(1);
    await deadLetterAll('billing', 2, 1); // from the redrive stream, with fresh delivery counts
    const view = await h.queue.getMessage('orders', m.messageId);
    expect(view.groups[0]).toMatchObject({ state: 'dead-lettered' });
    expect((await h.admin.getGroup('billing')).deadLettered).toBe(1);

    expect(await h.redriver.redrive('billing', undefined)).toEqual({ redriven: 1, more: false });
    const [back] = await receive('billing');
    expect(back).toMatchObject({ messageId: m.messageId, deliveryCount: 1 });
    expect((await h.admin.getGroup('billing')).deadLettered).toBe(0);
  });

  it('never brings a message back twice under two concurrent redrives', async () => {
    await h.admin.putGroup('billing', group('orders', { maxDeliveries: 1 }));
    const ids = new Set<string>();
    for (let i = 0; i < 30; i++) ids.add((await h.queue.send('orders', send(`m${i}`))).messageId);
    await deadLetterAll('billing', 1, 30);

    const [x, y] = await Promise.all([h.redriver.redrive('billing', undefined), h.redriver.redrive('billing', undefined)]);
    expect(x.redriven + y.redriven).toBe(30);
    const back = await receive('billing', 100);
    expect(back.length).toBe(30);
    expect(new Set(back.map((m) => m.messageId))).toEqual(ids);
    expect((await h.admin.getGroup('billing')).deadLettered).toBe(0);
  });

  it('honours maxMessages, oldest dead letter first, and says when more remain', async () => {
    await h.admin.putGroup('billing', group('orders', { maxDeliveries: 1 }));
    for (let i = 0; i < 5; i++) {
      await h.queue.send('orders', send(`m${i}`));
      await deadLetterAll('billing', 1, 1);
    }
    expect(await h.redriver.redrive('billing', 2)).toEqual({ redriven: 2, more: true });
    expect((await receive('billing')).map((m) => m.body)).toEqual(['m0', 'm1']);
    expect(await h.redriver.redrive('billing', 3)).toEqual({ redriven: 3, more: false });
    expect((await receive('billing')).map((m) => m.body).sort()).toEqual(['m2', 'm3', 'm4']);
  });

  it('does not hand a re-created group the dead letters of the group deleted before it', async () => {
    await h.admin.putGroup('billing', group('orders', { maxDeliveries: 1 }));
    await h.queue.send('orders', send('old'));
    await deadLetterAll('billing', 1, 1);
    await h.admin.deleteGroup('billing');
    h.clock.advance(60_000);
    await h.admin.putGroup('billing', group('orders', { maxDeliveries: 1 }));
    expect(await h.redriver.redrive('billing', undefined)).toEqual({ redriven: 0, more: false });
    expect((await h.admin.getGroup('billing')).deadLettered).toBe(0);
  });

  it('redrives 100 × 256 KiB messages (base64, incompressible) within the item and transaction limits', async () => {
    await h.admin.putGroup('blobs', group('orders', { maxDeliveries: 1 }));
    const bodies = new Map<string, string>();
    for (let i = 0; i < 100; i++) {
      const body = randomBytes(256 * 1024).toString('base64');
      const sent = await h.queue.send('orders', { ...send(body), encoding: 'base64' });
      bodies.set(sent.messageId, body);
    }
    // Receive all (5 MB answers: a dozen per receive), let the leases expire, dead-letter them.
    let leased = 0;
    for (let round = 0; round < 100 && leased < 100; round++) leased += (await receive('blobs', 100)).length;
    expect(leased).toBe(100);
    h.clock.advance(30_001);
    for (let round = 0; round < 10; round++) await receive('blobs', 100);
    expect((await h.admin.getGroup('blobs')).deadLettered).toBe(100);

    let redriven = 0;
    for (let call = 0; call < 10; call++) {
      const r = await h.redriver.redrive('blobs', undefined);
      redriven += r.redriven;
      if (!r.more) break;
    }
    expect(redriven).toBe(100);
    // A receive reads these segments up to its 5 MB answer (a Query page holds two or three of them:
    // it follows the pages), so it returns about a dozen at a time; it ends when one returns nothing.
    const back = new Map<string, string>();
    for (let round = 0; round < 100 && back.size < 100; round++) {
      const got = await receive('blobs', 100);
      if (got.length === 0) break;
      for (const m of got) {
        expect(m.deliveryCount).toBe(1);
        back.set(m.messageId, m.body);
      }
    }
    expect(back).toEqual(bodies);
    expect((await h.admin.getGroup('blobs')).deadLettered).toBe(0);
  }, 300_000);

  it('answers 404 for a group that does not exist, and changes nothing', async () => {
    await expect(h.redriver.redrive('nobody', undefined)).rejects.toMatchObject({ code: 'GroupNotFound' });
  });
});
