/**
 * The dispatcher's `wake` route that records topic activity: for every topic
 * with a flagged segment in the invocation, one conditional write moving
 * `A#<topic>.at` forward to the invocation's time, stamping the standard
 * partitions those segments landed in (`p<n>`), and a FIFO topic's notice
 * streams (`p<b>` for `t:<topic>/n:<b>`: a FIFO topic's partitions are its
 * notice streams, which a receive samples like partitions). A FIFO topic's
 * stamps are insisted on (written again after a lost race) when the topic has
 * more notice streams than the default 4, every stamp alike: one past the 4th
 * says so at once; stamps of streams 0–3 only ask the catalog (cached) after a
 * lost race. A topic with the default 4 is never sampled, its stamps are never
 * read, and its one write stays one write. HTTP long polls read that
 * one small item per look instead of every partition's cursor (design §7.4),
 * and look at the stamped partitions first.
 */
import type { Topic } from '../domain/model.js';
import { NOTICE_BUCKETS, noticeIndexOf, noticeStreamCount, partitionOf } from '../domain/streams.js';
import type { SegmentChange } from '../adapters/dynamodb/segment-changes.js';
import type { TopicActivity } from '../adapters/dynamodb/topic-activity.js';
import type { DispatchLog, DispatchRoute } from './dispatcher.js';

export class ActivityRoute implements DispatchRoute {
  readonly name = 'topic-activity';

  /**
   * `topics`: the (cached) catalog, asked after a lost race whether a FIFO topic stamped only on
   * streams 0–3 has more than 4; without it (or when it fails) such stamps are insisted on too.
   */
  constructor(
    private readonly activity: Pick<TopicActivity, 'touch'>,
    private readonly log?: DispatchLog,
    private readonly topics?: { topic(name: string): Promise<Topic | undefined> },
  ) {}

  /** Whether a FIFO topic's stamps are read (it has more notice streams than the default 4). */
  private async sampled(topic: string): Promise<boolean> {
    if (!this.topics) return true;
    try {
      const found = await this.topics.topic(topic);
      return found?.type === 'fifo' && noticeStreamCount(found) > NOTICE_BUCKETS;
    } catch (error) {
      this.log?.warn('topic activity: catalog read failed, stamps insisted on', { topic, error });
      return true;
    }
  }

  async handle(segments: readonly SegmentChange[], now: number): Promise<readonly string[]> {
    const byTopic = new Map<string, string[]>();
    const moved = new Map<string, Set<number>>();
    const insist = new Set<string>();
    /** FIFO topics stamped only on notice streams 0–3: insisted on when the topic has more (asked after a lost race). */
    const perhaps = new Set<string>();
    for (const segment of segments) {
      for (const topic of segment.topics) {
        byTopic.set(topic, [...(byTopic.get(topic) ?? []), segment.id]);
        const partition = partitionOf(segment.stream, topic);
        const notices = noticeIndexOf(segment.stream, topic);
        const stamp = partition ?? notices;
        if (stamp !== undefined) moved.set(topic, (moved.get(topic) ?? new Set<number>()).add(stamp));
        if (partition !== undefined || (notices !== undefined && notices >= NOTICE_BUCKETS)) insist.add(topic);
        else if (notices !== undefined) perhaps.add(topic);
      }
    }
    const failed: string[] = [];
    await Promise.all(
      [...byTopic].map(async ([topic, ids]) => {
        try {
          // false: another invocation already moved it to `now` or later — nothing to do.
          const rule = insist.has(topic) ? true : perhaps.has(topic) ? () => this.sampled(topic) : false;
          await this.activity.touch(topic, now, [...(moved.get(topic) ?? [])], rule);
        } catch (error) {
          this.log?.error('topic activity write failed', { topic, error });
          failed.push(...ids);
        }
      }),
    );
    return failed;
  }
}
