/**
 * A FIFO shard's notices can land out of sequence order: two producers append
 * to one shard and write their notices afterwards in the opposite order, or a
 * send dies between its segment and its notice and is retried after a later
 * send. The group's shard cursor must still start at the first message sent
 * after its subscription, never at the first notice it happens to read.
 * (Found by test/reliability/load.test.ts: two messages of a shard skipped.)
 */
import { describe, expect, it } from 'vitest';
import { newHarness, send } from '../helpers/stores.js';
import { group, topic } from '../helpers/builders.js';

describe('FIFO notices out of order', () => {
  it('delivers a message whose notice arrived after a later message of its shard', async () => {
    const h = await newHarness();
    await h.admin.putTopic('t', topic({ type: 'fifo' }));
    await h.admin.putGroup('g', group('t', { deliveryMode: 'concurrent', visibilityTimeoutSeconds: 30 }));
    h.clock.advance(1); // sent after the subscription (the same millisecond counts as before it)
    // The first send dies after its segment was written, before its notice.
    const appendNotices = h.stores.log.appendNotices.bind(h.stores.log);
    let dropNext = true;
    h.stores.log.appendNotices = async (...args) => {
      if (dropNext) {
        dropNext = false;
        throw new Error('injected: crash before the notice');
      }
      return appendNotices(...args);
    };
    // A new shard's numbers start from the clock (docs/design.md, Idle shards expire).
    const base = h.clock.now() * 1000;
    await expect(h.queue.send('t', send('first', { shardKey: 'k', dedupId: 'first' }))).rejects.toThrow('injected');
    expect((await h.queue.send('t', send('second', { shardKey: 'k', dedupId: 'second' }))).sequence).toBe(base + 2);
    const early = await h.queue.receive('g', { maxMessages: 10, waitSeconds: 0 });
    // The producer retries the first send: a dedup hit, which re-announces it.
    expect((await h.queue.send('t', send('first', { shardKey: 'k', dedupId: 'first' }))).sequence).toBe(base + 1);
    const late = await h.queue.receive('g', { maxMessages: 10, waitSeconds: 0 });
    const got = [...early, ...late];
    expect(got.map((m) => [m.body, m.sequence! - base])).toEqual([
      ['first', 1],
      ['second', 2],
    ]);
    expect(await h.admin.getGroup('g')).toMatchObject({ backlog: 0, inFlight: 2 });
  });

  it('still starts a shard cursor after the messages sent before the subscription', async () => {
    const h = await newHarness();
    await h.admin.putTopic('t', topic({ type: 'fifo' }));
    const base = h.clock.now() * 1000;
    await h.queue.send('t', send('before-1', { shardKey: 'k' }));
    await h.queue.send('t', send('before-2', { shardKey: 'k' }));
    h.clock.advance(1000);
    await h.admin.putGroup('g', group('t', { deliveryMode: 'serialized', visibilityTimeoutSeconds: 30 }));
    h.clock.advance(1000);
    await h.queue.send('t', send('after', { shardKey: 'k' }));
    const got = await h.queue.receive('g', { maxMessages: 10, waitSeconds: 0 });
    expect(got.map((m) => [m.body, m.sequence! - base])).toEqual([['after', 3]]);
  });
});
