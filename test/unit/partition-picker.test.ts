/** PartitionPicker: sticky, avoids partitions lost on within 10 s and ones with an append in flight; says when all were lost on. */
import { describe, expect, it } from 'vitest';
import { LOST_RACE_AVOID_MS, PartitionPicker } from '../../lib/services/partition-picker.js';
import { cryptoRandom } from '../../lib/ports/random.js';

function setup(partitions = 4) {
  let now = 1_000_000;
  const clock = { now: () => now };
  const picker = new PartitionPicker(clock, cryptoRandom);
  return { picker, topic: { name: 't', partitions }, advance: (ms: number) => (now += ms) };
}

describe('PartitionPicker', () => {
  it('says every partition is contended only once it lost on each within 10 s', () => {
    const { picker, topic, advance } = setup(3);
    expect(picker.allContended(topic)).toBe(false);
    for (const p of [0, 1]) {
      picker.pick(topic);
      picker.done(topic, p, 'lost');
    }
    expect(picker.allContended(topic)).toBe(false);
    advance(LOST_RACE_AVOID_MS / 2);
    picker.pick(topic);
    picker.done(topic, 2, 'lost');
    expect(picker.allContended(topic)).toBe(true);
    // Partitions 0 and 1 calm down first.
    advance(LOST_RACE_AVOID_MS / 2);
    expect(picker.allContended(topic)).toBe(false);
    expect(picker.allContended({ name: 'other', partitions: 3 })).toBe(false);
  });

  it('sticks to the partition it last won on', () => {
    const { picker, topic } = setup(16);
    const first = picker.pick(topic);
    picker.done(topic, first, 'won');
    for (let i = 0; i < 20; i++) {
      const p = picker.pick(topic);
      expect(p).toBe(first);
      picker.done(topic, p, 'won');
    }
  });

  it('moves away from a partition it lost on, and avoids it for 10 s', () => {
    const { picker, topic, advance } = setup(2);
    const lost = picker.pick(topic);
    picker.done(topic, lost, 'lost');
    for (let i = 0; i < 20; i++) {
      const p = picker.pick(topic);
      expect(p).toBe(1 - lost);
      picker.done(topic, p, 'won');
    }
    // 5 s later the other partition is lost on too: nothing calm is left, any will do.
    advance(LOST_RACE_AVOID_MS / 2);
    const other = picker.pick(topic);
    expect(other).toBe(1 - lost);
    picker.done(topic, other, 'lost');
    const seen = new Set<number>();
    for (let i = 0; i < 40; i++) {
      const p = picker.pick(topic);
      seen.add(p);
      picker.done(topic, p, 'failed');
    }
    expect(seen).toEqual(new Set([0, 1]));
    // 10 s after the first loss that partition is calm again; the other (lost 5 s later) is not.
    advance(LOST_RACE_AVOID_MS / 2);
    for (let i = 0; i < 20; i++) {
      const p = picker.pick(topic);
      expect(p).toBe(lost);
      picker.done(topic, p, 'failed');
    }
  });

  it('spreads concurrent appends over partitions without one in flight', () => {
    const { picker, topic } = setup(8);
    const picks = Array.from({ length: 8 }, () => picker.pick(topic));
    expect(new Set(picks).size).toBe(8);
    // All busy: a ninth still gets a partition.
    const ninth = picker.pick(topic);
    expect(ninth).toBeGreaterThanOrEqual(0);
    expect(ninth).toBeLessThan(8);
  });

  it('never picks a partition the topic does not have (sticky one above the count)', () => {
    const { picker } = setup();
    picker.done({ name: 't' }, 30, 'won');
    for (let i = 0; i < 20; i++) {
      const p = picker.pick({ name: 't', partitions: 4 });
      expect(p).toBeLessThan(4);
      picker.done({ name: 't' }, p, 'failed');
    }
  });
});
