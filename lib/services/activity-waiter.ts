/**
 * How a long poll waits on AWS without re-reading every partition's cursor
 * (design §7.4, docs/design.md "Waking pull consumers"): between two real
 * receives it parks on its topics (`wu` on the topic items, so appends carry
 * the `w` flag and the dispatcher moves `A#<topic>.at`) and reads only the
 * topics' activity items — one eventually consistent GetItem each, ½ read
 * unit — backing off while nothing happens (250 ms, doubling, to 2 s). It
 * ends the wait as soon as an activity item moved past the start of the last
 * look. Besides that, a wait ends — so that the receive loop looks for real —
 * only when something may have become claimable without a flagged append:
 *  - at once when it starts a park (no park of this container in force): what
 *    was appended between the last look and the park carries no `w`;
 *  - when the senders' catalog caches that predate a park have all expired
 *    (park + `senderCacheMs` + 1 s): until then they append without `w`;
 *  - at a lease expiry this container handed out ({@link wakeAt});
 *  - otherwise not before the caller's deadline ({@link FULL_RECEIVE_EVERY_MS},
 *    the receive loop's poll interval in this mode, is the longest wait): the
 *    wait then answers `false` and the call ends without a look; the caller's
 *    next call looks at once, which bounds how late a lease that expired or a
 *    back-off that ended elsewhere is seen.
 */
import type { Clock } from '../ports/clock.js';
import type { Notifier } from '../ports/notifier.js';

/**
 * A real receive happens at least this often while a long poll waits (ms):
 * the longest receive wait, so a waiting call looks for real when it starts,
 * plus what {@link ActivityWaiter} wakes it for (a wait that runs out at the
 * call's deadline ends the call without a last look: the next call's first
 * look is the one after it). The bound
 * on how late a lease expiry or a back-off end (they append nothing) is seen
 * by a waiting receive that was not woken for it.
 */
export const FULL_RECEIVE_EVERY_MS = 20_000;
/** After the senders' catalog caches expired, a look this much later (ms): a write they began before is done. */
const STALE_SENDER_SLACK_MS = 1000;
/** A parked topic item says `wu` = park time + this (ms). */
export const PARK_FOR_MS = 60_000;
/** A topic item is parked again only when its `wu` ends sooner than this from now (ms): one write per 30 s at most. */
export const PARK_REFRESH_BEFORE_MS = 30_000;

export interface ActivityWaiterOptions {
  /** First pause between two reads of the activity items (ms). @default 250 */
  firstLookMs?: number;
  /** Longest pause, reached by doubling (ms). @default 2000 */
  maxLookMs?: number;
  /** Waits `ms` (tests may shorten time). */
  sleep?: (ms: number) => Promise<void>;
  /** How long a sender's catalog cache may hold a topic item (ms): its appends carry `w` only that long after a park. @default 5000 */
  senderCacheMs?: number;
}

/** What the waiter needs of the table: the topics' activity and their park marks. */
export interface WaiterStores {
  /** `at`, and per standard partition when a flagged segment last landed there (`p<n>`). */
  activity: { activity(topic: string): Promise<{ at: number; partitions: ReadonlyMap<number, number> }> };
  catalog: { parkTopic(name: string, until: number, keepIfAtLeast: number): Promise<number | undefined> };
}

/** A wait this close to its end (ms) does not read again. */
const END_SLACK_MS = 20;

const realSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * A {@link Notifier} for Lambda containers: nothing in-process to hear, so it
 * waits on the table's activity items. `mark()` is the clock, so `wait`'s
 * `since` is when the last look began.
 */
export class ActivityWaiter implements Notifier {
  /** Per topic: until when this container knows the topic item is parked (no write needed before). */
  private readonly parked = new Map<string, number>();
  /** Per topic: when a real look is due because senders that cached the topic before its park may append without `w`. */
  private readonly staleSendersUntil = new Map<string, number>();
  /** Per topic: lease expiries this container handed out (the last {@link FULL_RECEIVE_EVERY_MS}, at most 16). */
  private readonly wakes = new Map<string, number[]>();
  /** Per topic: the partitions' stamps as the last read of its activity item found them. */
  private readonly moved = new Map<string, ReadonlyMap<number, number>>();
  private readonly senderCacheMs: number;
  private readonly firstLookMs: number;
  private readonly maxLookMs: number;
  private readonly sleep: (ms: number) => Promise<void>;

  constructor(
    private readonly stores: WaiterStores,
    private readonly clock: Clock,
    options: ActivityWaiterOptions = {},
  ) {
    this.firstLookMs = options.firstLookMs ?? 250;
    this.maxLookMs = options.maxLookMs ?? 2000;
    this.sleep = options.sleep ?? realSleep;
    this.senderCacheMs = options.senderCacheMs ?? 5000;
  }

  /**
   * A message of `topics` becomes claimable again at `at` without an append
   * (a lease this container handed out expires): a wait on one of them ends
   * then, so the receive looks for real. Per container; a lease handed out
   * elsewhere is seen by {@link FULL_RECEIVE_EVERY_MS}.
   */
  wakeAt(topics: readonly string[], at: number): void {
    // Expiries older than a full-receive interval were looked past by any wait since (or never will be).
    const covered = this.clock.now() - FULL_RECEIVE_EVERY_MS;
    for (const topic of topics) {
      const due = [...(this.wakes.get(topic) ?? []).filter((t) => t > covered), at].sort((a, b) => a - b);
      this.wakes.set(topic, due.slice(0, 16));
    }
    if (this.wakes.size > 1000) for (const [topic, due] of this.wakes) if (due.every((t) => t <= covered)) this.wakes.delete(topic);
  }

  /** Sends in other containers cannot be heard here; they reach waiters through the activity items. */
  notify(): void {}

  mark(): number {
    return this.clock.now();
  }

  /** The partition stamps of `topic`'s activity item as last read here (the receive looks there first). */
  movedPartitions(topic: string): ReadonlyMap<number, number> | undefined {
    return this.moved.get(topic);
  }

  /**
   * Parks on `topics`, then reads their activity items with back-off until
   * one moved past `since` (a flagged append after the last look began) or
   * `ms` passed.
   */
  async wait(topics: readonly string[], ms: number, since = this.clock.now(), sampled: ReadonlySet<string> = new Set()): Promise<boolean> {
    let end = this.clock.now() + ms;
    // Just parked (this container knew of no park in force): what was appended between the last
    // look and the park carries no `w`, so look for real once more at once.
    if (await this.park(topics)) return true;
    // A look is due at any of these the last look did not already cover (it began before them).
    // A wait that ends for one never ends before it (below), so the look it ends for covers it.
    let endsForDue = false;
    for (const topic of topics) {
      for (const due of [this.staleSendersUntil.get(topic), ...(this.wakes.get(topic) ?? [])]) {
        if (due !== undefined && due > since && due <= end) {
          end = due;
          endsForDue = true;
        }
      }
    }
    let pause = this.firstLookMs;
    // Ran out: `false` unless the end was a due (a look is due then).
    for (;;) {
      const remaining = end - this.clock.now();
      if (remaining <= 0) return endsForDue;
      await this.sleep(Math.min(pause, remaining));
      const left = end - this.clock.now();
      if (left <= 0) return endsForDue;
      // A read this close to the end would only delay the real look: the caller's deadline ends the
      // wait now; a due is slept out, since a look that began before it would not cover it and the
      // next wait would end at once for a second look.
      if (left <= END_SLACK_MS) {
        if (!endsForDue) return false;
        continue;
      }
      const seen = await Promise.all(topics.map((topic) => this.stores.activity.activity(topic)));
      // A stamp the last look did not know (written before the look began, read only now): on a topic
      // whose partitions or notice streams a look samples (`sampled`: more than 8), that look may not
      // have read its stream, and `at` moved past nothing since, so look again, led by it.
      let unknownToLastLook = false;
      topics.forEach((topic, i) => {
        const partitions = seen[i]?.partitions;
        if (partitions && partitions.size > 0) {
          const before = this.moved.get(topic);
          for (const [p, at] of sampled.has(topic) ? partitions : []) {
            if (at <= since && at > (before ? (before.get(p) ?? -Infinity) : since - FULL_RECEIVE_EVERY_MS)) unknownToLastLook = true;
          }
          this.moved.set(topic, partitions);
        }
      });
      if (this.moved.size > 1000) this.moved.clear();
      if (unknownToLastLook || seen.some(({ at }) => at > since)) return true;
      pause = Math.min(pause * 2, this.maxLookMs);
    }
  }

  /**
   * Sets `wu` on the topics this container does not know to be parked for
   * longer than {@link PARK_REFRESH_BEFORE_MS}: the write's condition is the
   * same test, and a failed one answers the `wu` another waiter set.
   * True when a topic was not known to be parked before (its park starts now).
   */
  private async park(topics: readonly string[]): Promise<boolean> {
    const now = this.clock.now();
    const keep = now + PARK_REFRESH_BEFORE_MS;
    const fresh = topics.some((topic) => (this.parked.get(topic) ?? 0) <= now);
    await Promise.all(
      topics
        .filter((topic) => (this.parked.get(topic) ?? 0) < keep)
        .map(async (topic) => {
          const known = this.parked.get(topic) ?? 0;
          const until = (await this.stores.catalog.parkTopic(topic, now + PARK_FOR_MS, keep)) ?? now + PARK_FOR_MS;
          // A topic that is gone: try again after a refresh interval, not on every look.
          this.parked.set(topic, until);
          // A park this container did not know in force, or one it knew that ends before senders can have
          // read its refresh: senders may hold the topic item from before (written at `until - PARK_FOR_MS`
          // at the latest; a refresh of it only makes this look early), and append without the flag from
          // the old `wu` on until their cache expires.
          const refreshedAt = until - PARK_FOR_MS;
          if (known <= now || known < refreshedAt + this.senderCacheMs) this.staleSendersUntil.set(topic, refreshedAt + this.senderCacheMs + STALE_SENDER_SLACK_MS);
        }),
    );
    if (this.parked.size > 1000) {
      for (const [topic, until] of this.parked) if (until < now) this.parked.delete(topic);
      for (const [topic, until] of this.staleSendersUntil) if (until < now) this.staleSendersUntil.delete(topic);
    }
    return fresh;
  }
}
