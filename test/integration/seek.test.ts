/** Seeking a consumer group (issue 17 item 2) on DynamoDB Local: standard topics. */
import { beforeEach, describe, expect, it } from 'vitest';
import { GroupNotFoundError, InvalidArgumentError, ReceiptHandleExpiredError, TopicNotFoundError } from '../../lib/domain/errors.js';
import { Seeker } from '../../lib/services/seeker.js';
import { newHarness, send, type Harness } from '../helpers/stores.js';
import * as build from '../helpers/builders.js';

let h: Harness;
let seeker: Seeker;

beforeEach(async () => {
  h = await newHarness();
  seeker = new Seeker(h.stores, h.clock);
  await h.admin.putTopic('orders', build.topic());
  await h.admin.putGroup('g', build.group('orders', { visibilityTimeoutSeconds: 30 }));
});

const receive = (g = 'g', max = 100) => h.queue.receive(g, { maxMessages: max, waitSeconds: 0 });

/** Receives and commits until nothing comes; returns what was delivered. */
async function drain(g = 'g') {
  const out: Array<{ body: string; deliveryCount: number }> = [];
  for (let round = 0; round < 100; round++) {
    const got = await receive(g);
    if (got.length === 0) return out;
    out.push(...got.map((m) => ({ body: m.body, deliveryCount: m.deliveryCount })));
    await h.queue.commit(g, got.map((m) => m.receiptHandle));
  }
  throw new Error('did not drain');
}
const bodies = (ms: Array<{ body: string }>) => ms.map((m) => m.body).sort();

describe('seek on standard topics', () => {
  it('earliest delivers every retained message again, each with deliveryCount 1', async () => {
    for (let i = 0; i < 5; i++) await h.queue.send('orders', send(`m${i}`));
    expect(await drain()).toHaveLength(5);
    const answer = await seeker.seek('g', 'earliest', undefined);
    expect(answer.positions).toHaveLength(4);
    expect(answer.positions.every((p) => p.topic === 'orders')).toBe(true);
    expect((await h.admin.getGroup('g')).backlog).toBe(5);
    const again = await drain();
    expect(bodies(again)).toEqual(['m0', 'm1', 'm2', 'm3', 'm4']);
    expect(again.every((m) => m.deliveryCount === 1)).toBe(true);
  });

  it('latest skips the whole backlog; later messages are delivered', async () => {
    for (let i = 0; i < 5; i++) await h.queue.send('orders', send(`old${i}`));
    await seeker.seek('g', 'latest', undefined);
    expect((await h.admin.getGroup('g')).backlog).toBe(0);
    expect(await receive()).toEqual([]);
    await h.queue.send('orders', send('new'));
    expect(bodies(await drain())).toEqual(['new']);
  });

  it('a time moves to the first message deliverable at or after it, forwards and backwards', async () => {
    const t0 = h.clock.now();
    await h.queue.sendBatch('orders', [send('a1'), send('a2')]);
    for (let i = 0; i < 6; i++) {
      h.clock.advance(10_000);
      await h.queue.send('orders', send(`b${i}`));
    }
    const t30 = t0 + 30_000;
    await seeker.seek('g', t30, undefined);
    expect(bodies(await drain())).toEqual(['b2', 'b3', 'b4', 'b5']);
    // Backwards, before every message: all of them again.
    await seeker.seek('g', t0 - 60_000, undefined);
    expect(await drain()).toHaveLength(8);
    // Exactly at a message's time: it is included.
    await seeker.seek('g', t0 + 60_000, undefined);
    expect(bodies(await drain())).toEqual(['b5']);
    // A moment after the last message: nothing deliverable at or after it yet.
    h.clock.advance(1);
    await seeker.seek('g', h.clock.now(), undefined);
    expect(await drain()).toEqual([]);
  });

  it('ends leases in flight: an old handle answers ReceiptHandleExpired, a commit that took effect stays committed', async () => {
    await h.queue.sendBatch('orders', [send('x'), send('y')]);
    const [x, y] = await receive('g', 2);
    expect(await h.queue.commit('g', [x!.receiptHandle])).toMatchObject([{ status: 'committed' }]);
    await seeker.seek('g', 'earliest', undefined);
    const [stale] = await h.queue.commit('g', [y!.receiptHandle]);
    expect(stale && 'error' in stale && stale.error).toBeInstanceOf(ReceiptHandleExpiredError);
    await expect(h.queue.changeVisibility('g', y!.receiptHandle, 10)).rejects.toBeInstanceOf(ReceiptHandleExpiredError);
    // The repeat of a commit that took effect before the seek still answers committed.
    expect(await h.queue.commit('g', [x!.receiptHandle])).toMatchObject([{ status: 'committed' }]);
    const again = await drain();
    expect(bodies(again)).toEqual(['x', 'y']);
    expect(again.every((m) => m.deliveryCount === 1)).toBe(true);
    expect((await h.admin.getGroup('g')).inFlight).toBe(0);
  });

  it('per topic: only the named topics move', async () => {
    await h.admin.putTopic('audit', build.topic());
    await h.admin.putGroup('g', build.group(['orders', 'audit']));
    await h.queue.send('orders', send('o'));
    await h.queue.send('audit', send('a'));
    const answer = await seeker.seek('g', 'latest', ['orders']);
    expect(new Set(answer.positions.map((p) => p.topic))).toEqual(new Set(['orders']));
    expect(bodies(await drain())).toEqual(['a']);
  });

  it('another group on the topic is not moved', async () => {
    await h.admin.putGroup('other', build.group('orders'));
    await h.queue.send('orders', send('kept'));
    await seeker.seek('g', 'latest', undefined);
    expect(bodies(await drain('other'))).toEqual(['kept']);
  });

  it('refuses bad input precisely and moves nothing', async () => {
    await h.admin.putTopic('elsewhere', build.topic());
    await h.queue.send('orders', send('stay'));
    const future = h.clock.now() + 60_000;
    await expect(seeker.seek('nope', 'latest', undefined)).rejects.toBeInstanceOf(GroupNotFoundError);
    await expect(seeker.seek('g', 'latest', ['elsewhere'])).rejects.toMatchObject({
      constructor: InvalidArgumentError,
      issues: [{ path: 'topics/0', message: 'not subscribed by this group' }],
    });
    await expect(seeker.seek('g', future, undefined)).rejects.toMatchObject({ issues: [{ path: 'to', message: 'in the future' }] });
    await h.admin.deleteTopic('elsewhere');
    await h.admin.putGroup('d', build.group(['orders']));
    expect((await h.admin.getGroup('g')).backlog).toBe(1);
    expect(bodies(await drain('g'))).toEqual(['stay']);
  });

  it('a named topic deleted meanwhile answers TopicNotFound', async () => {
    await h.admin.putTopic('audit', build.topic());
    await h.admin.putGroup('g', build.group(['orders', 'audit']));
    await h.admin.deleteTopic('audit');
    await expect(seeker.seek('g', 'latest', ['audit'])).rejects.toBeInstanceOf(TopicNotFoundError);
    // Seeking every topic passes over the deleted one.
    expect((await seeker.seek('g', 'latest', undefined)).positions.map((p) => p.topic)).toEqual(['orders', 'orders', 'orders', 'orders']);
  });

  it('under concurrent receivers: every message sent after the seek answered is delivered; nothing before latest comes back', async () => {
    const delivered = new Map<string, number>();
    let stop = false;
    let sending = true;
    const sender = (async () => {
      for (let i = 0; sending; i++) await h.queue.send('orders', send(`pre-${i}`));
    })();
    const receiver = async () => {
      while (!stop) {
        const got = await receive('g', 5);
        for (const m of got) delivered.set(m.body, (delivered.get(m.body) ?? 0) + 1);
        if (got.length > 0) await h.queue.commit('g', got.map((m) => m.receiptHandle));
      }
    };
    const receivers = [receiver(), receiver(), receiver()];
    while (delivered.size < 10) await new Promise((resolve) => setTimeout(resolve, 10));
    sending = false;
    await sender;
    await seeker.seek('g', 'latest', undefined);
    const afterSeek = new Map(delivered);
    for (let i = 0; i < 20; i++) await h.queue.send('orders', send(`post-${i}`));
    const posts = () => [...delivered.keys()].filter((b) => b.startsWith('post-')).length;
    for (let wait = 0; posts() < 20 && wait < 2000; wait++) await new Promise((resolve) => setTimeout(resolve, 10));
    stop = true;
    await Promise.all(receivers);
    expect(posts()).toBe(20);
    // No message sent before the seek was delivered after it, except a lease a receiver held across it
    // (at most the 3 receivers' batches in flight at that moment).
    const lateOld = [...delivered.keys()].filter((b) => b.startsWith('pre-') && !afterSeek.has(b));
    expect(lateOld.length).toBeLessThanOrEqual(15);
    expect((await h.admin.getGroup('g')).backlog).toBe(0);
  });
});
