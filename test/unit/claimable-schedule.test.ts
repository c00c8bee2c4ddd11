/** ClaimableSchedule: when a parked Consumer receives for real for messages no doorbell rings for. */
import { describe, expect, it } from 'vitest';
import { CLAIMABLE_MARGIN_MS, ClaimableSchedule, retryBackoffMs } from '../../lib/client/claimable-schedule.js';

const policy = { initialSeconds: 1, multiplier: 2, maxSeconds: 600 };

describe('retryBackoffMs', () => {
  it('follows min(maxSeconds, initial × multiplier^(deliveries − 1)), none for the last delivery', () => {
    expect(retryBackoffMs(policy, 1, 16)).toBe(1_000);
    expect(retryBackoffMs(policy, 4, 16)).toBe(8_000);
    expect(retryBackoffMs(policy, 15, 16)).toBe(600_000);
    expect(retryBackoffMs({ ...policy, initialSeconds: 0 }, 3, 16)).toBe(0);
    expect(retryBackoffMs(policy, 16, 16)).toBeUndefined();
  });
});

describe('ClaimableSchedule', () => {
  it('answers the earliest time not yet seen to by a receive', () => {
    const schedule = new ClaimableSchedule();
    expect(schedule.next()).toBeUndefined();
    schedule.add(5_000);
    schedule.lease('a', 3_000);
    expect(schedule.next()).toBe(3_000 + CLAIMABLE_MARGIN_MS);
    schedule.received(4_000);
    expect(schedule.next()).toBe(5_000 + CLAIMABLE_MARGIN_MS);
    schedule.received(6_000);
    expect(schedule.next()).toBeUndefined();
  });

  it('drops a committed lease, keeps the end of one whose commit failed', () => {
    const schedule = new ClaimableSchedule();
    schedule.lease('a', 1_000);
    schedule.lease('b', 2_000);
    schedule.drop('a');
    expect(schedule.next()).toBe(2_000 + CLAIMABLE_MARGIN_MS);
    schedule.expire('b');
    expect(schedule.next()).toBe(2_000 + CLAIMABLE_MARGIN_MS);
    schedule.received(3_000);
    expect(schedule.next()).toBeUndefined();
  });

  it('tells when a time earlier than the current one is added', () => {
    let told = 0;
    const schedule = new ClaimableSchedule(() => told++);
    schedule.add(10_000);
    schedule.lease('a', 20_000);
    schedule.add(5_000);
    expect(told).toBe(2);
  });
});
