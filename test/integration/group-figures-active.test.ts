/**
 * A group's figures read from its cursors with work only (partition cursors and the FIFO shards on
 * the ready index: lib/services/group-figures.ts, what a group past one page of cursors gets) equal
 * the figures of a whole read, under real traffic: sends over many shard keys of a default and a
 * wide FIFO topic and a standard topic, receives, commits in any order, releases, expired leases
 * and dead letters, in each delivery mode. What makes them equal is the ready index's invariant —
 * a shard with a message waiting or a lease has an entry (docs/design.md, Ready index) — which
 * every write path keeps. On DynamoDB Local.
 */
import { describe, expect, it } from 'vitest';
import type { DeliveryMode } from '../../lib/domain/model.js';
import { GroupFigures } from '../../lib/services/group-figures.js';
import { newHarness, send, type Harness } from '../helpers/stores.js';
import { group, topic } from '../helpers/builders.js';
import { prng } from '../helpers/random.js';

const TOPICS = ['f', 'w', 's'] as const;
const STEPS = 60;

async function compare(h: Harness, step: string) {
  const g = (await h.stores.catalog.getGroup('g'))!;
  const active = new GroupFigures(h.stores, h.clock, 0);
  const whole = new GroupFigures(h.stores, h.clock, 100);
  // The oldest messages' segments read by key where the cursors name them, against a Query each.
  const queried = new GroupFigures(h.stores, h.clock, 100, 'query');
  const [a, w, q] = await Promise.all([active.of(g), whole.of(g), queried.of(g)]);
  expect(a.committed, step).toBeNull();
  expect({ ...a, committed: w.committed }, step).toEqual(w);
  expect(w, step).toEqual(q);
  expect(await active.hasInFlight(g), step).toBe(await whole.hasInFlight(g));
  return w;
}

describe.each<DeliveryMode>(['concurrent', 'serialized', 'protected'])('figures from the cursors with work (%s)', (mode) => {
  it('equal a whole read at every step of random traffic', async () => {
    const h = await newHarness();
    await h.admin.putTopic('f', topic({ type: 'fifo' }));
    await h.admin.putTopic('w', topic({ type: 'fifo', partitions: 16 }));
    await h.admin.putTopic('s', topic());
    await h.admin.putGroup('g', group([...TOPICS], { deliveryMode: mode, maxDeliveries: 2, visibilityTimeoutSeconds: 30, retryPolicy: { initialSeconds: 0 } }));
    const random = prng(mode.length * 7919);
    const held: string[] = [];
    let worked = { inFlight: 0, backlog: 0, pending: 0, deadLettered: 0, oldest: 0 };
    for (let step = 0; step < STEPS; step++) {
      const roll = random();
      if (roll < 0.35) {
        const pick = random();
        const t = pick < 0.4 ? 'f' : pick < 0.8 ? 'w' : 's';
        const n = 1 + Math.floor(random() * 4);
        for (let i = 0; i < n; i++) await h.queue.send(t, send(`m${step}.${i}`, t === 's' ? {} : { shardKey: `k${Math.floor(random() * 4)}` }));
        // Messages of different ages, so that the oldest one's age tells the streams apart.
        h.clock.advance(1_000);
      } else if (roll < 0.6) {
        const got = await h.queue.receive('g', { maxMessages: 1 + Math.floor(random() * 5), waitSeconds: 0 });
        held.push(...got.map((m) => m.receiptHandle));
      } else if (roll < 0.8 && held.length > 0) {
        // Commit the newest part of what is held, newest first (protected: the later ones go pending).
        const take = held.splice(-Math.ceil(random() * held.length)).reverse();
        for (const handle of take) await h.queue.commit('g', [handle]);
      } else if (roll < 0.9 && held.length > 0) {
        const handle = held.splice(Math.floor(random() * held.length), 1)[0]!;
        await h.queue.changeVisibility('g', handle, 0).catch(() => undefined);
      } else {
        // Leases expire: the next receives deliver them again or dead-letter them.
        h.clock.advance(31_000);
        held.length = 0;
      }
      const w = await compare(h, `${mode} step ${step} (roll ${roll.toFixed(3)})`);
      worked = {
        inFlight: Math.max(worked.inFlight, w.inFlight),
        backlog: Math.max(worked.backlog, w.backlog),
        pending: Math.max(worked.pending, w.pending),
        deadLettered: Math.max(worked.deadLettered, w.deadLettered),
        oldest: Math.max(worked.oldest, w.oldestMessageAgeSeconds),
      };
    }
    // The sequence went through the states it is meant to compare.
    expect(worked.inFlight).toBeGreaterThan(0);
    expect(worked.backlog).toBeGreaterThan(0);
    expect(worked.oldest).toBeGreaterThan(0);
    if (mode === 'protected') expect(worked.pending).toBeGreaterThan(0);
  }, 120_000);
});
