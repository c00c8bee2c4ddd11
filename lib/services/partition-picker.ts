/**
 * Which partition of a standard topic a send appends to (docs/design.md,
 * Sticky, least-contended appends). Per container:
 *
 *  - a send sticks to the partition this container last appended to on the
 *    topic, where the stream log still holds a head hint (one request);
 *  - a lost race moves the send to another partition, avoiding those this
 *    container lost a race on within the last 10 s, instead of retrying the
 *    stream where another writer is active;
 *  - once it lost on every partition within those 10 s, the send waits its turn
 *    (full jitter: adapters/dynamodb/append-contention.ts) before the next try;
 *  - partitions with an append of this container in flight are avoided too
 *    (on Lambda a container serves one request at a time; the local runtime
 *    and tests serve many, and would otherwise all stick to one partition).
 *
 * So producers spread over the partitions and stop meeting once there are at
 * least as many partitions as concurrent producers.
 */
import type { Topic } from '../domain/model.js';
import type { Clock } from '../ports/clock.js';
import type { Random } from '../ports/random.js';

/** How long a partition where this container lost an append race is avoided. */
export const LOST_RACE_AVOID_MS = 10_000;

const key = (topic: Pick<Topic, 'name'>, partition: number) => `${topic.name}\u0000${partition}`;

export class PartitionPicker {
  private readonly last = new Map<string, number>();
  private readonly lostAt = new Map<string, number>();
  private readonly inFlight = new Map<string, number>();

  constructor(
    private readonly clock: Clock,
    private readonly random: Random,
  ) {}

  /**
   * A partition for the next append to `topic`, counted as in flight until
   * {@link done}: the sticky one if it is free and not recently lost on,
   * else a random one among the free ones not recently lost on, else among
   * those not recently lost on, else any.
   */
  pick(topic: Pick<Topic, 'name' | 'partitions'>): number {
    const now = this.clock.now();
    const calm = (p: number) => now - (this.lostAt.get(key(topic, p)) ?? -Infinity) >= LOST_RACE_AVOID_MS;
    const free = (p: number) => (this.inFlight.get(key(topic, p)) ?? 0) === 0;
    const sticky = this.last.get(topic.name);
    let partition: number;
    if (sticky !== undefined && sticky < topic.partitions && calm(sticky) && free(sticky)) partition = sticky;
    else {
      const all = Array.from({ length: topic.partitions }, (_, p) => p);
      const calmOnes = all.filter(calm);
      const best = calmOnes.filter(free);
      const from = best.length > 0 ? best : calmOnes.length > 0 ? calmOnes : all;
      partition = from[Math.floor(this.random.fraction() * from.length)] ?? 0;
    }
    this.inFlight.set(key(topic, partition), (this.inFlight.get(key(topic, partition)) ?? 0) + 1);
    return partition;
  }

  /**
   * Whether this container lost a race on every partition of `topic` within the last 10 s: moving
   * to another partition would only meet another writer, so a send waits its turn instead.
   */
  allContended(topic: Pick<Topic, 'name' | 'partitions'>): boolean {
    const now = this.clock.now();
    for (let p = 0; p < topic.partitions; p++) {
      if (now - (this.lostAt.get(key(topic, p)) ?? -Infinity) >= LOST_RACE_AVOID_MS) return false;
    }
    return true;
  }

  /**
   * Ends an append picked by {@link pick}: `won` makes the partition this
   * container's sticky one for the topic; a lost race marks it to be avoided.
   */
  done(topic: Pick<Topic, 'name'>, partition: number, outcome: 'won' | 'lost' | 'failed'): void {
    const k = key(topic, partition);
    const n = (this.inFlight.get(k) ?? 1) - 1;
    if (n > 0) this.inFlight.set(k, n);
    else this.inFlight.delete(k);
    if (outcome === 'won') this.last.set(topic.name, partition);
    if (outcome === 'lost') {
      this.lostAt.set(k, this.clock.now());
      if (this.last.get(topic.name) === partition) this.last.delete(topic.name);
    }
  }
}
