/** Deterministic `Random`s for tests. */
import { cryptoRandom, type Random } from '../../lib/ports/random.js';

/** Random choices walk through [0, 1) in 64 steps (sends spread over the partitions in turn). */
export function cyclingRandom(): Random {
  let n = 0;
  return { ...cryptoRandom, fraction: () => ((n++ % 64) + 0.5) / 64 };
}

/** A small deterministic generator (mulberry32) of fractions in [0, 1), so a failing sequence can be replayed. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
