/**
 * Found by an audit (2026-12-04): a repeated commit after a seek replay, once the replay's completion left the cursor.
 * Design (History for the whole retention, Seek epochs): "the replay's handle answers `committed`
 * on every repeat", for the message's whole retention. After a seek to `earliest`, the replay's
 * completions have seq <= the history mark and are spilled as stragglers; the look-up
 * (History.find) returns the chunk's entry of the first delivery (an older epoch) whenever the
 * chunk holds the seq, and never reads the straggler.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { cryptoRandom } from '../../lib/ports/random.js';
import { Seeker } from '../../lib/services/seeker.js';
import { newHarness, send, type Harness } from '../helpers/stores.js';
import { group, topic } from '../helpers/builders.js';

let h: Harness;
const onePartition = { ...cryptoRandom, fraction: () => 0 };
const receive = async (max: number) => h.queue.receive('billing', { maxMessages: max, waitSeconds: 0 });
const statuses = (results: Awaited<ReturnType<Harness['queue']['commit']>>) => results.map((r) => ('status' in r ? r.status : r.error.code));

async function churn(rounds: number) {
  for (let i = 0; i < rounds; i++) {
    h.clock.advance(1000);
    await h.queue.sendBatch('orders', Array.from({ length: 10 }, (_, j) => send(`churn-${i}-${j}`)));
    let left = 10;
    while (left > 0) {
      const got = await receive(left);
      expect(got.length).toBeGreaterThan(0);
      expect(statuses(await h.queue.commit('billing', got.map((m) => m.receiptHandle)))).toEqual(got.map(() => 'committed'));
      left -= got.length;
    }
  }
}

describe('seek replay and spilled history', () => {
  beforeEach(async () => {
    h = await newHarness({ random: onePartition });
    await h.admin.putTopic('orders', topic({ partitions: 1 }));
    await h.admin.putGroup('billing', group('orders', { visibilityTimeoutSeconds: 60 }));
  });

  it("the replay's handle repeats as committed after its completion was spilled", async () => {
    const { messageId } = await h.queue.send('orders', send('first'));
    const [a] = await receive(1);
    expect(statuses(await h.queue.commit('billing', [a!.receiptHandle]))).toEqual(['committed']);
    await churn(8); // 80 completions: `first` is in a history chunk
    const stream = 't:orders/p:0';
    const cursorBefore = await h.stores.cursors.get('billing', stream, h.clock.now());
    expect(cursorBefore?.done.has(1)).toBe(false);

    await new Seeker(h.stores, h.clock).seek('billing', 'earliest', undefined);
    // The replay: everything again, committed.
    let b: string | undefined;
    for (;;) {
      const got = await receive(100);
      if (got.length === 0) break;
      for (const m of got) if (m.messageId === messageId) b = m.receiptHandle;
      expect(statuses(await h.queue.commit('billing', got.map((m) => m.receiptHandle)))).toEqual(got.map(() => 'committed'));
    }
    expect(b).toBeDefined();
    // Its completion already left the cursor (the replay's own claims spilled it as a straggler).
    expect((await h.stores.cursors.get('billing', stream, h.clock.now()))?.done.has(1)).toBe(false);
    expect(statuses(await h.queue.commit('billing', [b!])), "the replay's handle, repeated at once").toEqual(['committed']);
    await churn(12); // the replay's completions are spilled (stragglers, below the mark)
    const cursorAfter = await h.stores.cursors.get('billing', stream, h.clock.now());
    expect(cursorAfter?.done.has(1)).toBe(false);
    expect(statuses(await h.queue.commit('billing', [b!])), "the replay's handle, repeated").toEqual(['committed']);
    expect(statuses(await h.queue.commit('billing', [a!.receiptHandle])), 'the first handle').toEqual(['ReceiptHandleExpired']);
  });
});
