/** `startFrom` on subscriptions (issue 17 item 1) on DynamoDB Local. */
import { beforeEach, describe, expect, it } from 'vitest';
import type { DeliveryMode, StartFrom } from '../../lib/domain/model.js';
import { newHarness, send, type Harness } from '../helpers/stores.js';
import * as build from '../helpers/builders.js';

let h: Harness;

beforeEach(async () => {
  h = await newHarness();
});

const subscribe = (name: string, topics: string[], startFrom: StartFrom | undefined, deliveryMode?: DeliveryMode) =>
  h.admin.putGroup(name, build.group(topics.map((topic) => ({ topic, tags: undefined, startFrom })), { deliveryMode }));
const receive = (g: string, max = 100) => h.queue.receive(g, { maxMessages: max, waitSeconds: 0 });
const bodies = (ms: Array<{ body: string }>) => ms.map((m) => m.body).sort();

/** Receives and commits until nothing comes; returns the bodies in delivery order. */
async function drain(g: string, max = 10): Promise<string[]> {
  const out: string[] = [];
  for (let round = 0; round < 50; round++) {
    const got = await receive(g, max);
    if (got.length === 0) return out;
    out.push(...got.map((m) => m.body));
    await h.queue.commit(g, got.map((m) => m.receiptHandle));
  }
  throw new Error('did not drain');
}

describe('startFrom on standard topics', () => {
  beforeEach(async () => {
    await h.admin.putTopic('orders', build.topic());
  });

  it('earliest gets every retained message; latest (the default) only later ones', async () => {
    for (let i = 0; i < 6; i++) await h.queue.send('orders', send(`old-${i}`));
    await h.queue.sendBatch('orders', [send('old-b1'), send('old-b2')]);
    await subscribe('replay', ['orders'], 'earliest');
    await subscribe('tail', ['orders'], undefined);
    await subscribe('tail2', ['orders'], 'latest');
    await h.queue.send('orders', send('new'));

    expect((await drain('replay')).sort()).toEqual(['new', 'old-0', 'old-1', 'old-2', 'old-3', 'old-4', 'old-5', 'old-b1', 'old-b2'].sort());
    expect(await drain('tail')).toEqual(['new']);
    expect(await drain('tail2')).toEqual(['new']);
    expect((await h.admin.getGroup('replay')).subscriptions).toEqual([{ topic: 'orders', startFrom: 'earliest' }]);
    expect((await h.admin.getGroup('tail2')).subscriptions).toEqual([{ topic: 'orders' }]);
  });

  it('backlog counts the retained messages at once', async () => {
    for (let i = 0; i < 5; i++) await h.queue.send('orders', send(`m${i}`));
    await subscribe('replay', ['orders'], 'earliest');
    expect((await h.admin.getGroup('replay')).backlog).toBe(5);
  });

  it('matters only when the subscription is added: re-PUT and PATCH move no cursor and keep the stored startFrom', async () => {
    for (let i = 0; i < 3; i++) await h.queue.send('orders', send(`a${i}`));
    await subscribe('replay', ['orders'], 'earliest');
    expect(await drain('replay')).toHaveLength(3);
    await subscribe('replay', ['orders'], 'earliest');
    await h.admin.patchGroup('replay', { subscriptions: [{ topic: 'orders', tags: undefined, startFrom: 'earliest' }] });
    expect(await receive('replay')).toEqual([]);
    // A re-PUT that leaves startFrom out does not turn the existing subscription into `latest`.
    await subscribe('replay', ['orders'], undefined);
    expect((await h.admin.getGroup('replay')).subscriptions).toEqual([{ topic: 'orders', startFrom: 'earliest' }]);
    // And a latest group re-PUT with earliest does not rewind.
    await subscribe('tail', ['orders'], undefined);
    await subscribe('tail', ['orders'], 'earliest');
    expect(await receive('tail')).toEqual([]);
    expect((await h.admin.getGroup('tail')).subscriptions).toEqual([{ topic: 'orders' }]);
  });

  it('PATCH adding an earliest subscription to an existing group replays that topic only', async () => {
    await h.admin.putTopic('audit', build.topic());
    await h.queue.send('audit', send('audit-old'));
    await h.queue.send('orders', send('orders-old'));
    await subscribe('g', ['orders'], undefined);
    await h.admin.patchGroup('g', {
      subscriptions: [
        { topic: 'orders', tags: undefined },
        { topic: 'audit', tags: undefined, startFrom: 'earliest' },
      ],
    });
    expect(await drain('g')).toEqual(['audit-old']);
  });

  it('skips expired messages and messages of a deleted topic’s old generation', async () => {
    await h.admin.putTopic('short', build.topic({ retentionSeconds: 300 }));
    await h.queue.send('short', send('expired'));
    h.clock.advance(301_000);
    await h.queue.send('short', send('kept'));
    await h.queue.send('orders', send('dead generation'));
    await h.admin.deleteTopic('orders');
    await h.admin.putTopic('orders', build.topic());
    await h.queue.send('orders', send('current'));
    await subscribe('replay', ['short', 'orders'], 'earliest');
    expect((await drain('replay')).sort()).toEqual(['current', 'kept']);
  });
});

describe('startFrom on FIFO topics', () => {
  beforeEach(async () => {
    await h.admin.putTopic('ledger', build.topic({ type: 'fifo' }));
  });

  it('earliest gets each shard’s retained history in order, then what comes later; latest gets only later messages', async () => {
    await h.queue.sendBatch('ledger', ['a1', 'a2', 'a3'].map((b) => send(b, { shardKey: 'A' })));
    await h.queue.send('ledger', send('b1', { shardKey: 'B' }));
    await h.queue.send('ledger', send('a4', { shardKey: 'A' }));
    await h.queue.send('ledger', send('b2', { shardKey: 'B' }));
    await subscribe('replay', ['ledger'], 'earliest', 'serialized');
    await subscribe('tail', ['ledger'], undefined, 'serialized');
    await h.queue.send('ledger', send('a5', { shardKey: 'A' }));
    await h.queue.send('ledger', send('c1', { shardKey: 'C' }));

    const seen = await drain('replay');
    expect(seen.filter((b) => b.startsWith('a'))).toEqual(['a1', 'a2', 'a3', 'a4', 'a5']);
    expect(seen.filter((b) => b.startsWith('b'))).toEqual(['b1', 'b2']);
    expect(seen.filter((b) => b.startsWith('c'))).toEqual(['c1']);
    expect(bodies(await drain('tail').then((b) => b.map((body) => ({ body }))))).toEqual(['a5', 'c1']);
  });

  it('a shard the group first hears of long after subscribing still starts at its first retained message', async () => {
    await h.queue.sendBatch('ledger', ['x1', 'x2'].map((b) => send(b, { shardKey: 'X' })));
    await subscribe('replay', ['ledger'], 'earliest', 'concurrent');
    // The notice cursors are read from the start only on the first receive.
    expect(await drain('replay')).toEqual(['x1', 'x2']);
    await h.queue.send('ledger', send('x3', { shardKey: 'X' }));
    expect(await drain('replay')).toEqual(['x3']);
  });
});
