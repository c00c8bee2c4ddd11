/** A {@link Stopwatch} whose time moves only when told: `wait` advances it at once. */
import type { Stopwatch } from '../../lib/ports/stopwatch.js';

export class FakeStopwatch implements Stopwatch {
  /** Every wait asked for, in ms. */
  readonly waits: number[] = [];

  constructor(public t = 0) {}

  now(): number {
    return this.t;
  }

  async wait(ms: number): Promise<void> {
    this.waits.push(ms);
    this.t += Math.max(0, ms);
  }

  advance(ms: number): void {
    this.t += ms;
  }
}
