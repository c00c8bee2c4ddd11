/** Time is injected so leases and schedules test deterministically (randomness: ports/random.ts). */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };
