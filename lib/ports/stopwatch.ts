/**
 * Elapsed time and waiting, for budgets measured in real time (an append's time budget:
 * adapters/dynamodb/append-contention.ts). Monotonic, unlike the wall clock of ports/clock.ts, and
 * injected so that tests can run a budget out without waiting for it.
 */
export interface Stopwatch {
  /** Milliseconds from an arbitrary origin; never goes back. */
  now(): number;
  /** Resolves after `ms` milliseconds. */
  wait(ms: number): Promise<void>;
}

export const realStopwatch: Stopwatch = {
  now: () => performance.now(),
  wait: (ms) => new Promise<void>((resolve) => setTimeout(resolve, Math.max(0, ms))),
};
