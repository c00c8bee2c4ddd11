/**
 * Raising the partition count of a standard topic (docs/design.md, Raising
 * partitions). Partitions carry a topic's write throughput; they are only
 * ever raised: messages retained in a partition stay there, so a lower count
 * would hide them.
 */
import { ConflictError, InvalidArgumentError, PartitionRaiseIncompleteError, TopicNotFoundError } from '../domain/errors.js';
import { Limits, type Topic } from '../domain/model.js';
import { NOTICE_BUCKETS, streamId } from '../domain/streams.js';
import { StreamLog } from '../adapters/dynamodb/stream-log.js';
import type { Clock } from '../ports/clock.js';
import { PARTITION_CALLS_IN_FLIGHT, mapBounded } from './bounded-parallel.js';
import type { Stores } from './stores.js';

/** Reads and conditional writes of one raise step before it gives up (409). */
const RAISE_ATTEMPTS = 4;
/**
 * Cursor puts (subscribed groups × new partitions) of one raise step: a raise adds partitions in
 * steps of at most this many puts (at least one partition), each step a whole raise — cursors
 * first, then the topic item. About 0.5 s on AWS (7.5 ms a call, 16 in flight).
 */
export const RAISE_STEP_CURSOR_PUTS = 1024;
/**
 * A raise starts no new step after this long (ms), far inside the API functions' 15 s timeout;
 * the partitions added so far stay, and the same request repeated goes on from there.
 */
export const RAISE_TIME_BUDGET_MS = 8_000;

export interface RaiseOptions {
  stepCursorPuts?: number;
  timeBudgetMs?: number;
}

/**
 * Refuses a partition count a topic can never take (409, nothing written):
 * lower than it has, or another one than a FIFO topic's fixed count.
 */
export function checkPartitionChange(topic: Pick<Topic, 'name' | 'type' | 'partitions'>, partitions: number | undefined): void {
  if (partitions === undefined || partitions === topic.partitions) return;
  if (topic.type === 'fifo') {
    throw new ConflictError(
      `Topic '${topic.name}' is a FIFO topic: its partitions (${topic.partitions} notice streams) are fixed at creation; ` +
        "every shard's notices go to the notice stream its shard key hashes to, and another count would move them " +
        'without a hand-off (delete the topic and create it again to change it).',
    );
  }
  if (partitions < topic.partitions) {
    throw new ConflictError(
      `Topic '${topic.name}' has ${topic.partitions} partitions; partitions can only be raised ` +
        '(retained messages stay in every partition).',
    );
  }
}

/**
 * The partitions of a topic PUT creates: the given count or 4. A FIFO topic's are its notice
 * streams; a time-order group's topics share the group's 4 (400 for another count).
 */
export function partitionsOfNewTopic(name: string, type: Topic['type'], partitions: number | undefined, orderGroup?: string): number {
  const count = partitions ?? Limits.standardPartitions;
  if (type === 'fifo' && orderGroup !== undefined && count !== NOTICE_BUCKETS) {
    throw new InvalidArgumentError(
      `Topic '${name}' joins time-order group '${orderGroup}', whose topics share its ${NOTICE_BUCKETS} notice streams: ` +
        `partitions must be ${NOTICE_BUCKETS} (or left out), not ${count}.`,
      { issues: [{ path: 'partitions', message: `must be ${NOTICE_BUCKETS} on a topic of a time-order group` }] },
    );
  }
  return count;
}

export class PartitionRaiser {
  private readonly stepCursorPuts: number;
  private readonly timeBudgetMs: number;

  constructor(
    private readonly stores: Stores,
    private readonly clock: Clock,
    options: RaiseOptions = {},
  ) {
    this.stepCursorPuts = options.stepCursorPuts ?? RAISE_STEP_CURSOR_PUTS;
    this.timeBudgetMs = options.timeBudgetMs ?? RAISE_TIME_BUDGET_MS;
  }

  /**
   * Raises a live standard topic to `partitions` (no change when it has them;
   * 409 when it has more, or for a FIFO topic), in steps of at most
   * {@link RAISE_STEP_CURSOR_PUTS} cursor puts. In each step, for every group
   * subscribed to the topic, the new partitions' cursors are created BEFORE
   * the topic item changes, so no message lands in a partition some group has
   * no cursor for; the topic write is conditional on the partition count and
   * on `sv` (saves of groups adding a subscription), so a group that
   * subscribed meanwhile makes the step read the groups again. A raise that
   * has used {@link RAISE_TIME_BUDGET_MS} stops after its current step with
   * 409 `PartitionRaiseIncomplete` (the partitions added so far stay; the same
   * request repeated goes on).
   */
  async raise(name: string, partitions: number): Promise<Topic> {
    const started = this.clock.now();
    for (;;) {
      const topic = await this.step(name, partitions);
      if (topic.partitions === partitions) return topic;
      if (this.clock.now() - started >= this.timeBudgetMs) throw new PartitionRaiseIncompleteError(name, topic.partitions, partitions);
    }
  }

  /** One step towards `partitions`: the topic as it is after it. */
  private async step(name: string, partitions: number): Promise<Topic> {
    for (let attempt = 0; attempt < RAISE_ATTEMPTS; attempt++) {
      const topic = await this.stores.catalog.getTopic(name);
      if (!topic) throw new TopicNotFoundError(name);
      checkPartitionChange(topic, partitions);
      if (topic.partitions === partitions) return topic;
      // Read after the topic: every group whose save the topic's `sv` counts is found here.
      const groups = (await this.stores.catalog.allGroups()).filter((g) => g.subscriptions.some((s) => s.topic === name));
      const count = Math.min(partitions - topic.partitions, Math.max(1, Math.floor(this.stepCursorPuts / Math.max(1, groups.length))));
      const added = Array.from({ length: count }, (_, i) => topic.partitions + i);
      // Nothing of the current generation is in a new partition yet (no writer uses it before the
      // topic item says so): every group's cursor starts at its head, `earliest` or not.
      const starts = await mapBounded(added, PARTITION_CALLS_IN_FLIGHT, async (p) =>
        StreamLog.nextAfter(await this.stores.log.head(streamId(topic, { kind: 'partition', partition: p }))),
      );
      const now = this.clock.now();
      // Partition by partition, each over the groups: the puts in flight spread over the groups'
      // cursor keys (C#<group>), each of which takes about 1,000 writes a second on AWS.
      const puts = added.flatMap((p, i) => groups.map((group) => ({ group: group.name, stream: streamId(topic, { kind: 'partition', partition: p }), start: starts[i] ?? 1 })));
      await mapBounded(puts, PARTITION_CALLS_IN_FLIGHT, (put) => this.stores.cursors.createIfAbsent(put.group, put.stream, put.start, now));
      const raised = await this.stores.catalog.raisePartitions(topic, topic.partitions + count, starts, now);
      if (raised) return raised;
    }
    throw new ConflictError(`Topic '${name}' kept changing while this request tried to raise its partitions; retry.`);
  }
}
