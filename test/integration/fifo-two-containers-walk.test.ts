/**
 * A random walk of FIFO delivery over two containers (two harnesses on one table, their cursor caches
 * on), for the three ordered delivery modes with and without a tag filter: shards of batches (a hot
 * one: receive reads sized by the segments' fill), random receives, commits (current and stale
 * handles), releases with back-off, extensions and clock moves, several at once across containers.
 * Checked per group and shard after every step, then after a drain:
 *  - nothing is delivered after a commit of it answered committed or pending, nor past maxDeliveries;
 *  - a stale handle never commits;
 *  - serialized: a message is delivered only once every lower one is committed (or dead-lettered);
 *  - a first delivery never skips a lower message never delivered;
 *  - nothing above a released message is delivered during its back-off;
 *  - at the end every matching message is committed (or, at its last delivery, perhaps dead-lettered).
 * Written by an audit on 2026-12-04 (it found nothing; switching off the back-off hold in
 * claims.ts `waitingRelease` makes it fail at once). Seeds and steps are fixed: a failure is replayable.
 */
import { describe, expect, it } from 'vitest';
import type { DeliveredMessage } from '../../lib/domain/model.js';
import * as build from '../helpers/builders.js';
import { FakeClock, harness, send, testTable, type Harness } from '../helpers/stores.js';
import { prng } from '../helpers/random.js';

/** [seed, steps, maxDeliveries]: one run where messages reach their last delivery, one where they do not. */
const RUNS: Array<[number, number, number]> = [
  [21, 200, 3],
  [7, 200, 1000],
];


type Mode = 'serialized' | 'protected' | 'concurrent';
interface Held {
  group: string;
  shard: string;
  seq: number;
  handle: string;
  body: string;
}
interface GroupModel {
  name: string;
  mode: Mode;
  tagged: boolean;
  committed: Set<string>; // bodies
  delivered: Set<string>; // bodies delivered at least once
  held: Held[];
  stale: Held[];
  /** bodies delivered at their last allowed delivery and not committed: may be dead-lettered */
  maxed: Set<string>;
  /** shard -> released seq -> until */
  released: Map<string, Map<number, number>>;
}

describe('FIFO delivery over two containers, a random walk', () => {
  it.each(RUNS)('seed %i, %i steps, maxDeliveries %i', async (SEED, STEPS, MAXD) => {
    const rnd = prng(SEED);
    const pick = <T>(xs: T[]): T => xs[Math.floor(rnd() * xs.length)]!;
    const { doc, table } = await testTable();
    const clock = new FakeClock();
    const a = harness(doc, table, { clock, cursorCacheMs: 2_000 });
    const b = harness(doc, table, { clock, cursorCacheMs: 2_000 });
    const hs = [a, b];
    await a.admin.putTopic('t', build.topic({ type: 'fifo' }));
    const groups: GroupModel[] = [];
    for (const mode of ['serialized', 'protected', 'concurrent'] as Mode[]) {
      for (const tagged of [false, true]) {
        const name = `${mode.slice(0, 3)}${tagged ? '-tag' : ''}`;
        await a.admin.putGroup(
          name,
          build.group(tagged ? [{ topic: 't', tags: ['a'] }] : 't', {
            deliveryMode: mode,
            visibilityTimeoutSeconds: 10,
            maxDeliveries: MAXD,
            retryPolicy: { initialSeconds: 2, multiplier: 2, maxSeconds: 8 },
          }),
        );
        groups.push({ name, mode, tagged, committed: new Set(), delivered: new Set(), held: [], stale: [], maxed: new Set(), released: new Map() });
      }
    }
    // shard -> bodies in send order (seq order), with tag
    const sent = new Map<string, Array<{ body: string; tag: string }>>();
    const seqOf = new Map<string, number>(); // body -> seq
    const shardOf = new Map<string, string>();
    let n = 0;
    const violations: string[] = [];

    const sendSome = async (h: Harness) => {
      const shard = rnd() < 0.7 ? 'hot' : pick(['k1', 'k2']);
      const count = rnd() < 0.6 ? 10 : 1 + Math.floor(rnd() * 10);
      const entries = Array.from({ length: count }, () => {
        const body = `${shard}-${n++}`;
        const tag = rnd() < 0.3 ? 'a' : 'b';
        return { body, tag, input: send(body, { shardKey: shard, tag }) };
      });
      const results = await h.queue.sendBatch('t', entries.map((e) => e.input));
      entries.forEach((e, i) => {
        const r = results.find((x) => x.index === i);
        if (!r || !('result' in r)) return;
        seqOf.set(e.body, Number((r.result as { sequence?: number }).sequence));
        if (!Number.isFinite(seqOf.get(e.body))) throw new Error(`no sequence: ${JSON.stringify(r)}`);
        shardOf.set(e.body, shard);
        sent.set(shard, [...(sent.get(shard) ?? []), { body: e.body, tag: e.tag }]);
      });
    };

    const expected = (g: GroupModel, shard: string) => (sent.get(shard) ?? []).filter((m) => !g.tagged || m.tag === 'a');

    /** Checks one step's deliveries of group g (all ops of the step done). */
    const check = (g: GroupModel, got: DeliveredMessage[], at: number, step: number) => {
      const sorted = [...got].sort((x, y) => (x.sequence ?? 0) - (y.sequence ?? 0));
      for (const m of sorted) {
        const shard = m.shardKey!;
        if (m.deliveryCount > MAXD) violations.push(`step ${step} ${g.name}: ${m.body}#${m.deliveryCount} past maxDeliveries`);
        if (g.committed.has(m.body)) violations.push(`step ${step} ${g.name}: ${m.body}#${m.deliveryCount} delivered after its commit`);
        const below = expected(g, shard).filter((x) => (seqOf.get(x.body) ?? 0) < (m.sequence ?? 0));
        if (g.mode === 'serialized') {
          const open = below.filter((x) => !g.committed.has(x.body) && !g.maxed.has(x.body));
          if (open.length > 0) violations.push(`step ${step} ${g.name}: ${m.body}#${m.deliveryCount} delivered with ${open.map((x) => x.body).join(',')} below not committed`);
        }
        if (m.deliveryCount === 1) {
          const never = below.filter((x) => !g.delivered.has(x.body) && !sorted.some((y) => y.body === x.body));
          if (never.length > 0) violations.push(`step ${step} ${g.name}: ${m.body} first delivered with ${never.map((x) => x.body).join(',')} below never delivered`);
        }
        for (const [seq, until] of g.released.get(shard) ?? new Map()) {
          if (seq < (m.sequence ?? 0) && at < until && !sorted.some((y) => seqOf.get(y.body) === seq)) {
            violations.push(`step ${step} ${g.name}: ${m.body}#${m.deliveryCount} delivered during the back-off of released seq ${seq} (until +${until - at} ms)`);
          }
        }
      }
      for (const m of got) {
        g.delivered.add(m.body);
        g.released.get(m.shardKey!)?.delete(m.sequence!);
        g.stale.push(...g.held.filter((x) => x.body === m.body));
        g.held = g.held.filter((x) => x.body !== m.body);
        if (m.deliveryCount >= MAXD) g.maxed.add(m.body);
        g.held.push({ group: g.name, shard: m.shardKey!, seq: m.sequence!, handle: m.receiptHandle, body: m.body });
      }
    };

    const commitOne = async (h: Harness, g: GroupModel, items: Held[]) => {
      if (items.length === 0) return;
      const results = await h.queue.commit(g.name, items.map((i) => i.handle));
      results.forEach((r, i) => {
        const item = items[i]!;
        if ('status' in r) {
          if (g.stale.includes(item)) violations.push(`${g.name}: stale handle of ${item.body} (seq ${item.seq}) answered ${r.status}`);
          g.committed.add(item.body);
          g.maxed.delete(item.body);
          g.released.get(item.shard)?.delete(item.seq);
        }
        g.held = g.held.filter((x) => x.handle !== item.handle);
      });
    };

    for (let step = 0; step < STEPS; step++) {
      const r = rnd();
      if (r < 0.15) {
        await sendSome(pick(hs));
      } else if (r < 0.85) {
        // A concurrent round: each group gets 1–2 ops from random containers at once.
        const at = clock.now();
        const gotBy = new Map<GroupModel, DeliveredMessage[]>();
        const ops: Array<Promise<unknown>> = [];
        for (const g of groups) {
          gotBy.set(g, []);
          const k = 1 + Math.floor(rnd() * 3);
          const taken = new Set<string>();
          for (let j = 0; j < k; j++) {
            const h = pick(hs);
            const o = rnd();
            if (o < 0.55) {
              const max = pick([1, 2, 3, 5, 10]);
              ops.push(h.queue.receive(g.name, { maxMessages: max, waitSeconds: 0 }).then((ms) => gotBy.get(g)!.push(...ms)));
            } else if (o < 0.62) {
              const item = g.stale.length > 0 ? pick(g.stale) : undefined;
              if (item) ops.push(commitOne(h, g, [item]));
            } else if (o < 0.85) {
              const items = g.held.filter((x) => !taken.has(x.handle) && rnd() < 0.6);
              items.forEach((x) => taken.add(x.handle));
              ops.push(commitOne(h, g, items));
            } else if (o < 0.95) {
              const item = g.held.find((x) => !taken.has(x.handle));
              if (item) {
                taken.add(item.handle);
                ops.push(
                  h.queue.changeVisibility(g.name, item.handle, 0).then(
                    (until) => {
                      const m = g.released.get(item.shard) ?? new Map<number, number>();
                      m.set(item.seq, until);
                      g.released.set(item.shard, m);
                      g.held = g.held.filter((x) => x.handle !== item.handle);
                    },
                    () => {
                      g.held = g.held.filter((x) => x.handle !== item.handle);
                    },
                  ),
                );
              }
            } else {
              const item = g.held.find((x) => !taken.has(x.handle));
              if (item) {
                taken.add(item.handle);
                ops.push(h.queue.changeVisibility(g.name, item.handle, 20).catch(() => {}));
              }
            }
          }
        }
        await Promise.all(ops);
        for (const [g, got] of gotBy) check(g, got, at, step);
      } else {
        clock.advance(rnd() < 0.2 ? 12_000 : Math.floor(rnd() * 2_500));
      }
    }
    // Drain: commit everything, receive until empty, advancing time.
    let idle = 0;
    for (let round = 0; round < 1500 && idle < 6; round++) {
      clock.advance(3_000);
      let any = false;
      for (const g of groups) {
        await commitOne(a, g, g.held);
        const at = clock.now();
        const got = await pick(hs).queue.receive(g.name, { maxMessages: 10, waitSeconds: 0 });
        check(g, got, at, 10_000 + round);
        if (got.length > 0) any = true;
        await commitOne(b, g, g.held);
      }
      idle = any ? 0 : idle + 1;
    }
    for (const g of groups) {
      for (const shard of sent.keys()) {
        const lost = expected(g, shard).filter((m) => !g.committed.has(m.body) && !g.maxed.has(m.body));
        if (lost.length > 0) violations.push(`${g.name}: never committed on ${shard}: ${lost.map((m) => m.body).slice(0, 10).join(',')} (${lost.length})`);
      }
    }
    // Every group received something, and the walk sent enough to mean it.
    expect(n).toBeGreaterThan(100);
    for (const g of groups) expect(g.committed.size).toBeGreaterThan(0);
    expect(violations).toEqual([]);
  }, 300_000);
});
