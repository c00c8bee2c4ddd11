/** Time and randomness are injected so leases and schedules test deterministically. */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

export interface Random {
  /** A short random token (lease tokens). */
  token(): string;
  /** A float in [0, 1) (partition choice, jitter). */
  fraction(): number;
  /** A new unique, time-ordered id (ULID). */
  id(): string;
}
