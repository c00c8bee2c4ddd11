/**
 * Raising the partition count of a standard topic (docs/design.md, Raising
 * partitions). Partitions carry a topic's write throughput; they are only
 * ever raised: messages retained in a partition stay there, so a lower count
 * would hide them.
 */
import { ConflictError, TopicNotFoundError } from '../domain/errors.js';
import { Limits, type Topic } from '../domain/model.js';
import { NOTICE_BUCKETS, streamId } from '../domain/streams.js';
import { StreamLog } from '../adapters/dynamodb/stream-log.js';
import type { Clock } from '../ports/clock.js';
import type { Stores } from './stores.js';

/** Reads and conditional writes of one raise before it gives up (409). */
const RAISE_ATTEMPTS = 4;
/** Cursor puts in flight at once while a raise creates the new partitions' cursors. */
const CURSOR_PUTS_IN_FLIGHT = 16;

/**
 * Refuses a partition count a topic can never take (409, nothing written):
 * lower than it has, or another one than a FIFO topic's fixed count.
 */
export function checkPartitionChange(topic: Pick<Topic, 'name' | 'type' | 'partitions'>, partitions: number | undefined): void {
  if (partitions === undefined || partitions === topic.partitions) return;
  if (topic.type === 'fifo') {
    throw new ConflictError(
      `Topic '${topic.name}' is a FIFO topic: its partitions (${topic.partitions} notice streams) are fixed; ` +
        'shards are spread over them by shard key.',
    );
  }
  if (partitions < topic.partitions) {
    throw new ConflictError(
      `Topic '${topic.name}' has ${topic.partitions} partitions; partitions can only be raised ` +
        '(retained messages stay in every partition).',
    );
  }
}

/** The partitions of a topic PUT creates: the given count (standard), FIFO's fixed one (409 for another). */
export function partitionsOfNewTopic(name: string, type: Topic['type'], partitions: number | undefined): number {
  const count = partitions ?? Limits.standardPartitions;
  if (type === 'fifo') checkPartitionChange({ name, type, partitions: NOTICE_BUCKETS }, count);
  return count;
}

export class PartitionRaiser {
  constructor(
    private readonly stores: Stores,
    private readonly clock: Clock,
  ) {}

  /**
   * Raises a live standard topic to `partitions` (no change when it has them;
   * 409 when it has more, or for a FIFO topic). For every group subscribed to
   * the topic, the new partitions' cursors are created BEFORE the topic item
   * changes, so no message lands in a partition some group has no cursor for;
   * the topic write is conditional on the partition count and on `sv` (saves
   * of groups adding a subscription), so a group that subscribed meanwhile
   * makes the raise read the groups again.
   */
  async raise(name: string, partitions: number): Promise<Topic> {
    for (let attempt = 0; attempt < RAISE_ATTEMPTS; attempt++) {
      const topic = await this.stores.catalog.getTopic(name);
      if (!topic) throw new TopicNotFoundError(name);
      checkPartitionChange(topic, partitions);
      if (topic.partitions === partitions) return topic;
      // Read after the topic: every group whose save the topic's `sv` counts is found here.
      const groups = (await this.stores.catalog.allGroups()).filter((g) => g.subscriptions.some((s) => s.topic === name));
      const added = Array.from({ length: partitions - topic.partitions }, (_, i) => topic.partitions + i);
      // Nothing of the current generation is in a new partition yet (no writer uses it before the
      // topic item says so): every group's cursor starts at its head, `earliest` or not.
      const starts = await Promise.all(
        added.map(async (p) => StreamLog.nextAfter(await this.stores.log.head(streamId(topic, { kind: 'partition', partition: p })))),
      );
      const now = this.clock.now();
      const puts = groups.flatMap((group) =>
        added.map((p, i) => () => this.stores.cursors.createIfAbsent(group.name, streamId(topic, { kind: 'partition', partition: p }), starts[i] ?? 1, now)),
      );
      for (let i = 0; i < puts.length; i += CURSOR_PUTS_IN_FLIGHT) await Promise.all(puts.slice(i, i + CURSOR_PUTS_IN_FLIGHT).map((put) => put()));
      const raised = await this.stores.catalog.raisePartitions(topic, partitions, starts, now);
      if (raised) return raised;
    }
    throw new ConflictError(`Topic '${name}' kept changing while this request tried to raise its partitions; retry.`);
  }
}
