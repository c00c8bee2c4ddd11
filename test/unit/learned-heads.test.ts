/**
 * Learned heads (lib/adapters/dynamodb/stream-log.ts): a lost segment put returns the winner's
 * segment, which is the next try's head — when it holds messages, and when the wait before that
 * try was at most one slot (append-contention.ts: `turn()` says so).
 */
import { describe, expect, it } from 'vitest';
import { marshall } from '@aws-sdk/util-dynamodb';
import { Contention } from '../../lib/adapters/dynamodb/append-contention.js';
import { SENTINEL_SK, segmentSk } from '../../lib/adapters/dynamodb/keys.js';
import { learnedHead } from '../../lib/adapters/dynamodb/stream-log.js';
import { FakeStopwatch } from '../helpers/fake-stopwatch.js';

describe('learnedHead', () => {
  it('is the collided segment, with its ttl', () => {
    expect(learnedHead(marshall({ pk: 'S#s', sk: segmentSk(41), n: 3, m: [], ttl: 1_900_000_000 }))).toEqual({
      kind: 'segment',
      seq: 41,
      count: 3,
      ttl: 1_900_000_000,
    });
    expect(learnedHead(marshall({ pk: 'S#s', sk: segmentSk(7), n: 1, m: [] }))).toEqual({ kind: 'segment', seq: 7, count: 1 });
  });

  it('is nothing (read the head) for a closing marker, a sentinel or no image', () => {
    expect(learnedHead(marshall({ pk: 'S#s', sk: segmentSk(9), n: 0, m: [], ttl: 1 }))).toBeUndefined();
    expect(learnedHead(marshall({ pk: 'S#s', sk: SENTINEL_SK, eb: 5 }))).toBeUndefined();
    expect(learnedHead(undefined)).toBeUndefined();
  });
});

describe('ContendedAppend.turn: whether what the last try learned is still fresh', () => {
  it('is fresh after a wait of at most the losing try’s own time, stale after a longer one', async () => {
    const watch = new FakeStopwatch();
    const contention = new Contention(watch, () => 0.999);
    const run = contention.begin(['s']);
    expect(await run.turn()).toBe(true); // no wait before the first try
    watch.advance(15);
    run.lostRace(); // level 1: waits ≤ 15 ms, one slot
    expect(await run.turn()).toBe(true);
    watch.advance(15);
    run.lostRace(); // level 2: waits 0.999 × 30 ms, longer than the slot
    expect(await run.turn()).toBe(false);
  });

  it('is fresh after a short draw at a high level', async () => {
    const watch = new FakeStopwatch();
    const contention = new Contention(watch, () => 0.1);
    const run = contention.begin(['s']);
    for (let i = 0; i < 3; i++) {
      await run.turn();
      watch.advance(15);
      run.lostRace();
    }
    expect(await run.turn()).toBe(true); // 0.1 × 60 ms = 6 ms ≤ 15 ms
  });
});
