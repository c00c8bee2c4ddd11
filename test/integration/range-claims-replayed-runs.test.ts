/**
 * After a seek, a replay commits part of a range an earlier epoch committed whole (its run, one entry
 * of `dn`); a spill whose cut ends inside that run must not remove the replay's own completions and
 * leave the run, which then read as theirs again (a review's probe, 2026-12-05; docs/design.md,
 * Range claims, "One completion a range"). On DynamoDB Local.
 */
/**
 * Audit probe: a spill whose cut ends at a replay's own completion inside the numbers of an
 * earlier epoch's run leaves that run in `dn` (not all its members were removed); the spilled
 * numbers then read from `dn` as the earlier epoch's run members again.
 */
import { describe, expect, it } from 'vitest';
import { bodies, cursorItem, hotShard, range, statuses } from '../helpers/hot-shard.js';
import { Seeker } from '../../lib/services/seeker.js';

describe('range claims: a spill cut inside an earlier epoch\'s run', () => {
  it('a repeated commit of a replay part-commit answers committed after a spill', async () => {
    const { plain, c } = await hotShard();
    // Epoch 0: four whole ranges committed (40 completions, four runs).
    for (let i = 0; i < 4; i++) {
      const got = await c.queue.receive('g', { maxMessages: 10, waitSeconds: 0 });
      expect(bodies(got)).toEqual(range(1 + 10 * i, 10));
      expect(statuses(await c.queue.commit('g', got.map((m) => m.receiptHandle)))).toEqual(Array(10).fill('committed'));
    }
    await new Seeker(plain.stores, plain.clock).seek('g', 'earliest', undefined);
    // Epoch 1: replay m1–m20 as whole ranges, m21–m30 committed in part (m21–m25).
    const r1 = await c.queue.receive('g', { maxMessages: 10, waitSeconds: 0 });
    const r2 = await c.queue.receive('g', { maxMessages: 10, waitSeconds: 0 });
    const r3 = await c.queue.receive('g', { maxMessages: 10, waitSeconds: 0 });
    expect([bodies(r1), bodies(r2), bodies(r3)]).toEqual([range(1, 10), range(11, 10), range(21, 10)]);
    expect(statuses(await c.queue.commit('g', r1.map((m) => m.receiptHandle)))).toEqual(Array(10).fill('committed'));
    expect(statuses(await c.queue.commit('g', r2.map((m) => m.receiptHandle)))).toEqual(Array(10).fill('committed'));
    const part = r3.slice(0, 5).map((m) => m.receiptHandle);
    expect(statuses(await c.queue.commit('g', part))).toEqual(Array(5).fill('committed'));
    // Before any spill the repeat answers committed.
    expect(statuses(await plain.queue.commit('g', part))).toEqual(Array(5).fill('committed'));
    // m31–m40 (replay) and m41–m50 (new); committing m41–m50 whole takes dn from 40 to 50: it spills.
    const r4 = await c.queue.receive('g', { maxMessages: 10, waitSeconds: 0 });
    const r5 = await c.queue.receive('g', { maxMessages: 10, waitSeconds: 0 });
    expect([bodies(r4), bodies(r5)]).toEqual([range(31, 10), range(41, 10)]);
    expect(statuses(await c.queue.commit('g', r5.map((m) => m.receiptHandle)))).toEqual(Array(10).fill('committed'));
    const item = await cursorItem(plain);
    // The spill moved the mark past m21–m25 (hw set), their replay's completions spilled.
    expect(item.hw).toBeDefined();
    // Repeats of the epoch-1 part commit: they took effect, so they answer committed.
    expect(statuses(await plain.queue.commit('g', part))).toEqual(Array(5).fill('committed'));
  });
});
