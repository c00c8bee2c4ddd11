/**
 * The dispatcher's `wake` route for push groups (docs/design.md, "Push
 * groups"): for every flagged segment, one push job `{group, stream}` per
 * push group subscribed to one of its topics and per stream — once per
 * invocation, however many segments came — onto the push queue.
 *
 * Which push groups subscribe to a topic is on the topic item (`pg`, written
 * with `pu` in the group-save and group-delete transactions): the catalog's
 * cached topic reads, not a read of every group. A flagged topic whose cached
 * item names no push group is read again (a push group created moments ago;
 * or the flag was for a parked pull consumer), at most once a second per
 * topic. Only a topic saved before `pg` existed, counting push groups it does
 * not name, makes the route read the groups (kept for `cacheMs`).
 */
import type { SegmentChange } from '../adapters/dynamodb/segment-changes.js';
import type { Catalog } from '../adapters/dynamodb/catalog.js';
import type { Topic } from '../domain/model.js';
import type { PushJob, PushQueue } from '../ports/push-queue.js';
import type { DispatchLog, DispatchRoute } from './dispatcher.js';

/** A topic whose cached item names no push group is read again only if its last read is older than this (ms). */
const REREAD_AFTER_MS = 1000;

export class PushRoute implements DispatchRoute {
  readonly name = 'push-jobs';
  private readonly freshReadAt = new Map<string, number>();
  private legacy: { byTopic: Map<string, string[]>; readAt: number } | undefined;

  constructor(
    private readonly catalog: Pick<Catalog, 'topics' | 'getTopics' | 'allGroups'>,
    private readonly queue: PushQueue,
    private readonly cacheMs = 5000,
    private readonly log?: DispatchLog,
  ) {}

  async handle(segments: readonly SegmentChange[], now: number): Promise<readonly string[]> {
    const pushGroups = await this.pushGroupsOf([...new Set(segments.flatMap((s) => s.topics))], now);
    const jobs = new Map<string, { job: PushJob; segments: string[] }>();
    for (const segment of segments) {
      const groups = new Set(segment.topics.flatMap((topic) => pushGroups.get(topic) ?? []));
      for (const group of groups) {
        const key = `${group}\u0000${segment.stream}`;
        const entry = jobs.get(key) ?? { job: { group, stream: segment.stream }, segments: [] };
        entry.segments.push(segment.id);
        jobs.set(key, entry);
      }
    }
    if (jobs.size === 0) return [];
    try {
      await this.queue.send([...jobs.values()].map((e) => e.job));
      return [];
    } catch (error) {
      this.log?.error('push jobs not sent', { jobs: jobs.size, error });
      return [...new Set([...jobs.values()].flatMap((e) => e.segments))];
    }
  }

  /** Push group names per topic, from the topic items (cached; re-read when they name none). */
  private async pushGroupsOf(names: readonly string[], now: number): Promise<Map<string, readonly string[]>> {
    const cached = await this.catalog.topics(names);
    const stale = names.filter((name) => {
      if ((cached.get(name)?.pushGroups?.length ?? 0) > 0) return false;
      if (now - (this.freshReadAt.get(name) ?? -Infinity) < REREAD_AFTER_MS) return false;
      this.freshReadAt.set(name, now);
      return true;
    });
    const topics = new Map(cached);
    if (stale.length > 0) for (const [name, topic] of await this.catalog.getTopics(stale)) topics.set(name, topic);
    const out = new Map<string, readonly string[]>();
    for (const [name, topic] of topics) out.set(name, this.isLegacy(topic) ? await this.legacyPushGroups(name, now) : (topic.pushGroups ?? []));
    return out;
  }

  /** A topic saved before `pg` existed: it counts push groups (`pu`) that it does not name. */
  private isLegacy(topic: Topic): boolean {
    return (topic.pushSubscriptions ?? 0) > (topic.pushGroups?.length ?? 0);
  }

  private async legacyPushGroups(topic: string, now: number): Promise<readonly string[]> {
    if (!this.legacy || now - this.legacy.readAt >= this.cacheMs) {
      const byTopic = new Map<string, string[]>();
      for (const group of await this.catalog.allGroups()) {
        if (!group.push) continue;
        for (const s of group.subscriptions) byTopic.set(s.topic, [...(byTopic.get(s.topic) ?? []), group.name]);
      }
      this.legacy = { byTopic, readAt: now };
    }
    return this.legacy.byTopic.get(topic) ?? [];
  }
}
