import { describe, expect, it } from 'vitest';
import { segmentWantsWake } from '../../lib/domain/wake-flag.js';

describe('segmentWantsWake', () => {
  const now = 1_000_000;

  it('is false for a topic nobody waits on', () => {
    expect(segmentWantsWake({}, now)).toBe(false);
    expect(segmentWantsWake({ pushSubscriptions: 0 }, now)).toBe(false);
  });

  it('is true while a push group is subscribed', () => {
    expect(segmentWantsWake({ pushSubscriptions: 1 }, now)).toBe(true);
    expect(segmentWantsWake({ pushSubscriptions: 3, parkedUntil: now - 1 }, now)).toBe(true);
  });

  it('is true only while a parked consumer is still parked (wu > now)', () => {
    expect(segmentWantsWake({ parkedUntil: now + 1 }, now)).toBe(true);
    expect(segmentWantsWake({ parkedUntil: now }, now)).toBe(false);
    expect(segmentWantsWake({ parkedUntil: now - 1 }, now)).toBe(false);
  });
});
