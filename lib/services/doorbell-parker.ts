/**
 * Parks a pull group on its topics' doorbells (docs/design.md, "Waking SDK
 * consumers"): `wb.<group>` (and `wu`) on each topic item for
 * {@link DOORBELL_PARK_FOR_MS}, written again only when less than
 * {@link DOORBELL_REFRESH_BEFORE_MS} is left — at most one write per topic and
 * group per 3 minutes, however many consumers park. The container remembers
 * what it wrote or was answered, so it does not even try before then.
 */
import type { Catalog } from '../adapters/dynamodb/catalog.js';
import type { Clock } from '../ports/clock.js';

/** A parked group's `wb` entry says park time + this (ms). */
export const DOORBELL_PARK_FOR_MS = 10 * 60_000;
/**
 * An entry is written again only when it ends sooner than this from now (ms).
 * A consumer's real receive comes at least every 5 minutes plus the 20 s SQS
 * poll under way (lib/client: DOORBELL_RECEIVE_EVERY_MS): refreshing once
 * less than 7 of the 10 minutes are left means an entry is at most 3 minutes
 * old when a receive passes it by, so the next receive (≤ 5 min 20 s later)
 * finds it in force with ≥ 1 min 40 s to spare and writes it again.
 */
export const DOORBELL_REFRESH_BEFORE_MS = 7 * 60_000;
/** Slack past the senders' catalog cache before every append is known to carry `w` (ms). */
export const STALE_SENDER_SLACK_MS = 1000;

/** What a park tells the receive. */
export interface Park {
  /** True when a park was not known to be in force here (it starts now). */
  fresh: boolean;
  /**
   * From when every append to the topics carries `w` and rings (ms): the
   * park's start + the senders' catalog cache + 1 s. Before then a sender in
   * another container may still hold a topic item read before the park.
   */
  ringsFrom: number;
}

export class DoorbellParker {
  /** `<topic>\n<group>\n<createdAt>` → until when this container knows the park is in force, and since when. */
  private readonly parked = new Map<string, { until: number; since: number }>();

  /** `senderCacheMs`: how long senders may use a cached topic item (SLUICE_CATALOG_CACHE_MS). */
  constructor(
    private readonly catalog: Pick<Catalog, 'parkGroup'>,
    private readonly clock: Clock,
    private readonly senderCacheMs = 5000,
  ) {}

  /**
   * Parks `group` (the one created at `createdAt`) on `topics`. Throws when a topic's park failed (the others
   * are kept): that topic will not ring.
   */
  async park(group: string, topics: readonly string[], createdAt: number): Promise<Park> {
    const now = this.clock.now();
    const keep = now + DOORBELL_REFRESH_BEFORE_MS;
    // A deleted and re-created group of the same name starts without entries (delete-group removed them).
    const key = (topic: string) => `${topic}\n${group}\n${createdAt}`;
    const inForce = (topic: string) => {
      const known = this.parked.get(key(topic));
      return known !== undefined && known.until > now ? known : undefined;
    };
    const fresh = topics.some((topic) => inForce(topic) === undefined);
    const results = await Promise.allSettled(
      topics
        .filter((topic) => (this.parked.get(key(topic))?.until ?? 0) < keep)
        .map(async (topic) => {
          const known = inForce(topic);
          const until = (await this.catalog.parkGroup(topic, group, now + DOORBELL_PARK_FOR_MS, keep)) ?? now;
          // A kept entry (another container's park) has been in force since it was written; a write of ours
          // extends what this container knew to be in force — unless that ends before senders can have read
          // the extension (they append without the flag from its end until their cache expires) — or starts now.
          const continued = known !== undefined && known.until >= now + this.senderCacheMs ? known.since : undefined;
          const since = continued ?? (until >= keep && until !== now + DOORBELL_PARK_FOR_MS ? until - DOORBELL_PARK_FOR_MS : now);
          this.parked.set(key(topic), { until, since });
        }),
    );
    if (this.parked.size > 10_000) {
      for (const [k, { until }] of this.parked) if (until < now) this.parked.delete(k);
    }
    // A topic whose park failed (e.g. DoorbellParkRefusedError) will not ring: the receive must not wait on the doorbell.
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
    const since = Math.max(...topics.map((topic) => this.parked.get(key(topic))?.since ?? now));
    return { fresh, ringsFrom: since + this.senderCacheMs + STALE_SENDER_SLACK_MS };
  }
}
