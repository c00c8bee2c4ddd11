/** Deterministic `Random`s for tests. */
import { cryptoRandom, type Random } from '../../lib/ports/random.js';

/** Random choices walk through [0, 1) in 64 steps (sends spread over the partitions in turn). */
export function cyclingRandom(): Random {
  let n = 0;
  return { ...cryptoRandom, fraction: () => ((n++ % 64) + 0.5) / 64 };
}
