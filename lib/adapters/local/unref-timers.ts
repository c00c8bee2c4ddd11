/**
 * In-process timers of the local stand-ins (timer bus, SQS-like queues): unref'd, so they never keep
 * the process alive; waits past setTimeout's ~24.8 days hop; `clear()` cancels them all (runtime stop).
 */
export class UnrefTimers {
  private readonly timers = new Set<NodeJS.Timeout>();

  /** Runs `run` after `ms` (negative: at once, on the next turn). */
  after(ms: number, run: () => void): void {
    const wait = Math.min(Math.max(0, ms), 2 ** 31 - 1);
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      if (wait < ms) return this.after(ms - wait, run);
      run();
    }, wait);
    timer.unref();
    this.timers.add(timer);
  }

  clear(): void {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
  }
}
