import type { FakeClock } from './stores.js';

/**
 * Runs `run` (a long poll that ends by the fake clock) while moving the clock
 * `stepMs` forward every 10 ms of real time, until it settles.
 */
export async function whileAdvancing<T>(clock: FakeClock, run: () => Promise<T>, stepMs = 250): Promise<T> {
  let done = false;
  const pending = run().finally(() => (done = true));
  while (!done) {
    await new Promise((resolve) => setTimeout(resolve, 10));
    if (!done) clock.advance(stepMs);
  }
  return pending;
}
