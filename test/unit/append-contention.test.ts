/**
 * Lost append races (lib/adapters/dynamodb/append-contention.ts): full-jitter waits sized by the
 * losing attempt's own time, a level remembered per key, and a time budget instead of a try count.
 */
import { describe, expect, it } from 'vitest';
import {
  APPEND_BUDGET_MS,
  APPEND_MIN_TRIES,
  BACKOFF_CAP_MS,
  Contention,
  KEYS_REMEMBERED,
  LEVEL_FADE_MS,
  SLOT_MAX_MS,
  SLOT_MIN_MS,
  fullJitterMs,
} from '../../lib/adapters/dynamodb/append-contention.js';
import { FakeStopwatch } from '../helpers/fake-stopwatch.js';

/** Loses `n` races on `keys`, each attempt taking `attemptMs`; returns the append. */
const loseRaces = async (contention: Contention, watch: FakeStopwatch, keys: string[], n: number, attemptMs: number) => {
  const run = contention.begin(keys);
  for (let i = 0; i < n; i++) {
    await run.turn();
    watch.advance(attemptMs);
    expect(run.lostRace()).toBe(true);
  }
  return run;
};

/** A contention memory whose waits take the top of their range, and an append on `keys` that lost `n` races of `attemptMs` each. */
const afterLosses = async (keys: string[], n: number, attemptMs: number) => {
  const watch = new FakeStopwatch();
  const contention = new Contention(watch, () => 0.999);
  const run = await loseRaces(contention, watch, keys, n, attemptMs);
  return { watch, contention, run };
};

describe('fullJitterMs', () => {
  it('is 0 at level 0, then uniform in [0, slot × 2^(level − 1)], capped', () => {
    expect(fullJitterMs(0, 15, 0.99)).toBe(0);
    expect(fullJitterMs(1, 15, 0.5)).toBe(7.5);
    expect(fullJitterMs(3, 15, 0.999)).toBeCloseTo(59.94);
    expect(fullJitterMs(3, 15, 0)).toBe(0);
    expect(fullJitterMs(12, 15, 0.999)).toBeCloseTo(BACKOFF_CAP_MS * 0.999);
  });

  it('takes the slot within [SLOT_MIN_MS, SLOT_MAX_MS]', () => {
    expect(fullJitterMs(1, 0, 0.5)).toBe(SLOT_MIN_MS / 2);
    expect(fullJitterMs(1, 5_000, 0.5)).toBe(SLOT_MAX_MS / 2);
  });
});

describe('Contention', () => {
  it('tries at once on a key nobody lost on, waits after a lost race by the losing attempt’s own time', async () => {
    const watch = new FakeStopwatch();
    const contention = new Contention(watch, () => 0.999);
    const run = contention.begin(['s']);
    await run.turn();
    expect(watch.waits).toEqual([]);
    watch.advance(15); // the attempt: a head read and a put
    expect(run.lostRace()).toBe(true);
    await run.turn();
    watch.advance(15);
    expect(run.lostRace()).toBe(true);
    await run.turn();
    expect(watch.waits.map((w) => Math.round(w))).toEqual([15, 30]);
  });

  it('answers false only once the budget is spent, and never waits past it', async () => {
    const watch = new FakeStopwatch();
    // Waits at a fifth of their range: APPEND_MIN_TRIES tries of 15 ms fit in the budget, so the budget is what ends it.
    const contention = new Contention(watch, () => 0.2);
    const run = contention.begin(['s']);
    let tries = 0;
    for (;;) {
      await run.turn();
      expect(watch.now()).toBeLessThanOrEqual(APPEND_BUDGET_MS);
      tries++;
      watch.advance(15);
      if (!run.lostRace()) break;
    }
    expect(watch.now()).toBeGreaterThanOrEqual(APPEND_BUDGET_MS);
    expect(watch.now()).toBeLessThanOrEqual(APPEND_BUDGET_MS + 15);
    expect(run.lost).toBe(tries);
    // The last try started within one try of the budget's end, never after it (a wait past it is cut to it).
    expect(watch.now() - 15).toBeGreaterThanOrEqual(APPEND_BUDGET_MS - 15);
    expect(watch.now() - 15).toBeLessThanOrEqual(APPEND_BUDGET_MS);
    expect(tries).toBeGreaterThanOrEqual(APPEND_MIN_TRIES);
  });

  it('on a store so slow that one try spends the budget, still makes APPEND_MIN_TRIES tries, with full waits between', async () => {
    const watch = new FakeStopwatch();
    const run = new Contention(watch, () => 0.5).begin(['s']);
    for (let i = 1; i < APPEND_MIN_TRIES; i++) {
      await run.turn();
      watch.advance(APPEND_BUDGET_MS + 1);
      expect(run.lostRace()).toBe(true);
    }
    await run.turn();
    watch.advance(APPEND_BUDGET_MS + 1);
    expect(run.lostRace()).toBe(false);
    expect(run.lost).toBe(APPEND_MIN_TRIES);
    // No spin: every wait after a loss is a full-jitter one (the slot at its largest).
    expect(watch.waits.map((w) => Math.round(w))).toEqual(Array.from({ length: APPEND_MIN_TRIES - 1 }, (_, i) => Math.min(500, 50 * 2 ** i)));
  });

  it('remembers the level per key: the next append waits its turn before its first try, one level lower after a win', async () => {
    const { watch, contention, run: first } = await afterLosses(['s'], 3, 20);
    await first.turn();
    first.won(); // won at level 3: the next starts at 2
    watch.waits.length = 0;
    const second = contention.begin(['s']);
    await second.turn();
    expect(watch.waits.map((w) => Math.round(w))).toEqual([40]); // 20 ms slot × 2^(2 − 1)
    second.won(); // at level 2: the next starts at 1
    watch.waits.length = 0;
    const third = contention.begin(['s', 'other']);
    await third.turn();
    expect(watch.waits.map((w) => Math.round(w))).toEqual([20]);
    third.won();
    watch.waits.length = 0;
    await contention.begin(['s']).turn();
    expect(watch.waits).toEqual([]);
    // Another key was never contended.
    await contention.begin(['t']).turn();
    expect(watch.waits).toEqual([]);
  });

  it('forgets contention that ended: one level per LEVEL_FADE_MS', async () => {
    const { watch, contention, run } = await afterLosses(['s'], 4, 10);
    await run.turn();
    run.won(); // level 3 remembered
    watch.advance(2 * LEVEL_FADE_MS);
    watch.waits.length = 0;
    await contention.begin(['s']).turn();
    expect(watch.waits.map((w) => Math.round(w))).toEqual([10]); // level 1
    watch.advance(10 * LEVEL_FADE_MS);
    watch.waits.length = 0;
    await contention.begin(['s']).turn();
    expect(watch.waits).toEqual([]);
  });

  it('does not wait when told the caller has somewhere else to go', async () => {
    const { watch, run } = await afterLosses(['T#topic'], 2, 10);
    watch.waits.length = 0;
    await run.turn(false);
    expect(watch.waits).toEqual([]);
    await run.turn(true);
    expect(watch.waits.length).toBe(1);
  });

  it('remembers the level an append gave up at', async () => {
    const watch = new FakeStopwatch();
    const contention = new Contention(watch, () => 0.999, 100);
    const run = contention.begin(['s']); // gives up after APPEND_MIN_TRIES tries
    for (;;) {
      await run.turn();
      watch.advance(10);
      if (!run.lostRace()) break;
    }
    watch.waits.length = 0;
    await contention.begin(['s']).turn();
    expect(watch.waits.length).toBe(1);
    expect(watch.waits[0]).toBeGreaterThan(0);
  });
});

describe('Contention memory', () => {
  it('stays within KEYS_REMEMBERED when appends of several streams each add several keys', async () => {
    const watch = new FakeStopwatch();
    const contention = new Contention(watch, () => 0);
    for (let i = 0; i < KEYS_REMEMBERED; i++) {
      const run = await loseRaces(contention, watch, [`a${i}`, `b${i}`, `c${i}`], 2, 10);
      await run.turn();
      run.won(); // won after two losses: its keys are remembered one level down
      expect(run.lost).toBe(2);
      expect(contention.remembered).toBeLessThanOrEqual(KEYS_REMEMBERED);
    }
    expect(contention.remembered).toBe(KEYS_REMEMBERED);
  });
});

describe('Contention for callers that stop early (a receive’s claims on a shard cursor)', () => {
  it('settle() hands on the level of a caller that lost races, and leaves the memory alone when it lost none', async () => {
    const { watch, contention, run } = await afterLosses(['s'], 2, 10);
    run.settle();
    const next = contention.begin(['s']);
    expect(next.contended).toBe(true);
    await next.turn();
    // Level 2, slot 10 ms: up to 20 ms.
    expect(watch.waits.at(-1)).toBeCloseTo(20 * 0.999);
    next.settle();
    expect(contention.begin(['s']).contended).toBe(true);
    expect(contention.begin(['t']).contended).toBe(false);
  });

  it('settle() after won() changes nothing: the win already handed its level on', async () => {
    const { contention, run } = await afterLosses(['s'], 1, 10);
    run.won();
    run.settle();
    expect(contention.begin(['s']).contended).toBe(false);
  });

  it('turn() never waits longer than the caller allows (a receive’s deadline), nor at all past it', async () => {
    const { watch, run } = await afterLosses(['s'], 5, 20);
    const before = watch.waits.length;
    await run.turn(true, 3);
    await run.turn(true, -50);
    expect(watch.waits.slice(before)).toEqual([3]);
  });
});
