/**
 * Range claims (docs/design.md, Range claims), on DynamoDB Local: a concurrent group's claim on a
 * hot FIFO shard, in a container that lost claims there lately, takes a range of the shard by
 * arithmetic (`SET fr.<id> = nx ADD nx :n`) — one write no other claim makes fail — and the range
 * stays a range until a commit of all of it (one write) or anything else touches a member, which
 * first writes it out as ordinary leases.
 */
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { createDynamoClients } from '../../lib/adapters/dynamodb/client.js';
import { dynamoEndpoint } from '../helpers/dynamo-endpoint.js';
import { cryptoRandom } from '../../lib/ports/random.js';
import { cursorPk } from '../../lib/adapters/dynamodb/keys.js';
import { contendedClaims } from '../helpers/contended-claims.js';
import { FakeStopwatch } from '../helpers/fake-stopwatch.js';
import { FakeClock, harness, send, testTable, type Harness } from '../helpers/stores.js';
import * as build from '../helpers/builders.js';
import { KEY, bodies, completionsIn, cursorItem, range, statuses } from '../helpers/hot-shard.js';
import { Seeker } from '../../lib/services/seeker.js';


/** Claims of group `g` on the shard count as contended here: they take ranges. */
const contended = () => contendedClaims([KEY]);

let a: Harness;
let plain: Harness;
let clock: FakeClock;


const rangesIn = (item: Record<string, unknown>) => Object.keys((item.fr as object | undefined) ?? {}).length;
const leasesIn = (item: Record<string, unknown>) => Object.keys((item.fl as object | undefined) ?? {}).length;

/**
 * A FIFO topic `t` and a concurrent group `g` on a new table, `messages` sent to shard `k` in batches
 * of 10 (m1, m2, …): `a` a container that lost claims there lately (it takes ranges), `plain` another.
 */
async function contendedShard(messages: number) {
  const { doc, table } = await testTable();
  const clock = new FakeClock();
  const a = harness(doc, table, { clock, claimContention: contended() });
  const plain = harness(doc, table, { clock });
  await a.admin.putTopic('t', build.topic({ type: 'fifo' }));
  await a.admin.putGroup('g', build.group('t', { deliveryMode: 'concurrent', visibilityTimeoutSeconds: 60 }));
  for (let i = 0; i < messages; i += 10) await a.queue.sendBatch('t', range(1 + i, 10).map((body) => send(body, { shardKey: 'k' })));
  return { a, plain };
}

describe('range claims', () => {
  beforeEach(async () => {
    const { doc, table } = await testTable();
    clock = new FakeClock();
    a = harness(doc, table, { clock, claimContention: contended() });
    plain = harness(doc, table, { clock });
    await a.admin.putTopic('t', build.topic({ type: 'fifo' }));
    await a.admin.putGroup('g', build.group('t', { deliveryMode: 'concurrent', visibilityTimeoutSeconds: 60, retryPolicy: { initialSeconds: 0 } }));
    for (let i = 0; i < 5; i++) await a.queue.sendBatch('t', range(1 + 10 * i, 10).map((body) => send(body, { shardKey: 'k' })));
  });

  it('a contended claim takes a range; a commit of the whole range is one write and leaves no lease', async () => {
    const first = await a.queue.receive('g', { maxMessages: 10, waitSeconds: 0 });
    expect(bodies(first)).toEqual(range(1, 10));
    const second = await a.queue.receive('g', { maxMessages: 10, waitSeconds: 0 });
    expect(bodies(second)).toEqual(range(11, 10));
    let item = await cursorItem(a);
    expect(rangesIn(item)).toBe(2);
    expect(leasesIn(item)).toBe(0);
    const starts = Object.values(item.fr as Record<string, number>).sort((x, y) => x - y);
    expect([starts[1]! - starts[0]!, Number(item.nx) - starts[1]!]).toEqual([10, 10]);
    expect(statuses(await a.queue.commit('g', first.map((m) => m.receiptHandle)))).toEqual(Array(10).fill('committed'));
    item = await cursorItem(a);
    expect(rangesIn(item)).toBe(1);
    // The range's 10 completions are one entry of `dn`.
    expect([Object.keys(item.dn as object).length, completionsIn(item)]).toEqual([1, 10]);
    // A repeated commit answers committed again.
    expect(statuses(await a.queue.commit('g', first.map((m) => m.receiptHandle)))).toEqual(Array(10).fill('committed'));
    expect(statuses(await plain.queue.commit('g', second.map((m) => m.receiptHandle)))).toEqual(Array(10).fill('committed'));
    item = await cursorItem(a);
    expect(rangesIn(item)).toBe(0);
    expect(item.cm).toBe(20);
    // The rest once, then nothing.
    const rest = [...(await plain.queue.receive('g', { maxMessages: 10, waitSeconds: 0 })), ...(await plain.queue.receive('g', { maxMessages: 10, waitSeconds: 0 })), ...(await plain.queue.receive('g', { maxMessages: 10, waitSeconds: 0 }))];
    expect(bodies(rest)).toEqual(range(21, 30));
  });

  it('a commit of part of a range writes it out as leases first; the rest commits as leases', async () => {
    const got = await a.queue.receive('g', { maxMessages: 10, waitSeconds: 0 });
    expect(statuses(await a.queue.commit('g', got.slice(0, 3).map((m) => m.receiptHandle)))).toEqual(Array(3).fill('committed'));
    let item = await cursorItem(a);
    expect(rangesIn(item)).toBe(0);
    expect(leasesIn(item)).toBe(7);
    expect(statuses(await a.queue.commit('g', got.slice(3).map((m) => m.receiptHandle)))).toEqual(Array(7).fill('committed'));
    item = await cursorItem(a);
    expect(leasesIn(item)).toBe(0);
    expect(item.cm).toBe(10);
  });

  it("a member given back comes again with its delivery counted; the others' handles still commit", async () => {
    const got = await a.queue.receive('g', { maxMessages: 10, waitSeconds: 0 });
    await a.queue.changeVisibility('g', got[0]!.receiptHandle, 0);
    expect(statuses(await a.queue.commit('g', got.slice(1).map((m) => m.receiptHandle)))).toEqual(Array(9).fill('committed'));
    const again = await plain.queue.receive('g', { maxMessages: 1, waitSeconds: 0 });
    expect(again.map((m) => [m.body, m.deliveryCount])).toEqual([['m1', 2]]);
  });

  it('a range nobody commits expires like leases: its messages come again, none lost', async () => {
    const got = await a.queue.receive('g', { maxMessages: 10, waitSeconds: 0 });
    expect(bodies(got)).toEqual(range(1, 10));
    clock.advance(61_000);
    const again = await plain.queue.receive('g', { maxMessages: 10, waitSeconds: 0 });
    expect(again.map((m) => [m.body, m.deliveryCount])).toEqual(range(1, 10).map((b) => [b, 2]));
    // The old handles no longer commit; the new ones do.
    expect(statuses(await a.queue.commit('g', got.map((m) => m.receiptHandle)))).toEqual(Array(10).fill('ReceiptHandleExpired'));
    expect(statuses(await plain.queue.commit('g', again.map((m) => m.receiptHandle)))).toEqual(Array(10).fill('committed'));
  });

  it('a grantor that dies between its grant and its answer: the range comes again once its lease expires, nothing lost', async () => {
    const mine = createDynamoClients({ endpoint: dynamoEndpoint(), requestTimeoutMs: 10_000 });
    const dying = harness(mine.doc, a.table, { clock, claimContention: contended() });
    let armed = true;
    mine.client.middlewareStack.add(
      (next, context) => async (args) => {
        const result = await next(args);
        const update = String((args.input as { UpdateExpression?: string }).UpdateExpression ?? '');
        if (armed && context.commandName === 'UpdateItemCommand' && /ADD nx/.test(update)) {
          armed = false;
          throw new Error('the container died after its grant');
        }
        return result;
      },
      { step: 'initialize', name: 'dieAfterGrant' },
    );
    await expect(dying.queue.receive('g', { maxMessages: 10, waitSeconds: 0 })).rejects.toThrow('died');
    expect(rangesIn(await cursorItem(a))).toBe(1);
    // Another consumer goes on past it meanwhile (a range of its own: ranges are in flight there).
    const next = await plain.queue.receive('g', { maxMessages: 10, waitSeconds: 0 });
    expect(bodies(next)).toEqual(range(11, 10));
    await plain.queue.commit('g', next.map((m) => m.receiptHandle));
    clock.advance(61_000);
    const again = await plain.queue.receive('g', { maxMessages: 10, waitSeconds: 0 });
    expect(again.map((m) => [m.body, m.deliveryCount])).toEqual(range(1, 10).map((b) => [b, 2]));
    expect(statuses(await plain.queue.commit('g', again.map((m) => m.receiptHandle)))).toEqual(Array(10).fill('committed'));
  });

  it('a grant that failed pauses grants on its shard for a full-jitter wait: the receive answers nothing and writes nothing more', async () => {
    const mine = createDynamoClients({ endpoint: dynamoEndpoint(), requestTimeoutMs: 10_000 });
    const watch = new FakeStopwatch();
    const pausing = harness(mine.doc, a.table, { clock, claimContention: contendedClaims([KEY], watch), random: { ...cryptoRandom, fraction: () => 0.5 } });
    // It holds a range, so its next claims there are grants.
    expect(bodies(await pausing.queue.receive('g', { maxMessages: 10, waitSeconds: 0 }))).toEqual(range(1, 10));
    let writes = 0;
    let armed = true;
    mine.client.middlewareStack.add(
      (next, context) => async (args) => {
        const update = String((args.input as { UpdateExpression?: string }).UpdateExpression ?? '');
        if (context.commandName === 'UpdateItemCommand') writes++;
        // A seek just before its grant: the grant fails on the seek epoch.
        if (armed && context.commandName === 'UpdateItemCommand' && /ADD nx/.test(update)) {
          armed = false;
          await new Seeker(plain.stores, plain.clock).seek('g', 'earliest', undefined);
        }
        return next(args);
      },
      { step: 'initialize', name: 'seekBeforeGrant' },
    );
    // The grant lost on the seek: the receive's next try finds grants paused there (0.5 × 20 ms) and
    // answers nothing, writing nothing more — without the pause it would grant again at once.
    expect(await pausing.queue.receive('g', { maxMessages: 10, waitSeconds: 0 })).toEqual([]);
    expect(writes).toBe(1);
    watch.advance(9);
    expect(await pausing.queue.receive('g', { maxMessages: 10, waitSeconds: 0 })).toEqual([]);
    expect(writes).toBe(1);
    watch.advance(2);
    expect(bodies(await pausing.queue.receive('g', { maxMessages: 10, waitSeconds: 0 }))).toEqual(range(1, 10));
  });

  it('a claim that reads a notice of the shard it grants on raises the known head on its own first, then takes a range', async () => {
    expect(bodies(await a.queue.receive('g', { maxMessages: 10, waitSeconds: 0 }))).toEqual(range(1, 10));
    for (let i = 50; i < 80; i += 10) await plain.queue.sendBatch('t', range(1 + i, 10).map((body) => send(body, { shardKey: 'k' })));
    const claims = vi.spyOn(a.stores.cursors, 'claim');
    const raises = vi.spyOn(a.stores.cursors, 'raiseKnown');
    // The notices of m51–m80 announce more than the cursor knows: before, that made the claim an
    // ordinary one (which raced every grant on the shard); the raise is now a write of its own.
    expect(bodies(await a.queue.receive('g', { maxMessages: 10, waitSeconds: 0 }))).toEqual(range(11, 10));
    expect(claims).not.toHaveBeenCalled();
    expect(raises).toHaveBeenCalledTimes(1);
    const item = await cursorItem(a);
    const first = Math.min(...Object.values(item.fr as Record<string, number>));
    // Known up to m80: 79 past m1, the first range's start.
    expect([rangesIn(item), leasesIn(item), Number(item.kn) - first]).toEqual([2, 0, 79]);
    // Raised once: the receive's notices are done with, the next receive raises nothing.
    expect(bodies(await a.queue.receive('g', { maxMessages: 10, waitSeconds: 0 }))).toEqual(range(21, 10));
    expect(raises).toHaveBeenCalledTimes(1);
  });

  it("after a seek, a replay's completion of a run's first number leaves the run's other completions: an earlier handle's repeat still answers committed", async () => {
    const first = await a.queue.receive('g', { maxMessages: 10, waitSeconds: 0 });
    const second = await a.queue.receive('g', { maxMessages: 10, waitSeconds: 0 });
    expect(bodies(second)).toEqual(range(11, 10));
    expect(statuses(await a.queue.commit('g', second.map((m) => m.receiptHandle)))).toEqual(Array(10).fill('committed'));
    await a.queue.commit('g', first.map((m) => m.receiptHandle));
    await new Seeker(plain.stores, plain.clock).seek('g', 'earliest', undefined);
    // The replay: m1 … m11, the last one (the run's first number) completed on its own.
    const replay = await plain.queue.receive('g', { maxMessages: 10, waitSeconds: 0 });
    expect(bodies(replay)).toEqual(range(1, 10));
    const eleventh = await plain.queue.receive('g', { maxMessages: 1, waitSeconds: 0 });
    expect(bodies(eleventh)).toEqual(['m11']);
    expect(statuses(await plain.queue.commit('g', eleventh.map((m) => m.receiptHandle)))).toEqual(['committed']);
    // The run's entry stays: the earlier handles of m12 … m20 still name their completions.
    expect(statuses(await plain.queue.commit('g', second.slice(1).map((m) => m.receiptHandle)))).toEqual(Array(9).fill('committed'));
  });

  it('a seek ends ranges like leases', async () => {
    const got = await a.queue.receive('g', { maxMessages: 10, waitSeconds: 0 });
    await new Seeker(plain.stores, plain.clock).seek('g', 'earliest', undefined);
    expect(rangesIn(await cursorItem(a))).toBe(0);
    expect(statuses(await a.queue.commit('g', got.map((m) => m.receiptHandle)))).toEqual(Array(10).fill('ReceiptHandleExpired'));
    const again = await plain.queue.receive('g', { maxMessages: 10, waitSeconds: 0 });
    expect(bodies(again)).toEqual(range(1, 10));
  });

  it("four contended consumers on one shard: every message once, in ranges, nothing left", async () => {
    const others = [1, 2, 3].map(() => harness(a.doc, a.table, { clock, claimContention: contended() }));
    const seen: string[] = [];
    await Promise.all(
      [a, ...others].map(async (h) => {
        for (let round = 0; round < 20; round++) {
          const got = await h.queue.receive('g', { maxMessages: 5, waitSeconds: 0 });
          if (got.length === 0) break;
          seen.push(...bodies(got));
          expect(statuses(await h.queue.commit('g', got.map((m) => m.receiptHandle)))).toEqual(Array(got.length).fill('committed'));
        }
      }),
    );
    const rest = await plain.queue.receive('g', { maxMessages: 10, waitSeconds: 0 });
    seen.push(...bodies(rest));
    expect(new Set(seen).size).toBe(seen.length);
    expect([...seen].sort()).toEqual(range(1, 50).sort());
  });
});

describe('range claims and history', () => {
  it('completions past the cursor memory spill in a write of their own; an early handle still answers committed', async () => {
    const { a } = await contendedShard(12 * 10);
    const first = await a.queue.receive('g', { maxMessages: 10, waitSeconds: 0 });
    await a.queue.commit('g', first.map((m) => m.receiptHandle));
    const claims = vi.spyOn(a.stores.cursors, 'claim');
    const spills = vi.spyOn(a.stores.cursors, 'spill');
    for (let i = 1; i < 10; i++) {
      const got = await a.queue.receive('g', { maxMessages: 10, waitSeconds: 0 });
      expect(bodies(got)).toEqual(range(1 + 10 * i, 10));
      expect(statuses(await a.queue.commit('g', got.map((m) => m.receiptHandle)))).toEqual(Array(10).fill('committed'));
    }
    // Every receive after the first was a range claim, the spills writes of their own.
    expect(claims).not.toHaveBeenCalled();
    expect(spills).toHaveBeenCalled();
    const item = await cursorItem(a);
    expect(item.hw).toBeDefined();
    expect(completionsIn(item)).toBeLessThan(60);
    expect(statuses(await a.queue.commit('g', first.map((m) => m.receiptHandle)))).toEqual(Array(10).fill('committed'));
  });
});

describe('range claims and history: who spills', () => {
  it('the commit that takes the completions past 48 spills them, once; the grants that read them after spill nothing', async () => {
    const { a } = await contendedShard(12 * 10);
    const b = harness(a.doc, a.table, { clock: a.clock, claimContention: contended() });
    const held = [];
    for (let i = 0; i < 6; i++) held.push(await a.queue.receive('g', { maxMessages: 10, waitSeconds: 0 }));
    const spills = vi.spyOn(a.stores.cursors, 'spill');
    for (const got of held.slice(0, 4)) expect(statuses(await a.queue.commit('g', got.map((m) => m.receiptHandle)))).toEqual(Array(10).fill('committed'));
    expect(spills).not.toHaveBeenCalled();
    expect(completionsIn(await cursorItem(a))).toBe(40);
    // 40 → 50 completions: this commit crossed 48, and spills the 50 below the lowest lease (m51).
    expect(statuses(await a.queue.commit('g', held[4]!.map((m) => m.receiptHandle)))).toEqual(Array(10).fill('committed'));
    expect(spills).toHaveBeenCalledTimes(1);
    const item = await cursorItem(a);
    expect([completionsIn(item), item.hw !== undefined]).toEqual([0, true]);
    // Before, every grantor that read the 50 completions spilled them (all but the first in vain).
    const grantorSpills = vi.spyOn(b.stores.cursors, 'spill');
    expect(bodies(await b.queue.receive('g', { maxMessages: 10, waitSeconds: 0 }))).toEqual(range(61, 10));
    expect(grantorSpills).not.toHaveBeenCalled();
    // The spilled completions still answer their repeated commits.
    expect(statuses(await b.queue.commit('g', held[0]!.map((m) => m.receiptHandle)))).toEqual(Array(10).fill('committed'));
  });
});

describe('range claims: the window a grant reads', () => {
  /** `b`, a container of its own whose grants fail once: `a` takes five ranges between its read and its write. */
  async function overtakenGrant(a: Harness, bodies: (i: number) => string) {
    const mine = createDynamoClients({ endpoint: dynamoEndpoint(), requestTimeoutMs: 10_000 });
    const watch = new FakeStopwatch();
    const b = harness(mine.doc, a.table, { clock: a.clock, claimContention: contendedClaims([KEY], watch), random: { ...cryptoRandom, fraction: () => 0.5 } });
    expect((await b.queue.receive('g', { maxMessages: 10, waitSeconds: 0 })).map((m) => m.body)).toEqual(Array.from({ length: 10 }, (_, i) => bodies(1 + i)));
    let armed = true;
    mine.client.middlewareStack.add(
      (next, context) => async (args) => {
        const update = String((args.input as { UpdateExpression?: string }).UpdateExpression ?? '');
        if (armed && context.commandName === 'UpdateItemCommand' && /ADD nx/.test(update)) {
          armed = false;
          for (let i = 0; i < 5; i++) await a.queue.receive('g', { maxMessages: 10, waitSeconds: 0 });
        }
        return next(args);
      },
      { step: 'initialize', name: 'grantsBeforeGrant' },
    );
    expect(await b.queue.receive('g', { maxMessages: 10, waitSeconds: 0 })).toEqual([]);
    watch.advance(11);
    const windows = vi.spyOn(b.stores.log, 'segmentsCovering');
    return { b, width: (call: number) => windows.mock.calls[call]![2] - windows.mock.calls[call]![1] + 1 };
  }

  it('a grant that failed because others took nx past its window reads a wider one next; one that found the narrow window enough narrows it again', async () => {
    const { a } = await contendedShard(20 * 10);
    const { b, width } = await overtakenGrant(a, (i) => `m${i}`);
    expect(bodies(await b.queue.receive('g', { maxMessages: 10, waitSeconds: 0 }))).toEqual(range(61, 10));
    // 90 ahead of nx as read, and the range: before, 40 — the grant fails again under a wave of grantors.
    expect(width(0)).toBe(100);
    expect(bodies(await b.queue.receive('g', { maxMessages: 10, waitSeconds: 0 }))).toEqual(range(71, 10));
    expect(width(1)).toBe(50);
  });

  it('not where the wide window would pass one Query page (1 MB) at the largest record met', async () => {
    const { doc, table } = await testTable();
    const clock = new FakeClock();
    const a = harness(doc, table, { clock, claimContention: contended() });
    await a.admin.putTopic('t', build.topic({ type: 'fifo' }));
    await a.admin.putGroup('g', build.group('t', { deliveryMode: 'concurrent', visibilityTimeoutSeconds: 60 }));
    const big = (i: number) => `${String(i).padStart(4, '0')}${'x'.repeat(12_000)}`;
    for (let i = 0; i < 130; i += 10) await a.queue.sendBatch('t', Array.from({ length: 10 }, (_, j) => send(big(1 + i + j), { shardKey: 'k' })));
    const { b, width } = await overtakenGrant(a, big);
    expect((await b.queue.receive('g', { maxMessages: 10, waitSeconds: 0 })).map((m) => m.body)).toEqual(Array.from({ length: 10 }, (_, i) => big(61 + i)));
    expect(width(0)).toBe(50);
  });
});

describe('range claims at the lease bound', () => {
  it('ranges count as leases in flight: 10 ranges of 10 fill a shard, the next receive gets nothing until one is committed', async () => {
    const { a } = await contendedShard(13 * 10);
    const held = [];
    for (let i = 0; i < 10; i++) held.push(await a.queue.receive('g', { maxMessages: 10, waitSeconds: 0 }));
    expect(held.flat()).toHaveLength(100);
    const item = await cursorItem(a);
    expect(rangesIn(item) * 10 + leasesIn(item)).toBe(100);
    expect(rangesIn(item)).toBeGreaterThan(5);
    expect(await a.queue.receive('g', { maxMessages: 10, waitSeconds: 0 })).toEqual([]);
    await a.queue.commit('g', held[0]!.map((m) => m.receiptHandle));
    expect(bodies(await a.queue.receive('g', { maxMessages: 10, waitSeconds: 0 }))).toEqual(range(101, 10));
  });
});

describe('range claims under load', () => {
  it('12 consumers in 3 containers on one hot shard, committing whole batches, parts, and releasing: every message committed once, nothing left', async () => {
    const { doc, table } = await testTable();
    const clock = new FakeClock();
    const containers = [0, 1, 2].map(() => {
      const mine = createDynamoClients({ endpoint: dynamoEndpoint(), requestTimeoutMs: 10_000 });
      return harness(mine.doc, table, { clock });
    });
    const [a] = containers as [Harness, Harness, Harness];
    await a.admin.putTopic('hot', build.topic({ type: 'fifo' }));
    await a.admin.putGroup('h', build.group('hot', { deliveryMode: 'concurrent', visibilityTimeoutSeconds: 60, retryPolicy: { initialSeconds: 0 } }));
    const total = 300;
    for (let i = 0; i < total; i += 10) await a.queue.sendBatch('hot', Array.from({ length: 10 }, (_, j) => send(`h${i + j}`, { shardKey: 'hot' })));
    const committed: string[] = [];
    let released = 0;
    const grants = containers.map((h) => vi.spyOn(h.stores.cursors, 'grant'));
    const worker = async (h: Harness, seed: number) => {
      for (let round = 0; committed.length < total && round < 300; round++) {
        const got = await h.queue.receive('h', { maxMessages: 10, waitSeconds: 0 });
        if (got.length === 0) {
          await new Promise((resolve) => setTimeout(resolve, 5));
          continue;
        }
        // Every third batch: one message in ten goes back (the rest committed apart from it); else the whole batch at once.
        const back = (round + seed) % 3 === 0 ? got.filter((_, i) => (i + round + seed) % 10 === 0) : [];
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
    await Promise.all(containers.flatMap((h, k) => Array.from({ length: 4 }, (_, w) => worker(h, 4 * k + w))));
    expect(released).toBeGreaterThan(0);
    expect(grants.reduce((n, g) => n + g.mock.calls.length, 0)).toBeGreaterThan(5);
    expect(committed).toHaveLength(total);
    expect(new Set(committed).size).toBe(total);
    expect(await a.queue.receive('h', { maxMessages: 10, waitSeconds: 0 })).toEqual([]);
    const { Item } = await a.doc.send(new GetCommand({ TableName: table, Key: { pk: cursorPk('h'), sk: 't:hot/k:hot' }, ConsistentRead: true }));
    expect([Object.keys(Item?.fl ?? {}).length, Object.keys(Item?.fr ?? {}).length, Item?.cm]).toEqual([0, 0, total]);
  });

  it('ranges of 1 beside a range of 10: the bound counts what is in flight, not the largest range times the ranges', async () => {
    const { a } = await contendedShard(5 * 10);
    const ones = [];
    for (let i = 0; i < 12; i++) ones.push(...(await a.queue.receive('g', { maxMessages: 1, waitSeconds: 0 })));
    expect(bodies(ones)).toEqual(range(1, 12));
    expect(rangesIn(await cursorItem(a))).toBeGreaterThan(9);
    expect(bodies(await a.queue.receive('g', { maxMessages: 10, waitSeconds: 0 }))).toEqual(range(13, 10));
  });
});

describe('range claims on a stream of small segments', () => {
  it('an ordinary claim after ranges moved nx far past the read position reads from the segment holding nx', async () => {
    const { a, plain } = await contendedShard(0);
    // One message a segment.
    for (const body of range(1, 40)) await a.queue.send('t', send(body, { shardKey: 'k' }));
    for (let i = 0; i < 3; i++) {
      const got = await a.queue.receive('g', { maxMessages: 10, waitSeconds: 0 });
      expect(bodies(got)).toEqual(range(1 + 10 * i, 10));
      await a.queue.commit('g', got.map((m) => m.receiptHandle));
    }
    expect(bodies(await plain.queue.receive('g', { maxMessages: 1, waitSeconds: 0 }))).toEqual(['m31']);
    expect(bodies(await plain.queue.receive('g', { maxMessages: 9, waitSeconds: 0 }))).toEqual(range(32, 9));
  });

  it('a grant does not look up the read position (a consistent Query of the segment holding nx on the hot key); the ordinary claim after it does', async () => {
    const { a } = await contendedShard(0);
    for (const body of range(1, 40)) await a.queue.send('t', send(body, { shardKey: 'k' }));
    let lookups = 0;
    a.doc.middlewareStack.add(
      (next, context) => async (args) => {
        const input = args.input as { ExpressionAttributeValues?: Record<string, unknown>; Limit?: number; ConsistentRead?: boolean; ScanIndexForward?: boolean };
        if (context.commandName === 'QueryCommand' && input.ExpressionAttributeValues?.[':pk'] === 'S#t:t/k:k' && input.Limit === 1 && input.ConsistentRead === true && input.ScanIndexForward === false) lookups++;
        return next(args);
      },
      { step: 'initialize', name: 'readPositionLookups' },
    );
    // The first receive makes the shard's cursor (its start is looked up); the next two grant.
    expect(bodies(await a.queue.receive('g', { maxMessages: 10, waitSeconds: 0 }))).toEqual(range(1, 10));
    lookups = 0;
    for (let i = 1; i < 3; i++) expect(bodies(await a.queue.receive('g', { maxMessages: 10, waitSeconds: 0 }))).toEqual(range(1 + 10 * i, 10));
    expect(rangesIn(await cursorItem(a))).toBe(3);
    expect(lookups).toBe(0);
    // A container that claims the ordinary way (every other would grant here: ranges were granted).
    const ordinary = harness(a.doc, a.table, { clock: a.clock, rangeClaims: false });
    expect(bodies(await ordinary.queue.receive('g', { maxMessages: 1, waitSeconds: 0 }))).toEqual(['m31']);
    expect(lookups).toBe(1);
  });
});
