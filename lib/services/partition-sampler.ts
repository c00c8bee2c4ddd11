/**
 * Which partitions of a standard topic one receive looks at (docs/design.md,
 * Receive with many partitions). Up to `SAMPLE_SIZE` partitions: all of them;
 * above that a sample of `SAMPLE_SIZE`, so a receive stays O(batch) however
 * many partitions the topic has:
 *
 *  1. streams the caller names first (the streams of commits it carries);
 *  2. partitions this container found messages in within the last
 *     `PRODUCTIVE_MS` (most recent first), at most half the sample;
 *  3. the rest from a rotation per (group, topic), starting at a random
 *     partition and moving on by what it took, so successive looks (a long
 *     poll, the next receive) visit every partition: a partition waits at
 *     most ⌈partitions / (SAMPLE_SIZE / 2)⌉ looks of one container.
 *
 * A FIFO topic's partitions are its notice streams (`t:<topic>/n:<b>`): the
 * same sample picks which of them one receive reads the notices of (a topic
 * of a time-order group has 4: all of them).
 */
import type { Topic } from '../domain/model.js';
import { noticeStream, noticeStreamCount, streamId, streamNamespace } from '../domain/streams.js';
import type { Clock } from '../ports/clock.js';
import type { Notifier } from '../ports/notifier.js';
import type { Random } from '../ports/random.js';

/** Partitions one receive reads the cursors of (one BatchGetItem) and may claim from. */
export const SAMPLE_SIZE = 8;
/** How long a partition that gave messages counts as productive. */
const PRODUCTIVE_MS = 5_000;
/** Productive partitions are remembered per (group, topic) up to this many. */
const PRODUCTIVE_MAX = SAMPLE_SIZE;

type SampledTopic = Pick<Topic, 'name' | 'type' | 'orderGroup' | 'partitions'>;

export class PartitionSampler {
  /** Per `<group>\0<topic>`: the next partition of the rotation. */
  private readonly rotation = new Map<string, number>();
  /** Per `<group>\0<topic>`: partition → when it last gave messages. */
  private readonly productive = new Map<string, Map<number, number>>();
  /** Per `<group>\0<topic>`: partition → when a sample of this container last took it. */
  private readonly visited = new Map<string, Map<number, number>>();

  constructor(
    private readonly clock: Clock,
    private readonly random: Random,
    private readonly hints?: Pick<Notifier, 'movedPartitions'>,
  ) {}

  /**
   * The partition streams of `topic` one receive of `group` looks at, in the order to claim from;
   * of a FIFO topic, the notice streams it reads.
   */
  sample(group: string, topic: SampledTopic, first: readonly string[] = []): string[] {
    const all = (p: number) => (topic.type === 'fifo' ? noticeStream(streamNamespace(topic), p) : streamId(topic, { kind: 'partition', partition: p }));
    const partitions = topic.type === 'fifo' ? noticeStreamCount(topic) : topic.partitions;
    if (partitions <= SAMPLE_SIZE) return Array.from({ length: partitions }, (_, p) => all(p));
    const key = `${group}\u0000${topic.name}`;
    const chosen: number[] = [];
    const take = (p: number) => {
      if (p < partitions && !chosen.includes(p) && chosen.length < SAMPLE_SIZE) chosen.push(p);
    };
    for (const stream of first) {
      const p = Number(stream.slice(stream.lastIndexOf(':') + 1));
      if (all(p) === stream) take(p);
    }
    const now = this.clock.now();
    const visited = this.visited.get(key) ?? new Map<number, number>();
    const moved = [...(this.hints?.movedPartitions?.(topic.name) ?? new Map<number, number>())]
      .filter(([p, at]) => at >= (visited.get(p) ?? -Infinity))
      .sort((a, b) => b[1] - a[1]);
    for (const [p] of moved) if (chosen.length < SAMPLE_SIZE / 2) take(p);
    const recent = [...(this.productive.get(key) ?? new Map<number, number>())]
      .filter(([, at]) => now - at < PRODUCTIVE_MS)
      .sort((a, b) => b[1] - a[1]);
    for (const [p] of recent) if (chosen.length < SAMPLE_SIZE / 2) take(p);
    let next = this.rotation.get(key) ?? Math.floor(this.random.fraction() * partitions);
    for (let step = 0; step < partitions && chosen.length < SAMPLE_SIZE; step++) {
      take(next % partitions);
      next = (next + 1) % partitions;
    }
    this.rotation.set(key, next);
    for (const p of chosen) visited.set(p, now);
    this.visited.set(key, visited);
    return chosen.map(all);
  }

  /** Records that a receive of `group` found messages in partition stream `stream` of `topic` (FIFO: notices in notice stream `stream`). */
  found(group: string, topic: SampledTopic, stream: string): void {
    if ((topic.type === 'fifo' ? noticeStreamCount(topic) : topic.partitions) <= SAMPLE_SIZE) return;
    const key = `${group}\u0000${topic.name}`;
    const p = Number(stream.slice(stream.lastIndexOf(':') + 1));
    const seen = this.productive.get(key) ?? new Map<number, number>();
    seen.delete(p);
    seen.set(p, this.clock.now());
    // Insertion order is recency order: the oldest goes first.
    while (seen.size > PRODUCTIVE_MAX) seen.delete(seen.keys().next().value as number);
    this.productive.set(key, seen);
  }
}
