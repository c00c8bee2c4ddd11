/**
 * The dispatcher's `wake` route that records topic activity: for every topic
 * with a flagged segment in the invocation, one conditional write moving
 * `A#<topic>.at` forward to the invocation's time, stamping the standard
 * partitions those segments landed in (`p<n>`). HTTP long polls read that
 * one small item per look instead of every partition's cursor (design §7.4),
 * and look at the stamped partitions first.
 */
import { partitionOf } from '../domain/streams.js';
import type { SegmentChange } from '../adapters/dynamodb/segment-changes.js';
import type { TopicActivity } from '../adapters/dynamodb/topic-activity.js';
import type { DispatchLog, DispatchRoute } from './dispatcher.js';

export class ActivityRoute implements DispatchRoute {
  readonly name = 'topic-activity';

  constructor(
    private readonly activity: Pick<TopicActivity, 'touch'>,
    private readonly log?: DispatchLog,
  ) {}

  async handle(segments: readonly SegmentChange[], now: number): Promise<readonly string[]> {
    const byTopic = new Map<string, string[]>();
    const moved = new Map<string, Set<number>>();
    for (const segment of segments) {
      for (const topic of segment.topics) {
        byTopic.set(topic, [...(byTopic.get(topic) ?? []), segment.id]);
        const partition = partitionOf(segment.stream, topic);
        if (partition !== undefined) moved.set(topic, (moved.get(topic) ?? new Set<number>()).add(partition));
      }
    }
    const failed: string[] = [];
    await Promise.all(
      [...byTopic].map(async ([topic, ids]) => {
        try {
          // false: another invocation already moved it to `now` or later — nothing to do.
          await this.activity.touch(topic, now, [...(moved.get(topic) ?? [])]);
        } catch (error) {
          this.log?.error('topic activity write failed', { topic, error });
          failed.push(...ids);
        }
      }),
    );
    return failed;
  }
}
