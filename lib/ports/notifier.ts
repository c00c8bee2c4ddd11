/**
 * Wakes long-polling receivers when a topic gets a message. On AWS every
 * Lambda container is on its own, so the notifier is a no-op and receivers
 * poll; the local runtime has one process, so it wakes them at once.
 */
export interface Notifier {
  notify(topic: string): void;
  /** A point in the notification history, taken before a look for messages. */
  mark(): number;
  /**
   * Resolves after `ms` or as soon as one of `topics` is notified — at once
   * when one was notified after `since` (while the caller was looking), so a
   * message that lands during a receive's look is not left waiting a poll interval.
   * A notifier that watches for every way a message becomes claimable between
   * real looks (the activity waiter) answers `false` when the wait ran out with
   * nothing to look for: a wait that ends a long poll then needs no last look
   * (the caller's next call looks at once). Others answer nothing.
   */
  wait(topics: readonly string[], ms: number, since?: number, sampled?: ReadonlySet<string>): Promise<boolean | void>;
  /**
   * A message of `topics` becomes claimable again at `at` without a send (a
   * lease handed out here expires): a notifier that waits long between real
   * looks ends a wait then. Optional: the others look often enough.
   */
  wakeAt?(topics: readonly string[], at: number): void;
  /**
   * Per partition of a standard topic, when this notifier last heard that a message landed there
   * (ms), as far as it knows: a receive looks at partitions that moved since it last looked there
   * first (partition-sampler.ts). Optional: a hint, never needed for correctness.
   */
  movedPartitions?(topic: string): ReadonlyMap<number, number> | undefined;
}

export const pollingNotifier: Notifier = {
  notify: () => undefined,
  mark: () => 0,
  wait: (_topics, ms) => new Promise((resolve) => setTimeout(resolve, ms)),
};

/** In-process notifier for the local runtime and tests. */
export class InProcessNotifier implements Notifier {
  private readonly waiters = new Map<string, Set<() => void>>();
  /** Per topic, the notification count when it was last notified (bounded by the number of topics). */
  private readonly notifiedAt = new Map<string, number>();
  private count = 0;

  mark(): number {
    return this.count;
  }

  notify(topic: string): void {
    this.notifiedAt.set(topic, ++this.count);
    const set = this.waiters.get(topic);
    if (!set) return;
    this.waiters.delete(topic);
    for (const wake of set) wake();
  }

  wait(topics: readonly string[], ms: number, since?: number): Promise<void> {
    if (since !== undefined && topics.some((topic) => (this.notifiedAt.get(topic) ?? 0) > since)) return Promise.resolve();
    return new Promise((resolve) => {
      let done = false;
      const finish = () => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        for (const topic of topics) this.waiters.get(topic)?.delete(finish);
        resolve();
      };
      const timer = setTimeout(finish, ms);
      for (const topic of topics) {
        let set = this.waiters.get(topic);
        if (!set) this.waiters.set(topic, (set = new Set()));
        set.add(finish);
      }
    });
  }
}
