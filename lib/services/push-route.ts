/**
 * The dispatcher's `wake` route for push groups (docs/design.md, "Push
 * groups"): for every flagged segment, one push job `{group, stream}` per
 * push group subscribed to one of its topics and per stream — once per
 * invocation, however many segments came — onto the push queue.
 *
 * Which push groups subscribe to a topic is read from the group collection
 * (one Query of `GROUP`), kept per container for `cacheMs`; a topic whose
 * segment carries `w` but that no cached push group subscribes to reads it
 * again (a push group created moments ago), at most once a second.
 */
import type { Group } from '../domain/model.js';
import type { SegmentChange } from '../adapters/dynamodb/segment-changes.js';
import type { Catalog } from '../adapters/dynamodb/catalog.js';
import type { PushJob, PushQueue } from '../ports/push-queue.js';
import type { DispatchLog, DispatchRoute } from './dispatcher.js';

/** An unknown topic reads the groups again only if the cached read is older than this (ms). */
const REREAD_AFTER_MS = 1000;

export class PushRoute implements DispatchRoute {
  readonly name = 'push-jobs';
  private cached: { groups: Group[]; readAt: number } | undefined;

  constructor(
    private readonly catalog: Pick<Catalog, 'allGroups'>,
    private readonly queue: PushQueue,
    private readonly cacheMs = 5000,
    private readonly log?: DispatchLog,
  ) {}

  async handle(segments: readonly SegmentChange[], now: number): Promise<readonly string[]> {
    let groups = await this.pushGroups(now, false);
    const topics = new Set(segments.flatMap((s) => s.topics));
    const known = (t: string) => groups.some((g) => g.subscriptions.some((s) => s.topic === t));
    if ([...topics].some((t) => !known(t))) groups = await this.pushGroups(now, true);
    const jobs = new Map<string, { job: PushJob; segments: string[] }>();
    for (const segment of segments) {
      for (const group of groups) {
        if (!group.subscriptions.some((s) => segment.topics.includes(s.topic))) continue;
        const key = `${group.name}\u0000${segment.stream}`;
        const entry = jobs.get(key) ?? { job: { group: group.name, stream: segment.stream }, segments: [] };
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

  private async pushGroups(now: number, fresh: boolean): Promise<Group[]> {
    const age = this.cached ? now - this.cached.readAt : Infinity;
    // A read again for an unknown topic at most once a second: segments flagged for parked pull
    // consumers (not push groups) must not cost a read of the groups each.
    if (this.cached && (fresh ? age < REREAD_AFTER_MS : age < this.cacheMs)) return this.cached.groups;
    const groups = (await this.catalog.allGroups()).filter((g) => g.push !== undefined);
    this.cached = { groups, readAt: now };
    return groups;
  }
}
