/**
 * Commits carried by a receive fold into the claim of their stream (docs/design.md, Carried
 * commits): one conditional cursor update leases the next messages and completes the carried
 * ones; a carried token that no longer holds falls back to the plain commit (classification).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DeliveredMessage, Topic } from '../../lib/domain/model.js';
import { streamId } from '../../lib/domain/streams.js';
import { cryptoRandom } from '../../lib/ports/random.js';
import { harness, send, testTable, type Harness } from '../helpers/stores.js';
import { group, topic } from '../helpers/builders.js';

let h: Harness;
/** DynamoDB commands sent while counting, by name. */
let calls: string[];

beforeEach(async () => {
  const { doc, table } = await testTable();
  calls = [];
  doc.middlewareStack.add(
    (next, context) => async (args) => {
      calls.push(String(context.commandName));
      return next(args);
    },
    { step: 'initialize', name: 'countCalls' },
  );
  // Every send goes to partition 0 and every receive starts there: the carried lease and the next
  // message share one stream (with random partitions they do one time in four).
  h = harness(doc, table, { random: { ...cryptoRandom, fraction: () => 0 } });
  await h.admin.putTopic('orders', topic());
  await h.admin.putGroup('billing', group('orders', { visibilityTimeoutSeconds: 60 }));
});

afterEach(() => {
  h.doc.middlewareStack.remove('countCalls');
});

const receive = (max: number, commit: DeliveredMessage[] = []) =>
  h.queue.commitAndReceive(
    'billing',
    commit.map((m) => m.receiptHandle),
    { maxMessages: max, waitSeconds: 0 },
  );
const writes = () => calls.filter((c) => /^(Update|Put|Delete|TransactWrite|BatchWrite)/.test(c));

describe('carried commits', () => {
  it('fold into the claim of their stream: one cursor update commits the previous message and leases the next', async () => {
    await h.queue.sendBatch('orders', [send('a'), send('b')]);
    const [a] = await h.queue.receive('billing', { maxMessages: 1, waitSeconds: 0 });
    calls = [];
    const next = await receive(1, [a as DeliveredMessage]);
    expect(next.commitResults).toEqual([{ receiptHandle: a?.receiptHandle, status: 'committed' }]);
    expect(next.messages.map((m) => m.body)).toEqual(['b']);
    expect(writes()).toEqual(['UpdateItemCommand']);
    expect(await h.admin.getGroup('billing')).toMatchObject({ committed: 1, inFlight: 1 });
    // A repeat of the folded commit is answered committed, as any repeat.
    const repeat = await receive(1, [a as DeliveredMessage, ...next.messages]);
    expect(repeat.commitResults.map((r) => ('status' in r ? r.status : r.error.code))).toEqual(['committed', 'committed']);
    expect(await h.admin.getGroup('billing')).toMatchObject({ committed: 2, inFlight: 0, backlog: 0 });
  });

  it('a handle listed twice is one commit, answered committed twice (two writes of one lease would overlap in one update)', async () => {
    await h.queue.sendBatch('orders', [send('a'), send('b')]);
    const [a] = await h.queue.receive('billing', { maxMessages: 1, waitSeconds: 0 });
    calls = [];
    const next = await receive(1, [a as DeliveredMessage, a as DeliveredMessage]);
    expect(next.commitResults).toEqual([
      { receiptHandle: a?.receiptHandle, status: 'committed' },
      { receiptHandle: a?.receiptHandle, status: 'committed' },
    ]);
    expect(next.messages.map((m) => m.body)).toEqual(['b']);
    expect(writes()).toEqual(['UpdateItemCommand']);
    expect(await h.admin.getGroup('billing')).toMatchObject({ committed: 1, inFlight: 1 });
  });

  it('fold also when the receive\'s eventually consistent read predates the carried lease (read again, consistently)', async () => {
    await h.queue.sendBatch('orders', [send('a'), send('b')]);
    const orders = (await h.stores.catalog.topics(['orders'])).get('orders');
    const stale = await h.stores.cursors.getMany('billing', [streamId(orders as Topic, { kind: 'partition', partition: 0 })], { consistent: false, now: Date.now() });
    expect(stale.size).toBe(1);
    const [a] = await h.queue.receive('billing', { maxMessages: 1, waitSeconds: 0 });
    const getMany = h.stores.cursors.getMany.bind(h.stores.cursors);
    // The partition cursors as they were before `a` was leased.
    h.stores.cursors.getMany = async (group, streams, options) => (options?.consistent === false ? stale : getMany(group, streams, options));
    calls = [];
    const next = await receive(1, [a as DeliveredMessage]);
    expect(next.commitResults).toEqual([{ receiptHandle: a?.receiptHandle, status: 'committed' }]);
    expect(next.messages.map((m) => m.body)).toEqual(['b']);
    expect(writes()).toEqual(['UpdateItemCommand']);
    expect(await h.admin.getGroup('billing')).toMatchObject({ committed: 1, inFlight: 1 });
  });

  it('are written when the stream has nothing more to deliver', async () => {
    await h.queue.send('orders', send('only'));
    const [only] = await h.queue.receive('billing', { maxMessages: 1, waitSeconds: 0 });
    const last = await receive(10, [only as DeliveredMessage]);
    expect(last).toMatchObject({ messages: [], commitResults: [{ status: 'committed' }] });
    expect(await h.admin.getGroup('billing')).toMatchObject({ committed: 1, inFlight: 0 });
  });

  it('at the maximum (100 carried, 100 more to lease) stay within the expression budget, and nothing is lost', async () => {
    const bodies = Array.from({ length: 200 }, (_, i) => `m${i}`);
    for (let i = 0; i < 200; i += 100) await h.queue.sendBatch('orders', bodies.slice(i, i + 100).map((b) => send(b)));
    const first = await receive(100);
    expect(first.messages).toHaveLength(100);
    const second = await receive(100, first.messages);
    expect(second.commitResults).toHaveLength(100);
    expect(second.commitResults.every((r) => 'status' in r && r.status === 'committed')).toBe(true);
    expect(second.messages.length).toBeGreaterThan(0);
    const seen = [...first.messages, ...second.messages].map((m) => m.body);
    let carry = second.messages;
    for (let round = 0; round < 10 && carry.length > 0; round++) {
      const got = await receive(100, carry);
      expect(got.commitResults.every((r) => 'status' in r && r.status === 'committed')).toBe(true);
      seen.push(...got.messages.map((m) => m.body));
      carry = got.messages;
    }
    expect(seen.sort()).toEqual([...bodies].sort());
    expect(await h.admin.getGroup('billing')).toMatchObject({ committed: 200, inFlight: 0, backlog: 0 });
  });

  it('fall back to the plain commit when the folded update fails on a carried token (committed meanwhile: a repeat)', async () => {
    await h.queue.sendBatch('orders', [send('a'), send('b')]);
    const [a] = await h.queue.receive('billing', { maxMessages: 1, waitSeconds: 0 });
    // Between the claim's read and its write, the carried handle is committed by another call.
    const claim = h.stores.cursors.claim.bind(h.stores.cursors);
    let raced = false;
    h.stores.cursors.claim = async (...args) => {
      if (!raced) {
        raced = true;
        await h.queue.commit('billing', [a?.receiptHandle as string]);
      }
      return claim(...args);
    };
    const next = await receive(1, [a as DeliveredMessage]);
    expect(raced).toBe(true);
    expect(next.commitResults).toEqual([{ receiptHandle: a?.receiptHandle, status: 'committed' }]);
    expect(next.messages.map((m) => m.body)).toEqual(['b']);
    expect(await h.admin.getGroup('billing')).toMatchObject({ committed: 1, inFlight: 1 });
  });

  it('answer a carried handle whose lease expired and was delivered again as expired, and still deliver', async () => {
    await h.admin.putGroup('billing', group('orders', { visibilityTimeoutSeconds: 1 }));
    await h.queue.sendBatch('orders', [send('a'), send('b')]);
    const [a] = await h.queue.receive('billing', { maxMessages: 1, waitSeconds: 0 });
    h.clock.advance(5_000);
    // Between the claim's read and its write, another receiver takes the expired lease.
    const claim = h.stores.cursors.claim.bind(h.stores.cursors);
    let raced = false;
    h.stores.cursors.claim = async (...args) => {
      if (!raced) {
        raced = true;
        const again = await h.queue.receive('billing', { maxMessages: 1, waitSeconds: 0 });
        expect(again.map((m) => m.body)).toEqual(['a']);
      }
      return claim(...args);
    };
    const next = await receive(1, [a as DeliveredMessage]);
    expect(raced).toBe(true);
    expect(next.commitResults[0]).toMatchObject({ receiptHandle: a?.receiptHandle, error: { code: 'ReceiptHandleExpired' } });
    expect(next.messages.map((m) => m.body)).toEqual(['b']);
    expect(await h.admin.getGroup('billing')).toMatchObject({ committed: 0, inFlight: 2 });
  });

  it('of a stream the receive does not claim from (a topic it did not ask for) are committed on their own first', async () => {
    await h.admin.putTopic('refunds', topic());
    await h.admin.putGroup('billing', group(['orders', 'refunds'], { visibilityTimeoutSeconds: 60 }));
    await h.queue.send('orders', send('o'));
    await h.queue.send('refunds', send('r'));
    const [o] = await h.queue.receive('billing', { maxMessages: 1, waitSeconds: 0, topics: ['orders'] });
    const got = await h.queue.commitAndReceive('billing', [o?.receiptHandle as string], { maxMessages: 1, waitSeconds: 0, topics: ['refunds'] });
    expect(got.commitResults).toEqual([{ receiptHandle: o?.receiptHandle, status: 'committed' }]);
    expect(got.messages.map((m) => m.body)).toEqual(['r']);
    expect(await h.admin.getGroup('billing')).toMatchObject({ committed: 1, inFlight: 1 });
  });
});
