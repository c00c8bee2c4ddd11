/**
 * Commits whose `publish` outputs do not fit one TransactWriteItems (issue 14,
 * item 2), on DynamoDB Local, which enforces the item (400 KB) and transaction
 * (100 items, 4 MB) limits: outputs are split by stored size into segments and
 * transactions, in order, and protected cascades complete in steps sized by
 * counted items and bytes.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { group, topic } from '../helpers/builders.js';
import { newHarness, send, type Harness } from '../helpers/stores.js';

/**
 * A shard's sequence numbers counted from its first one: a new shard's numbers start from the
 * clock (docs/design.md, Idle shards expire), then go up by one per message.
 */
const fromFirst = (messages: Array<{ sequence: number | null }>): number[] =>
  messages.map((m) => (m.sequence ?? 0) - (messages[0]?.sequence ?? 0) + 1);

/** Incompressible text of about `bytes` characters (base64 of random bytes). */
const noise = (bytes: number) => randomBytes(Math.ceil((bytes * 3) / 4)).toString('base64');

/** Everything group `g` can receive, committed as it comes, in delivery order. */
const drain = async (h: Harness, g: string, expected: number) => {
  const got: Array<{ body: string; sequence: number | null; shardKey: string | null }> = [];
  for (let round = 0; round < expected + 10 && got.length < expected; round++) {
    const batch = await h.queue.receive(g, { maxMessages: 100, waitSeconds: 0 });
    if (batch.length === 0) break;
    got.push(...batch);
    const results = await h.queue.commit(g, batch.map((m) => m.receiptHandle));
    for (const r of results) expect(r).toMatchObject({ status: 'committed' });
  }
  // Nothing more is left.
  expect(await h.queue.receive(g, { maxMessages: 100, waitSeconds: 0 })).toEqual([]);
  return got;
};

type ReaderMode = 'serialized' | 'concurrent';

/** A standard topic `in` with group `worker`, a FIFO topic `out` read by `reader`; one job received by `worker`. */
const jobWithFifoOutput = async (mode: ReaderMode) => {
  const h = await newHarness();
  await h.admin.putTopic('in', topic());
  await h.admin.putTopic('out', topic({ type: 'fifo' }));
  await h.admin.putGroup('worker', group('in', { visibilityTimeoutSeconds: 300 }));
  await h.admin.putGroup('reader', group('out', { deliveryMode: mode, visibilityTimeoutSeconds: 300 }));
  await h.queue.send('in', send('job'));
  const [job] = await h.queue.receive('worker', { maxMessages: 1, waitSeconds: 0 });
  return { h, job: job! };
};

/** A FIFO topic `ledger` read by protected group `p`, a FIFO topic `out` read by `reader`. */
const protectedLedger = async (mode: ReaderMode) => {
  const h = await newHarness();
  await h.admin.putTopic('ledger', topic({ type: 'fifo' }));
  await h.admin.putTopic('out', topic({ type: 'fifo' }));
  await h.admin.putGroup('p', group('ledger', { deliveryMode: 'protected', visibilityTimeoutSeconds: 600 }));
  await h.admin.putGroup('reader', group('out', { deliveryMode: mode, visibilityTimeoutSeconds: 600 }));
  return h;
};

describe('commit-with-publish beyond one transaction', () => {
  it('two 250 KB publishes to one FIFO shard: committed, both delivered in order', async () => {
    const { h, job } = await jobWithFifoOutput('serialized');
    const bodies = [noise(250 * 1024), noise(250 * 1024)];
    const [result] = await h.queue.commit('worker', [
      { receiptHandle: job.receiptHandle, publish: bodies.map((b) => ({ topic: 'out', ...send(b, { shardKey: 'A' }) })) },
    ]);
    expect(result).toMatchObject({ status: 'committed' });
    const out = await drain(h, 'reader', 2);
    expect(out.map((m) => m.body)).toEqual(bodies);
    expect(fromFirst(out)).toEqual([1, 2]);
    expect(await h.queue.receive('worker', { maxMessages: 1, waitSeconds: 0 })).toEqual([]);
  }, 60_000);

  it('10 outputs of 256 KiB incompressible base64 bodies: committed, all delivered in order, a repeat publishes nothing', async () => {
    const { h, job } = await jobWithFifoOutput('concurrent');
    const bodies = Array.from({ length: 10 }, () => randomBytes(256 * 1024).toString('base64'));
    const publish = bodies.map((b, i) => ({ topic: 'out', ...send(b, { encoding: 'base64', shardKey: 'A', keys: [`k${i}`] }) }));
    const [result] = await h.queue.commit('worker', [{ receiptHandle: job.receiptHandle, publish }]);
    expect(result).toMatchObject({ status: 'committed' });
    // The same handle again: answered from the history, nothing published twice.
    const [again] = await h.queue.commit('worker', [{ receiptHandle: job.receiptHandle, publish }]);
    expect(again).toMatchObject({ status: 'committed' });
    const out = await drain(h, 'reader', 10);
    expect(out.map((m) => m.body)).toEqual(bodies);
    expect(fromFirst(out)).toEqual(Array.from({ length: 10 }, (_, i) => i + 1));
  }, 120_000);
});

describe('protected cascade beyond one transaction', () => {
  it('30 pending commits with 10 keyed outputs each (one with a 250 KB output) cascade when the head commits with 3 × 250 KB outputs', async () => {
    const h = await protectedLedger('concurrent');
    await h.queue.sendBatch('ledger', Array.from({ length: 31 }, (_, i) => send(`m${i}`, { shardKey: 'A' })));
    const got = await h.queue.receive('p', { maxMessages: 100, waitSeconds: 0 });
    expect(got.map((m) => m.body)).toEqual(Array.from({ length: 31 }, (_, i) => `m${i}`));
    // Each output has a key (one more item each): 10 commits' outputs alone pass 100 items.
    const outputs = new Map<number, string[]>();
    for (let i = 1; i <= 30; i++) {
      outputs.set(i, i === 15 ? [noise(250 * 1024)] : Array.from({ length: 10 }, (_, j) => `o${i}-${j}`));
    }
    outputs.set(0, [noise(250 * 1024), noise(250 * 1024), noise(250 * 1024)]);
    const publishOf = (i: number) => (outputs.get(i) ?? []).map((b, j) => ({ topic: 'out', ...send(b, { shardKey: 'X', keys: [`k${i}-${j}`] }) }));
    for (let i = 30; i >= 1; i--) {
      const [r] = await h.queue.commit('p', [{ receiptHandle: got[i]!.receiptHandle, publish: publishOf(i) }]);
      expect(r).toMatchObject({ status: 'pending' });
    }
    expect((await h.admin.getGroup('p')).pending).toBe(30);
    const started = Date.now();
    const [head] = await h.queue.commit('p', [{ receiptHandle: got[0]!.receiptHandle, publish: publishOf(0) }]);
    const cascadeMs = Date.now() - started;
    expect(head).toMatchObject({ status: 'committed' });
    expect((await h.admin.getGroup('p')).pending).toBe(0);
    for (const m of got) expect((await h.queue.commit('p', [m.receiptHandle]))[0]).toMatchObject({ status: 'committed' });
    const expected = Array.from({ length: 31 }, (_, i) => outputs.get(i) ?? []).flat();
    const out = await drain(h, 'reader', expected.length);
    // Nothing lost, nothing twice, the shard's outputs in sequence order.
    expect(out.length).toBe(expected.length);
    expect(out.map((m) => m.body)).toEqual(expected);
    expect(fromFirst(out)).toEqual(expected.map((_, i) => i + 1));
    console.log(`cascade of 30 pending commits (${expected.length} outputs): ${cascadeMs} ms`);
  }, 300_000);

  it('a pending commit with 2 × 250 KB outputs (saved in parts) completes when the head commits: outputs in order', async () => {
    const h = await protectedLedger('serialized');
    await h.queue.sendBatch('ledger', [send('a', { shardKey: 'A' }), send('b', { shardKey: 'A' })]);
    const got = await h.queue.receive('p', { maxMessages: 10, waitSeconds: 0 });
    const bodies = [noise(250 * 1024), noise(250 * 1024), 'head'];
    const out = (b: string) => ({ topic: 'out', ...send(b, { shardKey: 'X' }) });
    const [pending] = await h.queue.commit('p', [{ receiptHandle: got[1]!.receiptHandle, publish: [out(bodies[0]!), out(bodies[1]!)] }]);
    expect(pending).toMatchObject({ status: 'pending' });
    const [head] = await h.queue.commit('p', [{ receiptHandle: got[0]!.receiptHandle, publish: [out(bodies[2]!)] }]);
    expect(head).toMatchObject({ status: 'committed' });
    expect((await h.admin.getGroup('p')).pending).toBe(0);
    const delivered = await drain(h, 'reader', 3);
    expect(delivered.map((m) => m.body)).toEqual([bodies[2], bodies[0], bodies[1]]);
    expect(fromFirst(delivered)).toEqual([1, 2, 3]);
  }, 60_000);
});
