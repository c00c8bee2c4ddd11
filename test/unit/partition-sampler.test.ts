/** PartitionSampler: every partition up to 8; above, 8 a look, productive ones first, every partition visited. */
import { describe, expect, it } from 'vitest';
import { PartitionSampler, SAMPLE_SIZE } from '../../lib/services/partition-sampler.js';
import { cryptoRandom } from '../../lib/ports/random.js';

const topic = (partitions: number) => ({ name: 'orders', type: 'standard' as const, orderGroup: undefined, partitions });
const setup = () => {
  let now = 1_000_000;
  return { sampler: new PartitionSampler({ now: () => now }, cryptoRandom), advance: (ms: number) => (now += ms) };
};

describe('PartitionSampler', () => {
  it('up to 8 partitions: all of them, every look', () => {
    const { sampler } = setup();
    for (const n of [1, 4, 8]) expect(sampler.sample('g', topic(n))).toEqual(Array.from({ length: n }, (_, p) => `t:orders/p:${p}`));
  });

  it("a FIFO topic's notice streams: all up to 8 (a time-order group's 4), else 8 a look and 32 looks visit all 256", () => {
    const { sampler } = setup();
    const fifo = (partitions: number, orderGroup?: string) => ({ name: 'ledger', type: 'fifo' as const, orderGroup, partitions });
    expect(sampler.sample('g', fifo(4))).toEqual(['t:ledger/n:0', 't:ledger/n:1', 't:ledger/n:2', 't:ledger/n:3']);
    expect(sampler.sample('g', fifo(8))).toHaveLength(8);
    expect(sampler.sample('g', fifo(4, 'og'))).toEqual(['o:og/n:0', 'o:og/n:1', 'o:og/n:2', 'o:og/n:3']);
    const seen = new Set<string>();
    for (let look = 0; look < 256 / SAMPLE_SIZE; look++) {
      const sample = sampler.sample('g', fifo(256));
      expect(sample).toHaveLength(SAMPLE_SIZE);
      expect(sample.every((s) => /^t:ledger\/n:\d+$/.test(s))).toBe(true);
      sample.forEach((s) => seen.add(s));
    }
    expect(seen.size).toBe(256);
    // Notice streams with news lead the next sample.
    sampler.found('g', fifo(256), 't:ledger/n:77');
    expect(sampler.sample('g', fifo(256))[0]).toBe('t:ledger/n:77');
  });

  it('64 partitions: 8 distinct a look, and 8 looks visit all 64', () => {
    const { sampler } = setup();
    const seen = new Set<string>();
    for (let look = 0; look < 8; look++) {
      const sample = sampler.sample('g', topic(64));
      expect(sample).toHaveLength(SAMPLE_SIZE);
      expect(new Set(sample).size).toBe(SAMPLE_SIZE);
      sample.forEach((s) => seen.add(s));
    }
    expect(seen.size).toBe(64);
  });

  it('named streams first, then productive ones (at most half), and the rotation still reaches every partition', () => {
    const { sampler, advance } = setup();
    const t = topic(64);
    for (const p of [3, 9, 20, 33, 40, 50]) sampler.found('g', t, `t:orders/p:${p}`);
    const sample = sampler.sample('g', t, ['t:orders/p:61']);
    expect(sample[0]).toBe('t:orders/p:61');
    // The most recent productive ones (equal times: insertion order kept by the stable sort) fill up to half.
    expect(sample.slice(1, 4)).toEqual(['t:orders/p:3', 't:orders/p:9', 't:orders/p:20']);
    const seen = new Set<string>();
    for (let look = 0; look < 16; look++) sampler.sample('g', t).forEach((s) => seen.add(s));
    expect(seen.size).toBe(64);
    // Productive means within 5 s.
    advance(5_000);
    const later = sampler.sample('g', t);
    expect(later.filter((s) => ['t:orders/p:3', 't:orders/p:9', 't:orders/p:20', 't:orders/p:33'].includes(s)).length).toBeLessThanOrEqual(2);
  });

  it('groups rotate independently', () => {
    const { sampler } = setup();
    const a = new Set<string>();
    for (let look = 0; look < 8; look++) sampler.sample('a', topic(64)).forEach((s) => a.add(s));
    expect(a.size).toBe(64);
    expect(sampler.sample('b', topic(64))).toHaveLength(8);
  });

  it('partitions the notifier heard moved come first (most recent first, at most half), until a sample took them after the move', () => {
    let now = 1_000_000;
    let moved = new Map<number, number>([
      [200, now - 50],
      [17, now - 10],
      [99, now - 30],
      [5, now - 40],
      [250, now - 60],
    ]);
    const sampler = new PartitionSampler({ now: () => now }, cryptoRandom, { movedPartitions: (name) => (name === 'orders' ? moved : undefined) });
    const t = topic(256);
    const first = sampler.sample('g', t);
    expect(first).toHaveLength(SAMPLE_SIZE);
    expect(first.slice(0, 4)).toEqual(['t:orders/p:17', 't:orders/p:99', 't:orders/p:5', 't:orders/p:200']);
    // The next look: the four taken were visited after their move; p:250 is still due.
    now += 100;
    expect(sampler.sample('g', t)[0]).toBe('t:orders/p:250');
    // A new move of p:17 after the visit brings it back; another group has its own visits.
    now += 100;
    moved = new Map([[17, now - 1]]);
    expect(sampler.sample('g', t)[0]).toBe('t:orders/p:17');
    expect(sampler.sample('other', t)[0]).toBe('t:orders/p:17');
    now += 100;
    expect(sampler.sample('g', t)).not.toContain('t:orders/p:17');
  });

  it('256 partitions: 8 a look, every partition within 32 looks without hints', () => {
    const { sampler } = setup();
    const seen = new Set<string>();
    for (let look = 0; look < 32; look++) sampler.sample('g', topic(256)).forEach((s) => seen.add(s));
    expect(seen.size).toBe(256);
  });
});
