/**
 * Commits pass claims (docs/design.md, "Commits pass claims"), on DynamoDB Local with two
 * "containers" (two service instances with their own DynamoDB clients on one table): in a
 * concurrent FIFO group, a claim on a shard that leaves its readiness and known head as they are
 * is conditional on `nx`, the visibility count `vv` and the ready-index key, not on the whole lease
 * map — so another consumer's commit between its plan and its write no longer makes it lose, while
 * a release (a visibility change: it holds an ordered shard back) or another claim that moved the
 * ready-index entry still does. Range claims are off here: these are ordinary claims, which a
 * concurrent group's claims not eligible for a range still are (docs/design.md, Range claims).
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { beforeEach, describe, expect, it } from 'vitest';
import { createDynamoClients } from '../../lib/adapters/dynamodb/client.js';
import { Contention } from '../../lib/adapters/dynamodb/append-contention.js';
import { FakeStopwatch } from '../helpers/fake-stopwatch.js';
import { dynamoEndpoint } from '../helpers/dynamo-endpoint.js';
import { FakeClock, harness, send, testTable, type Harness } from '../helpers/stores.js';
import * as build from '../helpers/builders.js';
import { keysCursorOf } from '../helpers/marshalled.js';
import type { CommitResult } from '../../lib/services/committer.js';

const SHARD = 't:t/k:k';

let a: Harness;
let b: Harness;
let aWatch: FakeStopwatch;
let aClient: DynamoDBClient;

/** A's cursor writes on the shard and how many of them failed their condition. */
interface Writes {
  writes: number;
  lost: number;
}

/** Before A's next cursor write on the shard, `rival` runs (B's commit or release); counts A's cursor writes from then on. */
function beforeNextWrite(rival: () => Promise<unknown>): Writes {
  const seen: Writes = { writes: 0, lost: 0 };
  let armed = true;
  aClient.middlewareStack.add(
    (next, context) => async (args) => {
      const cursorWrite = context.commandName === 'UpdateItemCommand' && keysCursorOf(args.input, SHARD);
      if (!cursorWrite) return next(args);
      if (armed) {
        armed = false;
        await rival();
      }
      seen.writes++;
      try {
        return await next(args);
      } catch (error) {
        if ((error as Error).name === 'ConditionalCheckFailedException') seen.lost++;
        throw error;
      }
    },
    { step: 'initialize', name: 'beforeNextWrite' },
  );
  return seen;
}

const bodies = (messages: Array<{ body: string }>) => messages.map((m) => m.body);
const batch = (from: number, count: number) => Array.from({ length: count }, (_, i) => send(`m${from + i}`, { shardKey: 'k' }));

describe('commits pass claims', () => {
  beforeEach(async () => {
    const { doc, table } = await testTable();
    const clock = new FakeClock();
    const mine = createDynamoClients({ endpoint: dynamoEndpoint(), requestTimeoutMs: 10_000 });
    aClient = mine.client;
    aWatch = new FakeStopwatch();
    a = harness(mine.doc, table, { clock, claimContention: new Contention(aWatch, () => 0.999), rangeClaims: false });
    b = harness(doc, table, { clock, rangeClaims: false });
    await a.admin.putTopic('t', build.topic({ type: 'fifo' }));
    await a.admin.putGroup('g', build.group('t', { deliveryMode: 'concurrent', visibilityTimeoutSeconds: 60, retryPolicy: { initialSeconds: 30 } }));
    for (let i = 0; i < 4; i++) await a.queue.sendBatch('t', batch(1 + 10 * i, 10));
  });

  /** B holds m1..m10; A holds m11..m20, and its cursor cache has the cursor its claim left. */
  async function twoHolders() {
    const held = await b.queue.receive('g', { maxMessages: 10, waitSeconds: 0 });
    expect(bodies(held)).toEqual(bodies(batch(1, 10)));
    expect(bodies(await a.queue.receive('g', { maxMessages: 10, waitSeconds: 0 }))).toEqual(bodies(batch(11, 10)));
    return held;
  }

  it("another consumer's commit between a claim's plan and its write: the claim wins at its first write, no turn", async () => {
    const held = await twoHolders();
    let committed: CommitResult[] = [];
    const writes = beforeNextWrite(async () => {
      committed = await b.queue.commit('g', held.map((m) => m.receiptHandle));
    });
    expect(bodies(await a.queue.receive('g', { maxMessages: 10, waitSeconds: 0 }))).toEqual(bodies(batch(21, 10)));
    expect(committed.map((c) => ('status' in c ? c.status : c.error.code))).toEqual(Array(10).fill('committed'));
    // Planned from the cache entry A's last claim left (which still lists B's leases): one write, won.
    expect(writes).toEqual({ writes: 1, lost: 0 });
    expect(aWatch.waits).toEqual([]);
    // Nothing lost, nothing twice: the rest once, in order, then nothing.
    expect(bodies(await b.queue.receive('g', { maxMessages: 10, waitSeconds: 0 }))).toEqual(bodies(batch(31, 10)));
    expect(await b.queue.receive('g', { maxMessages: 10, waitSeconds: 0 })).toEqual([]);
  });

  it('a release between the plan and the write still makes the claim lose: nothing is delivered past the released message', async () => {
    const held = await twoHolders();
    const writes = beforeNextWrite(async () => {
      // B gives m1 back: it waits out its back-off (30 s), and the ordered shard waits with it.
      await b.queue.changeVisibility('g', held[0]!.receiptHandle, 0);
    });
    expect(await a.queue.receive('g', { maxMessages: 10, waitSeconds: 0 })).toEqual([]);
    // The write planned before the release lost on the visibility count; planned again, it delivers
    // nothing and only moves the shard's ready-index entry to the end of m1's back-off.
    expect(writes).toEqual({ writes: 2, lost: 1 });
    // Once the back-off is over, m1 comes first.
    a.clock.advance(31_000);
    expect(bodies(await a.queue.receive('g', { maxMessages: 1, waitSeconds: 0 }))).toEqual(['m1']);
  });

  it('12 consumers in 3 containers on one hot shard, committing and releasing: every message committed once, nothing left', async () => {
    // Releases (visibility 0, no back-off) count in `vv` and come back at once; commits pass claims.
    const c = harness(b.doc, b.table, { clock: a.clock, rangeClaims: false });
    await a.admin.putTopic('hot', build.topic({ type: 'fifo' }));
    await a.admin.putGroup('h', build.group('hot', { deliveryMode: 'concurrent', visibilityTimeoutSeconds: 60, retryPolicy: { initialSeconds: 0 } }));
    const total = 200;
    for (let i = 0; i < total; i += 10) await a.queue.sendBatch('hot', Array.from({ length: 10 }, (_, j) => send(`h${i + j}`, { shardKey: 'hot' })));
    const committed: string[] = [];
    let released = 0;
    const worker = async (h: Harness, seed: number) => {
      for (let round = 0; committed.length < total && round < 200; round++) {
        const got = await h.queue.receive('h', { maxMessages: 10, waitSeconds: 0 });
        if (got.length === 0) {
          await new Promise((resolve) => setTimeout(resolve, 5));
          continue;
        }
        // One in ten (by position and worker) goes back instead of being committed.
        const back = got.filter((_, i) => (i + round + seed) % 10 === 0);
        for (const m of back) await h.queue.changeVisibility('h', m.receiptHandle, 0);
        released += back.length;
        const keep = got.filter((m) => !back.includes(m));
        const results = await h.queue.commit('h', keep.map((m) => m.receiptHandle));
        results.forEach((r, i) => {
          expect(r).toMatchObject({ status: 'committed' });
          committed.push(keep[i]!.body);
        });
      }
    };
    await Promise.all([a, b, c].flatMap((h, k) => Array.from({ length: 4 }, (_, w) => worker(h, 4 * k + w))));
    expect(released).toBeGreaterThan(0);
    expect(committed).toHaveLength(total);
    expect(new Set(committed).size).toBe(total);
    expect(await a.queue.receive('h', { maxMessages: 10, waitSeconds: 0 })).toEqual([]);
  });

  it('another claim that moved the ready-index entry later between the plan and the write makes the claim lose (review)', async () => {
    for (let i = 4; i < 11; i++) await a.queue.sendBatch('t', batch(1 + 10 * i, 10));
    const t0 = a.clock.now();
    // B holds m1 briefly (10 s, then its 30 s back-off) and m2..m99 long; A holds m100: 100 leases,
    // the shard blocked, its entry at m1's expiry.
    expect(bodies(await b.queue.receive('g', { maxMessages: 1, visibilityTimeoutSeconds: 10, waitSeconds: 0 }))).toEqual(['m1']);
    expect(await b.queue.receive('g', { maxMessages: 98, visibilityTimeoutSeconds: 3600, waitSeconds: 0 })).toHaveLength(98);
    const mine = await a.queue.receive('g', { maxMessages: 1, visibilityTimeoutSeconds: 3600, waitSeconds: 0 });
    expect(bodies(mine)).toEqual(['m100']);
    a.clock.t = t0 + 40_000 - 1;
    let rival: string[] = [];
    const writes = beforeNextWrite(async () => {
      // Between A's plan and its write m1 expires, and B renews it: the shard is still blocked, so B
      // moves the entry to m1's new expiry (≈ 2 min), from a lease map without A's next lease.
      a.clock.advance(2);
      rival = bodies(await b.queue.receive('g', { maxMessages: 1, waitSeconds: 0 }));
    });
    // A commits m100 in its receive (carried) and takes m101 for 5 s (+ 30 s back-off).
    const answer = await a.queue.commitAndReceive('g', [mine[0]!.receiptHandle], { maxMessages: 1, visibilityTimeoutSeconds: 5, waitSeconds: 0 });
    expect(rival).toEqual(['m1']);
    expect(bodies(answer.messages)).toEqual(['m101']);
    // The write planned before B's lost on the ready-index key, and was planned again.
    expect(writes.lost).toBe(1);
    // m101's holder is gone: once its lease ran out the shard is ready, long before m1's.
    a.clock.advance(36_000);
    expect(bodies(await b.queue.receive('g', { maxMessages: 10, waitSeconds: 0 }))).toEqual(['m101']);
  });
});
