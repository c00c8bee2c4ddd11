/**
 * Where a group's missing cursor starts (docs/design.md, Raising partitions: a topic created
 * again with more streams). Subscriptions, raises and redrives create the cursors they need, so a
 * cursor is missing only on a stream a re-created topic gained (its groups stayed subscribed
 * through the delete) or after a creation interrupted half-way. Every path that creates a missing
 * cursor (receive, seek, redrive) asks here, so none of them starts one at the head and skips what
 * was sent before it:
 * - a notice stream (FIFO): its first retained notice — every notice in it followed the
 *   subscription (a dead generation's announce only messages the claims pass over);
 * - a partition of a re-created standard topic: its `gs` entry, the new generation's first
 *   sequence number there;
 * - any other stream (a partition of a topic never re-created, a redrive stream): its head.
 * Never later than the head. Not for shard streams: a notice says where their cursors start.
 * Cost: one head Query (½ RRU), and one first-segment Query for a notice stream.
 */
import { generationStart, type Topic } from '../domain/model.js';
import { isNoticeStream, partitionOf } from '../domain/streams.js';
import { StreamLog } from '../adapters/dynamodb/stream-log.js';

export async function missingCursorStart(log: Pick<StreamLog, 'head' | 'first'>, stream: string, topics: Iterable<Topic>): Promise<number> {
  if (isNoticeStream(stream)) {
    const [head, first] = await Promise.all([log.head(stream), log.first(stream)]);
    const next = StreamLog.nextAfter(head);
    return first ? Math.min(first.seq, next) : next;
  }
  const next = StreamLog.nextAfter(await log.head(stream));
  for (const topic of topics) {
    if (topic.type !== 'standard' || !topic.generationStarts) continue;
    const p = partitionOf(stream, topic.name);
    if (p !== undefined) return Math.min(generationStart(topic, p), next);
  }
  return next;
}
