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
});
