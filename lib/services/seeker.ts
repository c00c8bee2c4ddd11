/**
 * Seek: moves a consumer group's position on its topics to the first retained
 * message, past the last one, or to the first message deliverable at or after
 * a time (docs/design.md, Seek). Each stream's cursor moves by one
 * conditional write that also ends its leases. On FIFO topics the namespace's
 * notice cursors move first (they count the seek and say where shard cursors
 * created later start), then every shard cursor the group has there.
 */
import { ConflictError, GroupNotFoundError, InvalidArgumentError, TopicNotFoundError } from '../domain/errors.js';
import { countedFrom, iso, type Topic } from '../domain/model.js';
import { noticeStream, noticeStreamCount, redriveStream, streamId, streamNamespace } from '../domain/streams.js';
import { StreamLog } from '../adapters/dynamodb/stream-log.js';
import type { SeekRead } from '../adapters/dynamodb/cursors.js';
import type { Clock } from '../ports/clock.js';
import type { Stores } from './stores.js';
import { firstAtOrAfter, type StreamPosition } from './stream-search.js';
import { missingCursorStart } from './missing-cursor-start.js';
import { PARTITION_CALLS_IN_FLIGHT, mapBounded } from './bounded-parallel.js';

/** Where to move: `earliest`, `latest`, or a time (ms). */
export type SeekTarget = 'earliest' | 'latest' | number;

export interface SeekPosition {
  topic: string;
  partition: number;
  /** The sequence number the group receives next on that partition. */
  next: number;
}

/** What a seek did on one FIFO namespace: its topics (several for a time-order group) and the shard cursors it moved. */
export interface SeekShards {
  topics: string[];
  moved: number;
}

/** Shard cursors moved at once (each: a head Query, a first-segment Query, one conditional write). */
const SHARD_MOVES_PARALLEL = 8;

export class Seeker {
  constructor(
    private readonly stores: Stores,
    private readonly clock: Clock,
  ) {}

  /**
   * Moves `group` on `topics` (default: every topic it subscribes) to `to`.
   * Everything is checked before the first cursor moves: a group that does
   * not exist (404), a topic it does not subscribe (400), a named topic
   * deleted (404), one topic of a time-order group without the group's other
   * subscribed topics of that order group (400: they share their shards), a
   * time in the future (400).
   */
  async seek(groupName: string, to: SeekTarget, topics: string[] | undefined) {
    const now = this.clock.now();
    const group = await this.stores.catalog.getGroup(groupName);
    if (!group) throw new GroupNotFoundError(groupName);
    if (typeof to === 'number' && to > now) {
      throw new InvalidArgumentError(`to is ${iso(to)}, in the future; seek moves to a time up to now (${iso(now)}).`, {
        issues: [{ path: 'to', message: 'in the future' }],
      });
    }
    const subscribed = group.subscriptions.map((s) => s.topic);
    const chosen = topics ?? subscribed;
    chosen.forEach((name, i) => {
      if (!subscribed.includes(name)) {
        throw new InvalidArgumentError(`Group '${groupName}' does not subscribe to topic '${name}'.`, {
          issues: [{ path: `topics/${i}`, message: 'not subscribed by this group' }],
        });
      }
    });
    const live = await this.stores.catalog.getTopics(subscribed);
    if (topics) {
      const gone = topics.find((name) => !live.has(name));
      if (gone !== undefined) throw new TopicNotFoundError(gone);
    }
    // A time-order group's topics share their shard streams: they move together or not at all.
    chosen.forEach((name, i) => {
      const topic = live.get(name);
      if (topic?.type !== 'fifo' || topic.orderGroup === undefined) return;
      const left = subscribed.find((other) => !chosen.includes(other) && live.get(other) !== undefined && streamNamespace(live.get(other)!) === streamNamespace(topic));
      if (left !== undefined) {
        throw new InvalidArgumentError(
          `Topic '${name}' shares time-order group '${topic.orderGroup}' (one stream per shard) with topic '${left}', which group '${groupName}' also subscribes to; seek them together.`,
          { issues: [{ path: `topics/${i}`, message: `shares its shards with subscribed topic '${left}'` }] },
        );
      }
    });
    const positions: SeekPosition[] = [];
    const namespaces = new Map<string, { names: string[]; notices: number; sequenced: boolean }>();
    for (const name of chosen) {
      const topic = live.get(name);
      if (!topic) continue; // deleted meanwhile: nothing to move
      if (topic.type === 'fifo') {
        const names = namespaces.get(streamNamespace(topic))?.names ?? [];
        namespaces.set(streamNamespace(topic), { names: [...names, topic.name], notices: noticeStreamCount(topic), sequenced: topic.sequenced === true });
        continue;
      }
      // Up to partitionsMax partitions, each 2–4 calls: a bounded number in flight.
      positions.push(...(await mapBounded(Array.from({ length: topic.partitions }, (_, p) => p), PARTITION_CALLS_IN_FLIGHT, (p) => this.movePartition(group.name, topic, p, to))));
    }
    const shards: SeekShards[] = [];
    for (const [namespace, { names, notices, sequenced }] of namespaces) {
      shards.push({ topics: names, moved: await this.moveNamespace(group.name, namespace, notices, to, now, sequenced) });
    }
    // `latest` on every topic skips the group's whole backlog (SPEC: a purge for this group), so also
    // what a redrive brought back and it has not received yet. Earliest and a time leave it: the
    // topics' replay brings the originals again, and the redrive stream would repeat them.
    if (to === 'latest' && subscribed.every((name) => chosen.includes(name))) await this.moveRedrive(group.name);
    return { group: group.name, positions, shards };
  }

  private async movePartition(group: string, topic: Topic, partition: number, to: SeekTarget): Promise<SeekPosition> {
    const stream = streamId(topic, { kind: 'partition', partition });
    const { next, segmentStart } = await this.target(stream, countedFrom(topic, partition), to);
    let moved = await this.stores.cursors.moveTo(group, stream, next, segmentStart, this.clock.now());
    if (!moved && !(await this.stores.cursors.get(group, stream, this.clock.now()))) {
      // A partition the group has no cursor on (its topic re-created with more): created where a
      // receive would create it (missingCursorStart), then moved.
      await this.stores.cursors.createIfAbsent(group, stream, await missingCursorStart(this.stores.log, stream, [topic]), this.clock.now());
      moved = await this.stores.cursors.moveTo(group, stream, next, segmentStart, this.clock.now());
    }
    if (!moved) throw new ConflictError(`The position of group '${group}' on '${stream}' kept changing while seeking; retry.`);
    return { topic: topic.name, partition, next };
  }

  /** The group's redrive stream past its last message, when the group ever redrove (it has a cursor there). */
  private async moveRedrive(group: string): Promise<void> {
    const stream = redriveStream(group);
    if (!(await this.stores.cursors.get(group, stream, this.clock.now()))) return;
    const { next, segmentStart } = await this.target(stream, 0, 'latest');
    if (!(await this.stores.cursors.moveTo(group, stream, next, segmentStart, this.clock.now()))) {
      throw new ConflictError(`The position of group '${group}' on its redrive stream kept changing while seeking; retry.`);
    }
  }

  /**
   * A FIFO namespace: first its notice cursors (the seek is counted there, so that a shard
   * cursor a receive creates meanwhile either exists before the Query below or is refused and
   * created again under the new start), then every shard cursor of the group in the namespace,
   * page by page. Returns how many shard cursors moved. Up to 256 notice cursors (a FIFO topic's
   * partitions), each 3–5 calls: a bounded number in flight, like a standard topic's partitions.
   */
  private async moveNamespace(group: string, namespace: string, notices: number, to: SeekTarget, now: number, sequenced: boolean): Promise<number> {
    // Where shard cursors created from now on start: the first message deliverable at or after this.
    const floor = to === 'earliest' ? 0 : to === 'latest' ? now + 1 : to;
    await mapBounded(Array.from({ length: notices }, (_, b) => b), PARTITION_CALLS_IN_FLIGHT, (b) => this.moveNotices(group, noticeStream(namespace, b), to, floor, now));
    let moved = 0;
    // Expired shard cursors are absent and left alone: the shard's next notice creates its cursor
    // at this seek's position (docs/design.md, Seek: shards whose state expired).
    for await (const page of this.stores.cursors.shardCursorPages(group, namespace, this.clock.now(), sequenced)) {
      for (let i = 0; i < page.length; i += SHARD_MOVES_PARALLEL) {
        const done = await Promise.all(page.slice(i, i + SHARD_MOVES_PARALLEL).map(({ stream, read }) => this.moveShard(group, stream, read, to)));
        moved += done.filter(Boolean).length;
      }
    }
    return moved;
  }

  /**
   * One notice cursor: `earliest` moves it back to the first stored notice (the group hears again
   * of every shard with retained messages, also those it never knew), `latest` past the last one;
   * a time moves it back like `earliest` only when it is older than the cursor (notices of shards
   * the group has no cursor for yet are otherwise all still ahead of it).
   */
  private async moveNotices(group: string, stream: string, to: SeekTarget, floor: number, now: number): Promise<void> {
    let cursor = await this.stores.cursors.get(group, stream, now);
    if (!cursor) {
      // A notice stream the group has no cursor on (its topic re-created with more): created where a
      // receive would create it (missingCursorStart: its first retained notice), so a seek that stops
      // before its own write below (a crash, a throttled call) skips no notice.
      await this.stores.cursors.createIfAbsent(group, stream, await missingCursorStart(this.stores.log, stream, []), now);
      cursor = await this.stores.cursors.get(group, stream, now);
    }
    const end = StreamLog.nextAfter(await this.stores.log.head(stream));
    let position: StreamPosition | undefined;
    if (to === 'latest') position = { next: end, segmentStart: end };
    else if (to === 'earliest' || to <= (cursor?.createdAt ?? 0)) {
      const [first] = await this.stores.log.readNotices(stream, 0, 1);
      position = first ? { next: first.seq, segmentStart: first.seq } : { next: end, segmentStart: end };
    }
    if (!(await this.stores.cursors.seekNotice(group, stream, position, floor))) {
      throw new ConflictError(`The notice cursor '${stream}' of group '${group}' disappeared while seeking (the group was deleted?); retry.`);
    }
  }

  /** One shard cursor, from what the page read; false when it is gone (its group deleted meanwhile, or it expired). */
  private async moveShard(group: string, stream: string, read: SeekRead, to: SeekTarget): Promise<boolean> {
    const { next, segmentStart } = await this.target(stream, 0, to);
    if (await this.stores.cursors.moveTo(group, stream, next, segmentStart, this.clock.now(), read)) return true;
    if (!(await this.stores.cursors.get(group, stream, this.clock.now()))) return false;
    throw new ConflictError(`The position of group '${group}' on '${stream}' kept changing while seeking; retry.`);
  }

  /** The first sequence number to deliver from, and the first seq of the segment holding it. */
  private async target(stream: string, floor: number, to: SeekTarget): Promise<StreamPosition> {
    const end = StreamLog.nextAfter(await this.stores.log.head(stream));
    if (to === 'latest') return { next: end, segmentStart: end };
    const first = await this.stores.log.first(stream);
    if (!first) {
      // Nothing stored (TTL deleted it all): on a sequenced shard a grant below the counter's `nx`
      // may still be on its way; start under it, as `first()` does under a stored item.
      const bottom = (await this.stores.log.liveGapBelow(stream, end)) ?? end;
      return { next: bottom, segmentStart: bottom };
    }
    const start = Math.min(Math.max(first.seq, floor), end);
    if (to === 'earliest') return { next: start, segmentStart: start };
    return firstAtOrAfter(this.stores.log, stream, start, end, to);
  }
}
