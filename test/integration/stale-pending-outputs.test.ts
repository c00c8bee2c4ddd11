/**
 * A protected commit that went pending saves its publish outputs (pending-outputs.ts) until the
 * older messages complete. A seek, or deleting the group and creating it again, drops the pending
 * commit and leaves its saved outputs to their TTL: a later commit of the same message — whatever it
 * publishes, nothing here — must never publish them (they are tied to the pending lease's token).
 * Until 2026-12-04 the cascade published them (found by an audit).
 */
import { describe, expect, it } from 'vitest';
import { Seeker } from '../../lib/services/seeker.js';
import { newHarness, send, type Harness } from '../helpers/stores.js';
import { group, topic } from '../helpers/builders.js';

/**
 * A protected group `g` (from `settings`) on FIFO topic `ledger`, a `reader` of topic `out`, and a1, a2
 * on one shard received: a2's commit publishing `output` goes pending behind a1, its output saved.
 */
async function pendingWithOutput(settings: Parameters<Harness['admin']['putGroup']>[1], output: string) {
  const h = await newHarness();
  await h.admin.putTopic('ledger', topic({ type: 'fifo' }));
  await h.admin.putTopic('out', topic());
  await h.admin.putGroup('g', settings);
  await h.admin.putGroup('reader', group('out'));
  await h.queue.sendBatch('ledger', ['a1', 'a2'].map((b) => send(b, { shardKey: 'A' })));
  const got = await h.queue.receive('g', { maxMessages: 10, waitSeconds: 0 });
  expect(got.map((m) => m.body)).toEqual(['a1', 'a2']);
  const [pending] = await h.queue.commit('g', [{ receiptHandle: got[1]!.receiptHandle, publish: [{ topic: 'out', ...send(output) }] }]);
  expect(pending).toMatchObject({ status: 'pending' });
  return h;
}

describe('protected pending commit dropped by a seek', () => {
  it('never publishes the dropped commit\'s saved outputs', async () => {
    // a2's commit goes pending behind a1, its output saved.
    const h = await pendingWithOutput(group('ledger', { deliveryMode: 'protected', visibilityTimeoutSeconds: 30 }), 'from-dropped-commit');
    // The seek drops every pending commit: its saved outputs must never be appended (design.md, Seek).
    h.clock.advance(1_000);
    await new Seeker(h.stores, h.clock).seek('g', 'earliest', undefined);
    h.clock.advance(1_000);
    const again = await h.queue.receive('g', { maxMessages: 10, waitSeconds: 0 });
    expect(again.map((m) => m.body)).toEqual(['a1', 'a2']);
    // This time the consumer publishes nothing for either message.
    expect(await h.queue.commit('g', [again[1]!.receiptHandle])).toMatchObject([{ status: 'pending' }]);
    expect(await h.queue.commit('g', [again[0]!.receiptHandle])).toMatchObject([{ status: 'committed' }]);
    expect((await h.admin.getGroup('g')).pending).toBe(0);
    const published = await h.queue.receive('reader', { maxMessages: 10, waitSeconds: 0 });
    expect(published.map((m) => m.body)).toEqual([]);
  }, 60_000);
});

describe('protected pending commit dropped by deleting its group', () => {
  it('a group created again under the same name never publishes the old group\'s saved outputs', async () => {
    const earliest = () => ({
      ...group('ledger', { deliveryMode: 'protected', visibilityTimeoutSeconds: 30 }),
      subscriptions: [{ topic: 'ledger', tags: undefined, startFrom: 'earliest' as const }],
    });
    const h = await pendingWithOutput(earliest(), 'from-deleted-group');
    h.clock.advance(1_000);
    await h.admin.deleteGroup('g');
    h.clock.advance(1_000);
    await h.admin.putGroup('g', earliest());
    h.clock.advance(1_000);
    const again = await h.queue.receive('g', { maxMessages: 10, waitSeconds: 0 });
    expect(again.map((m) => m.body)).toEqual(['a1', 'a2']);
    expect(await h.queue.commit('g', [again[1]!.receiptHandle])).toMatchObject([{ status: 'pending' }]);
    expect(await h.queue.commit('g', [again[0]!.receiptHandle])).toMatchObject([{ status: 'committed' }]);
    const published = await h.queue.receive('reader', { maxMessages: 10, waitSeconds: 0 });
    expect(published.map((m) => m.body)).toEqual([]);
  }, 60_000);
});
