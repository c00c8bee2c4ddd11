import { beforeEach, describe, expect, it } from 'vitest';
import { newHarness, send, type Harness } from '../helpers/stores.js';
import { group, topic } from '../helpers/builders.js';
import { ConflictError, DelayTooLongError, MessageNotFoundError } from '../../lib/domain/errors.js';

let h: Harness;

const receive = (group = 'g') => h.queue.receive(group, { maxMessages: 10, waitSeconds: 0 });
const bodies = (ms: Array<{ body: string }>) => ms.map((m) => m.body);

beforeEach(async () => {
  h = await newHarness();
  await h.admin.putTopic('jobs', topic());
  await h.admin.putGroup('g', group('jobs', { visibilityTimeoutSeconds: 30 }));
});

describe('scheduled and delayed messages', () => {
  it('delivers a delayed message no earlier than due', async () => {
    const sent = await h.queue.send('jobs', send('later', { delaySeconds: 5 }));
    expect(sent).toMatchObject({ state: 'scheduled', deliverAt: new Date(h.clock.now() + 5000).toISOString() });
    expect(sent.messageId).toMatch(/^d[0-9A-Z]{26}$/);
    expect(await h.queue.getMessage('jobs', sent.messageId)).toMatchObject({ state: 'scheduled', deliverAt: sent.deliverAt });
    h.clock.advance(4_900);
    await h.fire();
    expect(await receive()).toEqual([]);
    h.clock.advance(100);
    await h.fire();
    const [m] = await receive();
    expect(m).toMatchObject({ messageId: sent.messageId, body: 'later', deliverableAt: new Date(h.clock.now()).toISOString() });
    expect(await h.queue.getMessage('jobs', sent.messageId)).toMatchObject({ state: 'deliverable' });
  });

  it('delivers at once when deliverAt is in the past', async () => {
    const sent = await h.queue.send('jobs', send('now', { deliverAt: h.clock.now() - 60_000 }));
    expect(sent.state).toBe('deliverable');
    expect(bodies(await receive())).toEqual(['now']);
  });

  it('refuses delays beyond the topic maxDelaySeconds', async () => {
    await expect(h.queue.send('jobs', send('x', { delaySeconds: 3 * 86_400 + 1 }))).rejects.toBeInstanceOf(DelayTooLongError);
    await expect(h.queue.send('jobs', send('x', { deliverAt: h.clock.now() + 3 * 86_400_000 + 1000 }))).rejects.toBeInstanceOf(
      DelayTooLongError,
    );
    await h.queue.send('jobs', send('ok', { delaySeconds: 3 * 86_400 }));
  });

  it('arms far-horizon messages by minute buckets, then by second', async () => {
    const due = h.clock.now() + 2 * 3600_000 + 30_500;
    for (let i = 0; i < 5; i++) await h.queue.send('jobs', send(`far-${i}`, { deliverAt: due + i }));
    expect(h.recorded.minutes).toHaveLength(1); // one schedule for the bucket, however many messages
    expect(h.recorded.minutes[0]?.at).toBe(Math.floor(due / 60_000) * 60_000 - 120_000);
    h.clock.t = h.recorded.minutes[0]!.at;
    await h.fire();
    expect(h.recorded.releases).toHaveLength(1);
    expect(await receive()).toEqual([]);
    h.clock.t = due;
    await h.fire();
    expect(bodies(await receive()).sort()).toEqual(['far-0', 'far-1', 'far-2', 'far-3', 'far-4']);
  });

  it('releases once even when the timer fires twice', async () => {
    const sent = await h.queue.send('jobs', send('once', { delaySeconds: 2 }));
    h.clock.advance(2_000);
    const id = sent.messageId.slice(1);
    expect(await h.releaser.release([id])).toBe(1);
    expect(await h.releaser.release([id])).toBe(0);
    await h.fire();
    expect(bodies(await receive())).toEqual(['once']);
    expect(await receive()).toEqual([]);
  });

  it('enters a FIFO shard at its deliverable time, behind what accumulated before', async () => {
    await h.admin.putTopic('ledger', topic({ type: 'fifo' }));
    await h.admin.putGroup('f', group('ledger', { deliveryMode: 'concurrent', visibilityTimeoutSeconds: 30 }));
    const later = await h.queue.send('ledger', send('scheduled-first', { shardKey: 'A', delaySeconds: 10 }));
    expect(later.sequence).toBeUndefined();
    // The shard opens with 'a': its numbers start from the clock (docs/design.md, Idle shards expire).
    const base = h.clock.now() * 1000;
    await h.queue.send('ledger', send('a', { shardKey: 'A' }));
    await h.queue.send('ledger', send('b', { shardKey: 'A' }));
    h.clock.advance(10_000);
    await h.fire();
    const got = await receive('f');
    expect(got.map((m) => [m.body, m.sequence! - base])).toEqual([
      ['a', 1],
      ['b', 2],
      ['scheduled-first', 3],
    ]);
  });

  it('releases messages of one FIFO shard whose wake-ups meet in one flight in deliverable-time order, then send order — not as their wake-ups came', async () => {
    await h.admin.putTopic('ledger', topic({ type: 'fifo' }));
    await h.admin.putGroup('f', group('ledger', { deliveryMode: 'serialized', visibilityTimeoutSeconds: 30 }));
    const second = Math.floor(h.clock.now() / 1000) * 1000 + 20_000;
    // Sent latest-due first: their wake-ups (one each) come in send order, all in one second.
    await h.queue.send('ledger', send('due-900', { shardKey: 'A', deliverAt: second + 900 }));
    await h.queue.send('ledger', send('due-500-first', { shardKey: 'A', deliverAt: second + 500 }));
    h.clock.advance(1);
    await h.queue.send('ledger', send('due-500-second', { shardKey: 'A', deliverAt: second + 500 }));
    await h.queue.send('ledger', send('due-100', { shardKey: 'A', deliverAt: second + 100 }));
    h.clock.t = second + 999;
    // The second's wake-ups together, as one SQS batch hands them to the release function (and as the
    // local runtime's timers fire them): one flight (docs/design.md, "One release path per due second").
    const wakes = h.recorded.releases.splice(0);
    expect(wakes).toHaveLength(4);
    await Promise.all(wakes.map((w) => h.timers.onRelease(w.payload)));
    const got: string[] = [];
    for (let i = 0; i < 4; i++) {
      const [m] = await receive('f');
      got.push(m!.body);
      await h.queue.commit('f', [m!.receiptHandle]);
    }
    expect(got).toEqual(['due-100', 'due-500-first', 'due-500-second', 'due-900']);
  });

  it('cancels a message that is still scheduled, and only then', async () => {
    const sent = await h.queue.send('jobs', send('cancel me', { delaySeconds: 60 }));
    await h.queue.cancel('jobs', sent.messageId);
    expect(await h.queue.getMessage('jobs', sent.messageId)).toMatchObject({ state: 'cancelled' });
    await expect(h.queue.cancel('jobs', sent.messageId)).rejects.toBeInstanceOf(ConflictError);
    h.clock.advance(61_000);
    await h.fire();
    expect(await receive()).toEqual([]);
    const direct = await h.queue.send('jobs', send('direct'));
    await expect(h.queue.cancel('jobs', direct.messageId)).rejects.toBeInstanceOf(ConflictError);
    await expect(h.queue.cancel('jobs', 'd01ARZ3NDEKTSV4RRFFQ69G5FAV')).rejects.toBeInstanceOf(MessageNotFoundError);
  });

  it('answers a repeated dedupId on a scheduled send with the original', async () => {
    const first = await h.queue.send('jobs', send('x', { delaySeconds: 30, dedupId: 'job-1' }));
    const again = await h.queue.send('jobs', send('x', { delaySeconds: 30, dedupId: 'job-1' }));
    expect(again).toEqual(first);
    h.clock.advance(30_000);
    await h.fire();
    expect(bodies(await receive())).toEqual(['x']);
  });

  it('sweeps overdue messages whose timer was lost', async () => {
    await h.queue.send('jobs', send('orphan', { delaySeconds: 3 }));
    h.recorded.releases.length = 0; // the wake-up is lost
    h.clock.advance(8_000); // the sweep handles what was due 5 s ago (SWEEP_SETTLE_MS)
    expect(await h.timers.sweep()).toBe(1);
    expect(bodies(await receive())).toEqual(['orphan']);
  });
});
