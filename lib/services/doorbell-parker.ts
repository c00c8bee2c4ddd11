/**
 * Parks a pull group on its topics' doorbells (docs/design.md, "Waking SDK
 * consumers"): `wb.<group>` (and `wu`) on each topic item for
 * {@link DOORBELL_PARK_FOR_MS}, written again only when less than
 * {@link DOORBELL_REFRESH_BEFORE_MS} is left — at most one write per topic and
 * group per 5 minutes, however many consumers park. The container remembers
 * what it wrote or was answered, so it does not even try before then.
 */
import type { Catalog } from '../adapters/dynamodb/catalog.js';
import type { Clock } from '../ports/clock.js';

/** A parked group's `wb` entry says park time + this (ms). */
export const DOORBELL_PARK_FOR_MS = 10 * 60_000;
/** An entry is written again only when it ends sooner than this from now (ms). */
export const DOORBELL_REFRESH_BEFORE_MS = 5 * 60_000;

export class DoorbellParker {
  /** `<topic>\n<group>` → until when this container knows the park is in force. */
  private readonly parked = new Map<string, number>();

  constructor(
    private readonly catalog: Pick<Catalog, 'parkGroup'>,
    private readonly clock: Clock,
  ) {}

  /**
   * Parks `group` on `topics`; true when a park was not known to be in force
   * (it starts now). Throws when a topic's park failed (the others are kept).
   */
  async park(group: string, topics: readonly string[]): Promise<boolean> {
    const now = this.clock.now();
    const keep = now + DOORBELL_REFRESH_BEFORE_MS;
    const key = (topic: string) => `${topic}\n${group}`;
    const fresh = topics.some((topic) => (this.parked.get(key(topic)) ?? 0) <= now);
    const results = await Promise.allSettled(
      topics
        .filter((topic) => (this.parked.get(key(topic)) ?? 0) < keep)
        .map(async (topic) => {
          const until = await this.catalog.parkGroup(topic, group, now + DOORBELL_PARK_FOR_MS, keep);
          this.parked.set(key(topic), until ?? now);
        }),
    );
    if (this.parked.size > 10_000) {
      for (const [k, until] of this.parked) if (until < now) this.parked.delete(k);
    }
    // A topic whose park failed (e.g. DoorbellParkRefusedError) will not ring: the receive must not wait on the doorbell.
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
    return fresh;
  }
}
