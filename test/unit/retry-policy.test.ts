/** The retry policy's delay (SPEC §1) and the checks of a merged policy (SPEC §3.1 ranges). */
import { describe, expect, it } from 'vitest';
import { DEFAULT_RETRY_POLICY, resolveRetryPolicy, retryDelayMs } from '../../lib/domain/retry-policy.js';
import { InvalidArgumentError } from '../../lib/domain/errors.js';

describe('retryDelayMs', () => {
  it('grows from initialSeconds by multiplier per failed delivery, capped at maxSeconds', () => {
    const policy = { initialSeconds: 2, multiplier: 3, maxSeconds: 100 };
    expect([1, 2, 3, 4, 5, 6].map((d) => retryDelayMs(policy, d, 16))).toEqual([2_000, 6_000, 18_000, 54_000, 100_000, 100_000]);
  });

  it('defaults: 1 s, 2 s, 4 s … up to 600 s', () => {
    expect([1, 2, 3, 10, 11].map((d) => retryDelayMs(DEFAULT_RETRY_POLICY, d, 16))).toEqual([1_000, 2_000, 4_000, 512_000, 600_000]);
  });

  it('initialSeconds 0 means at once, whatever the multiplier', () => {
    expect(retryDelayMs({ initialSeconds: 0, multiplier: 10, maxSeconds: 0 }, 5, 16)).toBe(0);
  });

  it('the last delivery a group allows waits for nothing (it is dead-lettered, not retried)', () => {
    expect(retryDelayMs(DEFAULT_RETRY_POLICY, 3, 3)).toBe(0);
    expect(retryDelayMs(DEFAULT_RETRY_POLICY, 2, 3)).toBe(2_000);
  });

  it('a huge delivery count stays at the cap (no overflow to Infinity or NaN)', () => {
    expect(retryDelayMs({ initialSeconds: 3600, multiplier: 10, maxSeconds: 43_200 }, 999, 1000)).toBe(43_200_000);
  });

  it('fractional multipliers round to whole milliseconds', () => {
    expect(retryDelayMs({ initialSeconds: 1, multiplier: 1.5, maxSeconds: 60 }, 3, 16)).toBe(2_250);
  });
});

describe('resolveRetryPolicy', () => {
  it('fills what is not given from the base', () => {
    expect(resolveRetryPolicy({ multiplier: 1 })).toEqual({ initialSeconds: 1, multiplier: 1, maxSeconds: 600 });
    expect(resolveRetryPolicy({ maxSeconds: 30 }, { initialSeconds: 10, multiplier: 4, maxSeconds: 900 })).toEqual({
      initialSeconds: 10,
      multiplier: 4,
      maxSeconds: 30,
    });
  });

  it.each([
    [{ initialSeconds: -1 }, 'retryPolicy/initialSeconds'],
    [{ initialSeconds: 3601, maxSeconds: 43_200 }, 'retryPolicy/initialSeconds'],
    [{ multiplier: 0.99 }, 'retryPolicy/multiplier'],
    [{ multiplier: Number.NaN }, 'retryPolicy/multiplier'],
    [{ maxSeconds: 43_201 }, 'retryPolicy/maxSeconds'],
    [{ initialSeconds: 700 }, 'retryPolicy/maxSeconds'],
  ])('refuses %j naming %s', (given, path) => {
    let caught: unknown;
    try {
      resolveRetryPolicy(given);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(InvalidArgumentError);
    expect((caught as InvalidArgumentError).issues?.map((i) => i.path)).toEqual([path]);
  });
});
