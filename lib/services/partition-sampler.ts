/**
 * Which partitions of a standard topic one receive looks at, and in which
 * order it claims from them (docs/design.md, Receive with many partitions).
 * Up to `SAMPLE_SIZE` partitions: all of them; above that a sample of
 * `SAMPLE_SIZE`, so a receive stays O(batch) however many partitions the
 * topic has. The look's order, which is also what a sample takes first:
 *
 *  1. streams the caller names (the streams of commits it carries);
 *  2. on every `FAIR_EVERY`-th look of (group, topic) in this container, the
 *     next partition of a fair pointer that steps by one per such look;
 *  3. partitions the notifier heard moved since this container last took
 *     them (most recent first; of the same time, in rotation order from
 *     where this look's rotation starts), then partitions this container found
 *     messages in within the last `PRODUCTIVE_MS` (most recent first), with
 *     1 and 2 at most half the sample, leaving out one another receive of
 *     this container is leading with right now;
 *  4. the rest from a rotation per (group, topic), starting at a random
 *     partition: up to 8 partitions it steps by one per look but the fair
 *     ones; above, it moves
 *     on by what it took, so a partition is sampled at least once in
 *     ⌈partitions / (SAMPLE_SIZE / 2)⌉ looks of one container.
 *
 * So a steady consumer claims from where it last found messages first (a
 * sender container sticks to one partition: partition-picker.ts) and queries
 * no empty partition before it, and a partition with messages is first in
 * the order at least once every `FAIR_EVERY` × partitions looks of one
 * container (≤ 64 up to 8 partitions), however busy the productive ones are.
 *
 * A FIFO topic's partitions are its notice streams (`t:<topic>/n:<b>`): the
 * same sample picks which of them one receive reads the notices of (a topic
 * of a time-order group has 4: all of them).
 */
import type { Topic } from '../domain/model.js';
import { namespaceOf, noticeStream, noticeStreamCount, streamId, streamNamespace } from '../domain/streams.js';
import type { Clock } from '../ports/clock.js';
import type { Notifier } from '../ports/notifier.js';
import type { Random } from '../ports/random.js';

/** Partitions one receive reads the cursors of (one BatchGetItem) and may claim from. */
export const SAMPLE_SIZE = 8;
/** Streams a caller names lead at most this many of a sampled topic's look (the rest is the rotation's). */
export const NAMED_PER_LOOK = SAMPLE_SIZE / 2;

/** Whether a look samples `topic`'s partitions or notice streams (more than {@link SAMPLE_SIZE} of them) rather than reading all. */
export const samplesStreams = (topic: Pick<Topic, 'type' | 'orderGroup' | 'partitions'>): boolean =>
  (topic.type === 'fifo' ? noticeStreamCount(topic) : topic.partitions) > SAMPLE_SIZE;

/** The streams of `streams` one look can name: the first {@link NAMED_PER_LOOK} of each namespace, in order. */
export function namedInOneLook(streams: readonly string[]): string[] {
  const per = new Map<string, number>();
  return streams.filter((s) => {
    const n = per.get(namespaceOf(s)) ?? 0;
    per.set(namespaceOf(s), n + 1);
    return n < NAMED_PER_LOOK;
  });
}

/** Every this many looks of (group, topic) in a container, the fair pointer's partition leads instead of the hints. */
export const FAIR_EVERY = 8;
/** How long a partition that gave messages counts as productive. */
const PRODUCTIVE_MS = 5_000;
/** Productive partitions are remembered per (group, topic) up to this many. */
const PRODUCTIVE_MAX = SAMPLE_SIZE;

type SampledTopic = Pick<Topic, 'name' | 'type' | 'orderGroup' | 'partitions'>;

/** One receive's look at a topic's partitions. */
export interface PartitionLook {
  /** Partition streams in the order to claim from: the first `lead` are named, fair or hinted; the rest the rotation's. */
  streams: string[];
  lead: number;
  /** Ends the look: the hinted partitions it leads with may lead another receive of this container again. */
  done(): void;
}

/**
 * (group, topic) pairs whose sampling state one container keeps; the least recently looked at
 * goes first above this. A pair's state is ≤ 5 numbers and two maps of at most its partitions
 * (`visited`, ≤ 256) and `PRODUCTIVE_MAX` entries: ≤ ~270 entries, so ≤ ~280,000 entries (about
 * 10 MB) at this bound. A pair that comes back after it went starts as in a new container (a
 * random rotation and fair pointer, nothing visited): each bound above holds per container.
 */
export const SAMPLER_PAIRS_MAX = 1_024;

/** What the sampler keeps per (group, topic). */
interface PairState {
  /** The next partition of the rotation. */
  rotation?: number;
  /** The next partition to lead a fair look. */
  fair?: number;
  /** Looks taken so far, modulo {@link FAIR_EVERY} (every {@link FAIR_EVERY}-th is a fair one). */
  looks: number;
  /** Partition → when it last gave messages (insertion order is recency order). */
  productive: Map<number, number>;
  /** Partition → when a sample of this container last took it. */
  visited: Map<number, number>;
}

export class PartitionSampler {
  /** Per `<group>\0<topic>`, least recently looked at first (at most `maxPairs`). */
  private readonly pairs = new Map<string, PairState>();
  /** `<group>\0<topic>\0<partition>` of the hinted partitions a receive of this container is leading with now. */
  private readonly leading = new Set<string>();

  constructor(
    private readonly clock: Clock,
    private readonly random: Random,
    private readonly hints?: Pick<Notifier, 'movedPartitions'>,
    private readonly maxPairs = SAMPLER_PAIRS_MAX,
  ) {}

  /** How many (group, topic) pairs the sampler keeps state for now (≤ `maxPairs`). */
  get pairCount(): number {
    return this.pairs.size;
  }

  /** The state of a pair, made the most recently used; the least recently used goes above the bound. */
  private pair(key: string): PairState {
    const state = this.pairs.get(key) ?? { looks: 0, productive: new Map<number, number>(), visited: new Map<number, number>() };
    this.pairs.delete(key);
    this.pairs.set(key, state);
    while (this.pairs.size > this.maxPairs) this.pairs.delete(this.pairs.keys().next().value as string);
    return state;
  }

  /**
   * The partition streams of `topic` one receive of `group` looks at, in the order to claim from;
   * of a FIFO topic, the notice streams it reads.
   */
  sample(group: string, topic: SampledTopic, first: readonly string[] = []): string[] {
    const look = this.look(group, topic, first);
    look.done();
    return look.streams;
  }

  /** Like {@link sample}, with where the hinted lead ends; the caller calls `done()` when the receive ends. */
  look(group: string, topic: SampledTopic, first: readonly string[] = []): PartitionLook {
    const n = topic.type === 'fifo' ? noticeStreamCount(topic) : topic.partitions;
    const all = (p: number) => (topic.type === 'fifo' ? noticeStream(streamNamespace(topic), p) : streamId(topic, { kind: 'partition', partition: p }));
    const key = `${group}\u0000${topic.name}`;
    const size = Math.min(n, SAMPLE_SIZE);
    const chosen: number[] = [];
    const take = (p: number) => {
      if (p >= 0 && p < n && !chosen.includes(p) && chosen.length < size) chosen.push(p);
    };
    // Named streams (carried commits) take at most half of a sample that cannot hold every partition:
    // a consumer carrying commits on 8 partitions each look would otherwise sample only those for as
    // long as they have messages, and the rotation would never move (review). Their commits outside
    // the sample are written on their own by the receiver.
    let named = 0;
    for (const stream of first) {
      if (n > SAMPLE_SIZE && named >= SAMPLE_SIZE / 2) break;
      const p = Number(stream.slice(stream.lastIndexOf(':') + 1));
      if (all(p) === stream && !chosen.includes(p)) {
        take(p);
        named++;
      }
    }
    const now = this.clock.now();
    const state = this.pair(key);
    const visited = state.visited;
    const count = state.looks + 1;
    state.looks = count % FAIR_EVERY;
    const held: string[] = [];
    const fairLook = count % FAIR_EVERY === 0;
    if (fairLook) {
      const p = state.fair ?? Math.floor(this.random.fraction() * n);
      take(p);
      state.fair = (p + 1) % n;
    }
    // Where the rotation goes on this look; hints of the same time go in rotation order from here
    // (not in the order they were heard): each container's pairs start at a random partition, so
    // containers that hear the same stamps of one dispatcher invocation lead with different ones.
    let next = state.rotation ?? Math.floor(this.random.fraction() * n);
    const fromRotation = (p: number) => (p - next + n) % n;
    const hinted = (p: number) => {
      const k = `${key}\u0000${p}`;
      if (chosen.length >= SAMPLE_SIZE / 2 || chosen.includes(p) || this.leading.has(k)) return;
      take(p);
      this.leading.add(k);
      held.push(k);
    };
    const moved = [...(this.hints?.movedPartitions?.(topic.name) ?? new Map<number, number>())]
      .filter(([p, at]) => p < n && at >= (visited.get(p) ?? -Infinity))
      .sort((a, b) => b[1] - a[1] || fromRotation(a[0]) - fromRotation(b[0]));
    for (const [p] of moved) hinted(p);
    // Productive ones of the same time keep the order this container found them in (stable sort).
    const recent = [...state.productive].filter(([p, at]) => p < n && now - at < PRODUCTIVE_MS).sort((a, b) => b[1] - a[1]);
    for (const [p] of recent) hinted(p);
    const lead = chosen.length;
    const start = next;
    for (let step = 0; step < n && chosen.length < size; step++) {
      take(next % n);
      next = (next + 1) % n;
    }
    // Up to 8 partitions every look takes them all: the rotation steps by one a look (not on fair
    // looks, else with 8 partitions the fair look would always hide the same step), so the tail moves.
    if (n > SAMPLE_SIZE) state.rotation = next;
    else if (!fairLook || state.rotation === undefined) state.rotation = fairLook ? start : (start + 1) % n;
    for (const p of chosen) visited.set(p, now);
    let open = true;
    return {
      streams: chosen.map(all),
      lead,
      done: () => {
        if (!open) return;
        open = false;
        for (const k of held) this.leading.delete(k);
      },
    };
  }

  /** Records that a receive of `group` found messages in partition stream `stream` of `topic` (FIFO: notices in notice stream `stream`). */
  found(group: string, topic: SampledTopic, stream: string): void {
    const key = `${group}\u0000${topic.name}`;
    const p = Number(stream.slice(stream.lastIndexOf(':') + 1));
    const seen = this.pair(key).productive;
    seen.delete(p);
    seen.set(p, this.clock.now());
    // Insertion order is recency order: the oldest goes first.
    while (seen.size > PRODUCTIVE_MAX) seen.delete(seen.keys().next().value as number);
  }
}
