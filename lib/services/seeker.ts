/**
 * Seek: moves a consumer group's position on its topics to the first retained
 * message, past the last one, or to the first message deliverable at or after
 * a time (docs/design.md, Seek). Each stream's cursor moves by one
 * conditional write that also ends its leases.
 */
import { ConflictError, GroupNotFoundError, InvalidArgumentError, TopicNotFoundError } from '../domain/errors.js';
import { countedFrom, iso, type Topic } from '../domain/model.js';
import { streamId } from '../domain/streams.js';
import { StreamLog } from '../adapters/dynamodb/stream-log.js';
import type { Clock } from '../ports/clock.js';
import type { Stores } from './stores.js';

/** Where to move: `earliest`, `latest`, or a time (ms). */
export type SeekTarget = 'earliest' | 'latest' | number;

export interface SeekPosition {
  topic: string;
  partition: number;
  /** The sequence number the group receives next on that partition. */
  next: number;
}

/** Segment reads of one binary search are bounded by the sequence range (≤ 53 halvings). */
const SEARCH_MAX_STEPS = 64;

export class Seeker {
  constructor(
    private readonly stores: Stores,
    private readonly clock: Clock,
  ) {}

  /**
   * Moves `group` on `topics` (default: every topic it subscribes) to `to`.
   * Everything is checked before the first cursor moves: a group that does
   * not exist (404), a topic it does not subscribe (400), a FIFO topic (400:
   * not supported yet), a time in the future (400).
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
    const live = await this.stores.catalog.getTopics(chosen);
    if (topics) {
      const gone = topics.find((name) => !live.has(name));
      if (gone !== undefined) throw new TopicNotFoundError(gone);
    }
    const fifo = chosen.findIndex((name) => live.get(name)?.type === 'fifo');
    if (fifo >= 0) {
      throw new InvalidArgumentError(`Topic '${chosen[fifo]}' is a FIFO topic; seek supports standard topics only (FIFO seek is not built yet).`, {
        issues: [{ path: topics ? `topics/${fifo}` : 'topics', message: 'FIFO topics cannot be sought yet' }],
      });
    }
    const positions: SeekPosition[] = [];
    for (const name of chosen) {
      const topic = live.get(name);
      if (!topic) continue; // deleted meanwhile: nothing to move
      for (let p = 0; p < topic.partitions; p++) positions.push(await this.movePartition(group.name, topic, p, to));
    }
    return { group: group.name, positions };
  }

  private async movePartition(group: string, topic: Topic, partition: number, to: SeekTarget): Promise<SeekPosition> {
    const stream = streamId(topic, { kind: 'partition', partition });
    const { next, segmentStart } = await this.target(stream, countedFrom(topic, partition), to);
    let moved = await this.stores.cursors.moveTo(group, stream, next, segmentStart);
    if (!moved && !(await this.stores.cursors.get(group, stream, this.clock.now()))) {
      // Subscriptions create their cursors; this repairs one interrupted half-way (as receive does).
      await this.stores.cursors.createIfAbsent(group, stream, next, this.clock.now());
      moved = await this.stores.cursors.moveTo(group, stream, next, segmentStart);
    }
    if (!moved) throw new ConflictError(`The position of group '${group}' on '${stream}' kept changing while seeking; retry.`);
    return { topic: topic.name, partition, next };
  }

  /** The first sequence number to deliver from, and the first seq of the segment holding it. */
  private async target(stream: string, floor: number, to: SeekTarget): Promise<{ next: number; segmentStart: number }> {
    const end = StreamLog.nextAfter(await this.stores.log.head(stream));
    if (to === 'latest') return { next: end, segmentStart: end };
    const first = await this.stores.log.first(stream);
    if (!first) return { next: end, segmentStart: end };
    const start = Math.min(Math.max(first.seq, floor), end);
    if (to === 'earliest') return { next: start, segmentStart: start };
    return this.firstAtOrAfter(stream, start, end, to);
  }

  /**
   * Binary search over [lo, hi) for the first message with `deliverableAt >=
   * at`, reading the segment holding the middle (one Query each, bounded):
   * `deliverableAt` grows with the sequence number in a stream (up to the
   * milliseconds by which concurrent senders' appends can cross). Everything
   * below `lo` is known to be earlier; `best` is the first later message
   * found so far (`hi` at first: the end of the stream).
   */
  private async firstAtOrAfter(stream: string, lo: number, hi: number, at: number): Promise<{ next: number; segmentStart: number }> {
    let best = { next: hi, segmentStart: hi };
    for (let step = 0; lo < hi && step < SEARCH_MAX_STEPS; step++) {
      const mid = lo + Math.floor((hi - lo) / 2);
      const segment = await this.stores.log.segmentContaining(stream, mid);
      if (!segment) {
        lo = mid + 1; // a gap (an emptied epoch): nothing there to deliver
        continue;
      }
      const index = segment.records.findIndex((r) => r.deliverableAt >= at);
      if (index < 0) {
        lo = segment.seq + segment.count;
        continue;
      }
      best = { next: Math.max(lo, segment.seq + index), segmentStart: segment.seq };
      // The segment's earlier records are all before `at`: when it reaches down to `lo`, this is the answer.
      if (segment.seq <= lo) return best;
      hi = segment.seq;
    }
    return best;
  }
}
