/** mapBounded: results in the items' order, never more than `width` calls in flight. */
import { describe, expect, it } from 'vitest';
import { mapBounded } from '../../lib/services/bounded-parallel.js';

describe('mapBounded', () => {
  it('keeps the order and at most `width` calls in flight', async () => {
    let inFlight = 0;
    let most = 0;
    const out = await mapBounded(Array.from({ length: 50 }, (_, i) => i), 16, async (n, i) => {
      inFlight++;
      most = Math.max(most, inFlight);
      await new Promise((resolve) => setTimeout(resolve, (n * 7) % 5));
      inFlight--;
      return n * 10 + (i === n ? 0 : 1);
    });
    expect(out).toEqual(Array.from({ length: 50 }, (_, i) => i * 10));
    expect(most).toBe(16);
  });

  it('answers nothing for nothing, and refuses a width below 1', async () => {
    expect(await mapBounded([], 4, async () => 1)).toEqual([]);
    await expect(mapBounded([1], 0, async () => 1)).rejects.toThrow(/width/);
  });

  it('fails with the first failure', async () => {
    await expect(mapBounded([1, 2, 3], 2, async (n) => (n === 2 ? Promise.reject(new Error('two')) : n))).rejects.toThrow('two');
  });
});
