/**
 * Found by the crash test (issue 9): in protected mode a commit can mark a
 * lease pending between another receiver's read of the cursor and its write.
 * That receiver planned to renew the (expired) lease; its write must fail,
 * or the message is delivered again after its commit was acknowledged
 * ("committed twice through different receipt handles"). The same holds for
 * dead-lettering a lease that went pending meanwhile.
 */
import { TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { beforeEach, describe, expect, it } from 'vitest';
import { newHarness, send, type Harness } from '../helpers/stores.js';
import { group, topic } from '../helpers/builders.js';

let h: Harness;

beforeEach(async () => {
  h = await newHarness();
  await h.admin.putTopic('ledger', topic({ type: 'fifo' }));
  await h.admin.putGroup('g', group('ledger', { deliveryMode: 'protected', visibilityTimeoutSeconds: 30, maxDeliveries: 2 }));
  await h.queue.sendBatch('ledger', ['a1', 'a2'].map((b) => send(b, { shardKey: 'A' })));
});

/** Both messages leased and expired; a stale snapshot read; then a2's commit goes pending (a1 still open). */
async function pendingAfterSnapshot() {
  const got = await h.queue.receive('g', { maxMessages: 10, waitSeconds: 0 });
  expect(got.map((m) => m.body)).toEqual(['a1', 'a2']);
  const a2 = (await h.stores.ids.codec()).openReceipt(got[1]!.receiptHandle);
  h.clock.advance(31_000);
  const stale = await h.stores.cursors.get('g', a2.stream, h.clock.now());
  const [result] = await h.queue.commit('g', [got[1]!.receiptHandle]);
  expect(result).toMatchObject({ status: 'pending' });
  return { stale: stale!, a2 };
}

describe('protected mode: a lease that went pending after a receiver read the cursor', () => {
  it('cannot be renewed from the stale read', async () => {
    const { stale, a2 } = await pendingAfterSnapshot();
    const lease = stale.leases.get(a2.seq)!;
    expect(lease.pending).toBe(false);
    const renewed = await h.stores.cursors.claim('g', a2.stream, {
      expectNext: stale.next,
      next: stale.next,
      segmentStart: stale.segmentStart,
      grant: [{ lease: { ...lease, token: 'renewed', expiresAt: h.clock.now() + 30_000, deliveries: lease.deliveries + 1 }, replaces: lease }],
      close: [],
      forgetDone: [],
    });
    expect(renewed.ok).toBe(false);
    expect((await h.stores.cursors.get('g', a2.stream, h.clock.now()))?.leases.get(a2.seq)).toMatchObject({ token: a2.token, pending: true });
  });

  it('cannot be closed or dead-lettered from the stale read', async () => {
    const { stale, a2 } = await pendingAfterSnapshot();
    const lease = stale.leases.get(a2.seq)!;
    const done = { seq: a2.seq, token: lease.token, at: h.clock.now(), outcome: 'expired' as const, deliveries: lease.deliveries };
    const closed = await h.stores.cursors.claim('g', a2.stream, {
      expectNext: stale.next,
      next: stale.next,
      segmentStart: stale.segmentStart,
      grant: [],
      close: [{ done, replaces: lease }],
      forgetDone: [],
    });
    expect(closed.ok).toBe(false);
    const dead = { ...done, outcome: 'dead-lettered' as const };
    await expect(
      h.doc.send(new TransactWriteCommand({ TransactItems: [h.stores.cursors.deadLetterItem('g', a2.stream, dead, lease.token)] })),
    ).rejects.toThrow(/ConditionalCheckFailed|cancel/i);
    expect((await h.stores.cursors.get('g', a2.stream, h.clock.now()))?.leases.get(a2.seq)).toMatchObject({ token: a2.token, pending: true });
  });

  it('still completes in order: a1 redelivered and committed, then a2 with it, each delivered once more at most', async () => {
    await pendingAfterSnapshot();
    const again = await h.queue.receive('g', { maxMessages: 10, waitSeconds: 0 });
    expect(again.map((m) => m.body)).toEqual(['a1']); // a2 is pending, not redelivered
    expect(await h.queue.commit('g', [again[0]!.receiptHandle])).toMatchObject([{ status: 'committed' }]);
    const stats = await h.admin.getGroup('g');
    expect(stats).toMatchObject({ inFlight: 0, pending: 0, committed: 2 });
  });
});
