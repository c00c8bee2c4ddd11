/**
 * Wakes long-polling receivers when a topic gets a message. On AWS every
 * Lambda container is on its own, so the notifier is a no-op and receivers
 * poll; the local runtime has one process, so it wakes them at once.
 */
export interface Notifier {
  notify(topic: string): void;
  /** Resolves after `ms` or as soon as one of `topics` is notified. */
  wait(topics: readonly string[], ms: number): Promise<void>;
}

export const pollingNotifier: Notifier = {
  notify: () => undefined,
  wait: (_topics, ms) => new Promise((resolve) => setTimeout(resolve, ms)),
};

/** In-process notifier for the local runtime and tests. */
export class InProcessNotifier implements Notifier {
  private readonly waiters = new Map<string, Set<() => void>>();

  notify(topic: string): void {
    const set = this.waiters.get(topic);
    if (!set) return;
    this.waiters.delete(topic);
    for (const wake of set) wake();
  }

  wait(topics: readonly string[], ms: number): Promise<void> {
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
