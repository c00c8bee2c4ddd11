/**
 * The local runtime's doorbells: no SQS there, so a ring wakes the long polls
 * of the group waiting in this process (design "Waking SDK consumers": what
 * differs locally). Same port as the SQS doorbells, rung by the same route.
 */
import type { Doorbell, DoorbellWaiter } from '../../ports/doorbell.js';

export class InProcessDoorbell implements Doorbell, DoorbellWaiter {
  private readonly waiters = new Map<string, Set<() => void>>();
  /** Per group, the ring count when it was last rung (bounded by the number of groups). */
  private readonly rungAt = new Map<string, number>();
  private count = 0;
  /** Rings so far, per group (the e2e test and the bench read them). */
  readonly rings = new Map<string, number>();

  async ring(groups: readonly string[]): Promise<readonly string[]> {
    for (const group of groups) {
      this.rungAt.set(group, ++this.count);
      this.rings.set(group, (this.rings.get(group) ?? 0) + 1);
      const set = this.waiters.get(group);
      this.waiters.delete(group);
      for (const wake of set ?? []) wake();
    }
    return [];
  }

  mark(): number {
    return this.count;
  }

  wait(group: string, ms: number, since?: number): Promise<boolean> {
    if (since !== undefined && (this.rungAt.get(group) ?? 0) > since) return Promise.resolve(true);
    return new Promise((resolve) => {
      let set = this.waiters.get(group);
      if (!set) this.waiters.set(group, (set = new Set()));
      const finish = (rang: boolean) => {
        clearTimeout(timer);
        this.waiters.get(group)?.delete(wake);
        resolve(rang);
      };
      const wake = () => finish(true);
      const timer = setTimeout(() => finish(false), ms);
      set.add(wake);
    });
  }
}
