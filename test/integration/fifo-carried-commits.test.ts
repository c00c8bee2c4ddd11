/**
 * Commits carried by a receive fold into the claim of their FIFO shard (docs/design.md, Carried
 * commits): one conditional shard-cursor update completes the carried leases, leases the next
 * messages and makes the ready-index decision for both. Protected groups commit them on their own.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { newHarness, send, type Harness } from '../helpers/stores.js';
import { countWrites } from '../helpers/index-units.js';
import * as build from '../helpers/builders.js';
import type { DeliveredMessage, DeliveryMode } from '../../lib/domain/model.js';

let h: Harness;
let writes: string[];

const receive = (max: number, commit: DeliveredMessage[] = []) =>
  h.queue.commitAndReceive(
    'g',
    commit.map((m) => m.receiptHandle),
    { maxMessages: max, waitSeconds: 0 },
  );
const indexKey = async (key: string) =>
  (await h.doc.send(new GetCommand({ TableName: h.table, Key: { pk: 'C#g', sk: `t:ledger/k:${key}` }, ConsistentRead: true }))).Item?.g1sk;
const statuses = (results: Array<{ status: string } | { error: { code: string } }>) => results.map((r) => ('status' in r ? r.status : r.error.code));

beforeEach(async () => {
  h = await newHarness();
  writes = [];
  countWrites(h.doc, (command) => writes.push(command));
  await h.admin.putTopic('ledger', build.topic({ type: 'fifo' }));
});

const subscribe = (mode: DeliveryMode) =>
  h.admin.putGroup('g', build.group(['ledger'], { deliveryMode: mode, visibilityTimeoutSeconds: 60, retryPolicy: { initialSeconds: 0 } }));

describe('carried commits on FIFO shards', () => {
  for (const mode of ['serialized', 'concurrent'] as const) {
    it(`${mode}: fold into the shard's claim — one cursor update commits the previous message and leases the next, in order`, async () => {
      await subscribe(mode);
      await h.queue.sendBatch('ledger', ['a', 'b', 'c'].map((b) => send(b, { shardKey: 'A' })));
      let [held] = (await receive(1)).messages;
      expect(held?.body).toBe('a');
      for (const body of ['b', 'c']) {
        writes = [];
        const next = await receive(1, [held as DeliveredMessage]);
        expect(statuses(next.commitResults)).toEqual(['committed']);
        expect(next.messages.map((m) => m.body)).toEqual([body]);
        expect(writes).toEqual(['UpdateItemCommand']);
        held = next.messages[0];
      }
      expect(await h.admin.getGroup('g')).toMatchObject({ committed: 2, inFlight: 1, backlog: 0 });
      // The last one, carried with nothing left to lease: still one write, and the shard leaves the index.
      writes = [];
      const last = await receive(1, [held as DeliveredMessage]);
      expect(statuses(last.commitResults)).toEqual(['committed']);
      expect(last.messages).toEqual([]);
      expect(writes).toEqual(['UpdateItemCommand']);
      expect(await indexKey('A')).toBeUndefined();
      expect(await h.admin.getGroup('g')).toMatchObject({ committed: 3, inFlight: 0, backlog: 0 });
      // A repeat of a folded commit is answered committed, as any repeat.
      expect(statuses((await receive(1, [held as DeliveredMessage])).commitResults)).toEqual(['committed']);
    });
  }

  it('a handle carried twice in one receive is one commit, answered committed twice; the next message is leased', async () => {
    await subscribe('serialized');
    await h.queue.sendBatch('ledger', ['a', 'b'].map((b) => send(b, { shardKey: 'A' })));
    const [a] = (await receive(1)).messages;
    writes = [];
    const next = await receive(1, [a as DeliveredMessage, a as DeliveredMessage]);
    expect(next.commitResults.map((r) => r.receiptHandle)).toEqual([a?.receiptHandle, a?.receiptHandle]);
    expect(statuses(next.commitResults)).toEqual(['committed', 'committed']);
    expect(next.messages.map((m) => m.body)).toEqual(['b']);
    expect(writes).toEqual(['UpdateItemCommand']);
    expect(await h.admin.getGroup('g')).toMatchObject({ committed: 1, inFlight: 1, backlog: 0 });
  });

  it('serialized, no room left: the carried commit is written and the shard stays ready for the next message', async () => {
    await subscribe('serialized');
    await h.queue.sendBatch('ledger', ['a', 'b'].map((b) => send(b, { shardKey: 'A' })));
    await h.queue.sendBatch('ledger', ['x'].map((b) => send(b, { shardKey: 'B' })));
    const first = (await receive(2)).messages;
    expect(first.map((m) => m.body).sort()).toEqual(['a', 'x']);
    const a = first.find((m) => m.body === 'a') as DeliveredMessage;
    const x = first.find((m) => m.body === 'x') as DeliveredMessage;
    // Both carried; the answer has room for one message: only one of the two shards' claims may lease.
    const next = await receive(1, [a, x]);
    expect(statuses(next.commitResults)).toEqual(['committed', 'committed']);
    expect(next.messages.map((m) => m.body)).toEqual(['b']);
    expect(await h.admin.getGroup('g')).toMatchObject({ committed: 2, inFlight: 1, backlog: 0 });
  });

  it('a stale carried handle (its lease expired and the message was delivered again) is answered expired; order holds', async () => {
    await subscribe('serialized');
    await h.queue.sendBatch('ledger', ['a', 'b'].map((b) => send(b, { shardKey: 'A' })));
    const [first] = (await h.queue.receive('g', { maxMessages: 1, waitSeconds: 0, visibilityTimeoutSeconds: 1 })) as DeliveredMessage[];
    h.clock.advance(2_000);
    const again = await receive(1);
    expect(again.messages.map((m) => [m.body, m.deliveryCount])).toEqual([['a', 2]]);
    const next = await receive(1, [first as DeliveredMessage]);
    expect(statuses(next.commitResults)).toEqual(['ReceiptHandleExpired']);
    expect(next.messages).toEqual([]);
    const after = await receive(1, again.messages);
    expect(statuses(after.commitResults)).toEqual(['committed']);
    expect(after.messages.map((m) => m.body)).toEqual(['b']);
  });

  it('concurrent consumers carrying their commits: nothing lost, each shard in order, each message committed once', async () => {
    await subscribe('serialized');
    const shards = ['A', 'B', 'C', 'D', 'E', 'F'];
    const perShard = 6;
    for (let i = 0; i < perShard; i++) await h.queue.sendBatch('ledger', shards.map((k) => send(`${k}-${i}`, { shardKey: k })));
    const delivered: string[] = [];
    const consumer = async () => {
      let held: DeliveredMessage[] = [];
      for (let round = 0, empty = 0; round < 200 && empty < 3; round++) {
        const got = await receive(3, held);
        expect(statuses(got.commitResults)).toEqual(held.map(() => 'committed'));
        delivered.push(...got.messages.map((m) => m.body));
        held = got.messages;
        empty = got.messages.length === 0 ? empty + 1 : 0;
      }
    };
    await Promise.all([consumer(), consumer(), consumer(), consumer()]);
    // Serialized: a shard's next message is leased only after the previous one was committed.
    for (const k of shards) expect(delivered.filter((b) => b.startsWith(`${k}-`))).toEqual(Array.from({ length: perShard }, (_, i) => `${k}-${i}`));
    expect(await h.admin.getGroup('g')).toMatchObject({ committed: shards.length * perShard, inFlight: 0, backlog: 0 });
  });

  it('protected: carried commits are committed on their own, in sequence, and the next message still comes', async () => {
    await subscribe('protected');
    await h.queue.sendBatch('ledger', ['a', 'b'].map((b) => send(b, { shardKey: 'A' })));
    const [a] = (await receive(1)).messages;
    writes = [];
    const next = await receive(1, [a as DeliveredMessage]);
    expect(statuses(next.commitResults)).toEqual(['committed']);
    expect(next.messages.map((m) => m.body)).toEqual(['b']);
    // The committer's write and the claim's: not folded.
    expect(writes.length).toBe(2);
    expect(await h.admin.getGroup('g')).toMatchObject({ committed: 1, inFlight: 1 });
  });
});
