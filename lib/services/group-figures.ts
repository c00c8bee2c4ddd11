/**
 * A consumer group's figures — `backlog`, `inFlight`, `pending`,
 * `oldestMessageAgeSeconds`, `deadLettered`, `committed` — for
 * `GET /v1/groups/{g}` and the per-minute `group-metrics`
 * (docs/design.md, Per-group metrics).
 *
 * They come from the group's cursors, read by key prefix: the subscribed
 * standard topics' partition cursors and the redrive stream's, always whole
 * (O(subscribed partitions)); and the subscribed FIFO namespaces' shard
 * cursors, whole while they fit {@link FIGURE_PAGES_MAX} Query pages (1 MB
 * each, ≈ 4,000 idle cursors): every figure exact, `committed` the sum of the
 * cursors' counts. A FIFO group keeps a cursor per shard key it touched (idle
 * ones for 15 days), so past that the figures read only the FIFO shards on the
 * ready index (a shard with work or leases has an entry: docs/design.md, Ready
 * index) — O(active shards), not O(shard keys ever touched) — and `committed`,
 * which needs every cursor, is `null` ("not counted at this size").
 * `deadLettered` comes from the group's dead-letter counters at any size
 * (dead-letter-counts.ts), which survive the cursors. Cursors of topics the
 * group no longer subscribes to are not read.
 */
import type { CursorState } from '../domain/cursor.js';
import { countedFrom, isPurged, type Group, type Topic } from '../domain/model.js';
import { isRedriveStream, isShardStream, isWideFifo, namespaceOf, noticeStreamCount, noticeStreamsOf, redriveStream, shardStreamId, streamId, streamNamespace } from '../domain/streams.js';
import type { Clock } from '../ports/clock.js';
import { BATCH_GET_MAX_KEYS } from '../adapters/dynamodb/call.js';
import { readyBucketCount, readyBucketPks, readyIndexPk } from '../adapters/dynamodb/keys.js';
import { StreamLog, type Segment } from '../adapters/dynamodb/stream-log.js';
import { PARTITION_CALLS_IN_FLIGHT, mapBounded, slices } from './bounded-parallel.js';
import type { Stores } from './stores.js';

/**
 * Query pages of cursors (≤ 1 MB each, ≤ 256 RRU consistent) a group's figures read whole
 * before they read only the cursors with work: bounds what one run costs a group with very many
 * idle FIFO shard cursors (≤ $1.38 a month in the per-minute metrics at list prices).
 */
export const FIGURE_PAGES_MAX = 1;

/**
 * Notice segments per notice stream the figures read past the group's notice cursor (a receive
 * reads 25). More than the notices a container may have absorbed past the cursor it has not moved
 * yet (receiver.ts NOTICE_LAG_MAX, 8: one a segment when sends are unbatched), so that those are
 * read and found known, not counted one a notice from the head.
 */
export const NOTICE_FIGURE_SEGMENTS = 10;

/** Shards a notice stream's unread notices name whose cursors the figures read by key when they did not fold them (the rest count as new). */
export const NOTICE_FIGURE_LOOKUPS = 100;

/** One notice stream's notices past the group's notice cursor, as the figures read them. */
interface UnreadNotices {
  notices: Array<{ shard: string; from: number; to: number; epoch: boolean }>;
  /** Notices past those read (one message each). */
  beyond: number;
  /** The notice cursor was moved by a seek to a time: shards without a cursor are not counted. */
  sought: boolean;
}

export interface GroupFigureValues {
  backlog: number;
  inFlight: number;
  pending: number;
  oldestMessageAgeSeconds: number;
  deadLettered: number;
  /** Messages the group's live cursors committed; null for a group past {@link FIGURE_PAGES_MAX} pages of cursors. */
  committed: number | null;
}

/**
 * What the group reads: its subscribed partition streams (and the redrive stream) with where their
 * counted messages start, its FIFO namespaces, the cursor-key prefixes of both, its ready-index keys.
 */
interface FigureScope {
  /** The subscribed topics by name (a record of another generation, or purged, is no one's oldest message). */
  topics: Map<string, Topic>;
  partitions: Map<string, number>;
  namespaces: Set<string>;
  /** The subscribed FIFO namespaces' notice streams, and whether the namespace's shards are sequenced (`q:`). */
  noticeStreams: Array<{ namespace: string; streams: string[]; sequenced: boolean }>;
  partitionPrefixes: string[];
  shardPrefixes: string[];
  readyPks: string[];
}

export class GroupFigures {
  constructor(
    private readonly stores: Stores,
    private readonly clock: Clock,
    /** Cursor pages read whole before the figures read the cursors with work only; 0: those only (tests compare the two). */
    private readonly pagesMax = FIGURE_PAGES_MAX,
    /** How the oldest messages' segments are read: by key where the cursor names them (default), or each by a Query (tests compare the two). */
    private readonly oldestBy: OldestBy = 'key',
  ) {}

  /**
   * The group's figures (see the file's comment). `consistentCounts` false reads the dead-letter
   * counters eventually consistently (half the read units; the per-minute metrics).
   */
  async of(group: Group, consistentCounts = true): Promise<GroupFigureValues> {
    const now = this.clock.now();
    const scope = await this.scope(group);
    const [figures, deadLettered] = await Promise.all([this.folded(group, scope, now), this.stores.deadLetterCounts.total(group.name, group.createdAt, consistentCounts)]);
    return {
      backlog: figures.backlog,
      inFlight: figures.inFlight,
      pending: figures.pending,
      oldestMessageAgeSeconds: figures.oldestMessageAgeSeconds,
      // Redriven dead letters are back in the group (a redriven message dead-lettered again counts again).
      deadLettered: Math.max(0, deadLettered - (group.redriven ?? 0)),
      committed: figures.committed,
    };
  }

  /** Whether any of the group's cursors holds a lease (in flight, expired or pending). */
  async hasInFlight(group: Group): Promise<boolean> {
    const now = this.clock.now();
    const scope = await this.scope(group);
    // Only the streams the receive reads: partitions a re-created topic no longer has keep their old leases for good.
    for await (const cursors of this.partitionCursors(group, scope, now)) if (cursors.some((c) => scope.partitions.has(c.stream) && c.leases.size > 0)) return true;
    return (await this.shardCursors(group, scope, now)).cursors.some((c) => c.leases.size > 0);
  }

  /** The figures of the partition cursors and the FIFO shard cursors (committed null when the shards were not read whole). */
  private async folded(group: Group, scope: FigureScope, now: number): Promise<Omit<GroupFigureValues, 'deadLettered'>> {
    const fold = new FigureFold(this.stores, scope, now, this.oldestBy);
    for await (const cursors of this.partitionCursors(group, scope, now)) await fold.add(cursors);
    const shards = await this.shardCursors(group, scope, now);
    await fold.add(shards.cursors);
    await this.undiscovered(group, scope, now, fold, shards.whole);
    const figures = await fold.result();
    return { ...figures, committed: shards.whole ? figures.committed : null };
  }

  /** The cursors of the subscribed standard topics' partitions and of the redrive stream, page by page (consistent; O(subscribed partitions)). */
  private async *partitionCursors(group: Group, scope: FigureScope, now: number): AsyncGenerator<CursorState[]> {
    for (const prefix of scope.partitionPrefixes) {
      for await (const { cursors } of this.stores.cursors.figurePages(group.name, now, Infinity, prefix)) yield cursors;
    }
  }

  /**
   * The subscribed FIFO namespaces' shard cursors: every one while they fit the page budget
   * (`whole`), else the shards on the ready index (the cursors with work). Only FIFO shard
   * cursors count against the budget: a group of standard topics is always read whole.
   */
  private async shardCursors(group: Group, scope: FigureScope, now: number): Promise<{ cursors: CursorState[]; whole: boolean }> {
    if (scope.shardPrefixes.length === 0) return { cursors: [], whole: true };
    if (this.pagesMax <= 0) return this.activeShards(group, scope, now);
    let pagesLeft = this.pagesMax;
    const read: CursorState[] = [];
    for (const prefix of scope.shardPrefixes) {
      // Each prefix reads at least its first page (a sequenced topic's `q:` beside its empty `k:`).
      const allowed = Math.max(1, pagesLeft);
      let pages = 0;
      for await (const { cursors, more } of this.stores.cursors.figurePages(group.name, now, allowed, prefix)) {
        pages++;
        // More than the budget: the pages read are not used.
        if (more && pages >= allowed) return this.activeShards(group, scope, now);
        read.push(...cursors);
      }
      pagesLeft -= pages;
    }
    return { cursors: read, whole: true };
  }

  /** The FIFO shards on the ready index (a shard with work or leases has an entry), their cursors by key, eventually consistent. */
  private async activeShards(group: Group, scope: FigureScope, now: number): Promise<{ cursors: CursorState[]; whole: boolean }> {
    const entries = await this.stores.readyIndex.entries(group.name, scope.readyPks);
    const streams = entries.filter((s) => isShardStream(s) && scope.namespaces.has(namespaceOf(s)));
    // A BatchGetItem takes 100 keys; several in flight, so that many shards with work cost time in parallel.
    const chunks = slices(streams, BATCH_GET_MAX_KEYS);
    const cursors = (await mapBounded(chunks, PARTITION_CALLS_IN_FLIGHT, (chunk) => this.stores.cursors.figuresOf(group.name, chunk, now))).flat();
    return { cursors, whole: false };
  }

  /**
   * FIFO messages no receive has discovered yet: a shard's cursor learns of its messages (`kn`)
   * only when a receive reads their notices, so with no consumer receiving — the case a backlog
   * alarm is for — the shard cursors show none of what was sent since. Per notice stream, the
   * notices past the group's notice cursor (up to {@link NOTICE_FIGURE_SEGMENTS} segments,
   * eventually consistent; past them a notice counts one message, from the stream's head) add the
   * messages they announce above what each shard's cursor knows (docs/design.md, Per-group
   * metrics, "Messages no receive has discovered"). `whole`: every live shard cursor was folded
   * (a shard not among them has none); else up to {@link NOTICE_FIGURE_LOOKUPS} shards a stream
   * are read by key.
   */
  private async undiscovered(group: Group, scope: FigureScope, now: number, fold: FigureFold, whole: boolean): Promise<void> {
    for (const { namespace, streams, sequenced } of scope.noticeStreams) {
      const cursors = new Map<string, CursorState>();
      for await (const { cursors: page } of this.stores.cursors.figurePages(group.name, now, Infinity, `${namespace}/n:`)) for (const c of page) cursors.set(c.stream, c);
      const unread = await mapBounded(streams, PARTITION_CALLS_IN_FLIGHT, async (stream): Promise<UnreadNotices> => {
        const cursor = cursors.get(stream);
        // No cursor: the group's receive creates it (a stream added after the subscription) from the first retained notice.
        if (!cursor) return { notices: [], beyond: 0, sought: false };
        const segments = await this.stores.log.readNotices(stream, cursor.segmentStart, NOTICE_FIGURE_SEGMENTS, false);
        const notices = segments
          // A notice segment past its `ttl` announces only expired messages (TTL deletes it within days).
          .filter((segment) => segment.ttl === undefined || segment.ttl * 1000 > now)
          .flatMap((segment) => segment.notices.map((notice, i) => ({ ...notice, seq: segment.seq + i })))
          .filter((n) => n.seq >= cursor.next)
          .map((n) => ({ shard: shardStreamId(namespace, n.shardKey, sequenced), from: n.from, to: n.to, epoch: n.epoch === true }));
        const last = segments.at(-1);
        // A full page: the notices past it count one message each, up to the stream's head.
        const beyond = last !== undefined && segments.length >= NOTICE_FIGURE_SEGMENTS ? Math.max(0, StreamLog.nextAfter(await this.stores.log.head(stream)) - (last.seq + last.count)) : 0;
        // After a seek to a time, a shard the group has no cursor for starts at the first message
        // deliverable at or after it, which the notice does not tell.
        return { notices, beyond, sought: (cursor.seek?.floor ?? 0) > 0 };
      });
      await fold.addUndiscovered(unread, whole ? undefined : (shards) => this.stores.cursors.figuresOf(group.name, shards, now));
    }
  }

  private async scope(group: Group): Promise<FigureScope> {
    const topics = await this.stores.catalog.getTopics(group.subscriptions.map((s) => s.topic));
    const partitions = new Map<string, number>();
    const namespaces = new Set<string>();
    const partitionPrefixes = new Set<string>();
    const shardPrefixes = new Set<string>();
    const noticeStreams = new Map<string, { namespace: string; streams: string[]; sequenced: boolean }>();
    let buckets = 0;
    for (const topic of topics.values()) {
      const namespace = streamNamespace(topic);
      if (topic.type === 'fifo') {
        namespaces.add(namespace);
        if (!noticeStreams.has(namespace)) noticeStreams.set(namespace, { namespace, streams: noticeStreamsOf(topic), sequenced: topic.sequenced === true });
        shardPrefixes.add(`${namespace}/k:`);
        if (topic.sequenced === true) shardPrefixes.add(`${namespace}/q:`);
        if (isWideFifo(topic)) buckets = Math.max(buckets, readyBucketCount(noticeStreamCount(topic)));
      } else {
        partitionPrefixes.add(`${namespace}/p:`);
        for (let p = 0; p < topic.partitions; p++) partitions.set(streamId(topic, { kind: 'partition', partition: p }), countedFrom(topic, p));
      }
    }
    // Redriven messages wait in the group's redrive stream, counted like a partition's.
    const redrive = redriveStream(group.name);
    partitions.set(redrive, 1);
    partitionPrefixes.add(redrive);
    return {
      topics,
      partitions,
      namespaces,
      noticeStreams: [...noticeStreams.values()],
      partitionPrefixes: [...partitionPrefixes],
      shardPrefixes: [...shardPrefixes],
      // The receive's keys: the home key and the buckets of the widest wide topic (receiver.ts).
      readyPks: [readyIndexPk(group.name), ...readyBucketPks(group.name, buckets)],
    };
  }
}

/** Where the oldest messages' segments come from: by key where the cursor names them, or each by a Query. */
export type OldestBy = 'key' | 'query';

/** Figures folded from cursors page by page. */
class FigureFold {
  backlog = 0;
  inFlight = 0;
  pending = 0;
  committed = 0;
  /** Per stream with work, its oldest message (`first`) and, when the cursor names it, the segment holding it. */
  private readonly oldestOf: Array<{ stream: string; first: number; segment: number | undefined }> = [];
  /** What each shard cursor folded knows of its shard: the highest sequence number announced to it. */
  private readonly knownOf = new Map<string, number>();

  constructor(
    private readonly stores: Stores,
    private readonly scope: FigureScope,
    private readonly now: number,
    private readonly oldestBy: OldestBy,
  ) {}

  async add(cursors: readonly CursorState[]): Promise<this> {
    const { partitions, namespaces } = this.scope;
    const now = this.now;
    // Partition heads: one read per subscribed partition (up to subscriptionsMax × partitionsMax), a bounded number in flight.
    const heads = new Map(
      await mapBounded(
        cursors.filter((c) => partitions.has(c.stream)),
        PARTITION_CALLS_IN_FLIGHT,
        async (c) => [c.stream, StreamLog.nextAfter(await this.stores.log.head(c.stream)) - 1] as const,
      ),
    );
    for (const cursor of cursors) {
      this.committed += cursor.committed;
      const shard = isShardStream(cursor.stream) && namespaces.has(namespaceOf(cursor.stream));
      if (!partitions.has(cursor.stream) && !shard) continue;
      if (shard) this.knownOf.set(cursor.stream, Math.max(cursor.known ?? 0, cursor.next - 1));
      const leases = [...cursor.leases.values()];
      const pendingHere = leases.filter((l) => l.pending).length;
      // A lease that expired (or was released) waits for redelivery: backlog, not in flight.
      const waitingAgain = leases.filter((l) => !l.pending && l.expiresAt <= now).length;
      this.pending += pendingHere;
      this.inFlight += leases.length - pendingHere - waitingAgain;
      this.backlog += waitingAgain;
      // Shards: the head announced by notices (no read per shard); partitions: the stream's head.
      const last = shard ? (cursor.known ?? cursor.next - 1) : (heads.get(cursor.stream) ?? cursor.next - 1);
      // Messages of a dead generation (below its start) wait for no one; nor do the numbers a
      // shard skipped when it opened a new epoch (`ke`: docs/design.md, Idle shards expire).
      const from = Math.max(cursor.next, partitions.get(cursor.stream) ?? 1, shard ? (cursor.epochStart ?? 0) : 0);
      const waiting = Math.max(0, last + 1 - from);
      this.backlog += waiting;
      const seqs = [...cursor.leases.keys()];
      if (waiting > 0) seqs.push(from);
      if (seqs.length > 0) {
        const first = Math.min(...seqs);
        // The segment holding it, by key: a lease names its segment; the next message's is the
        // cursor's read position. Anything else (a new epoch's start, a generation's) is looked up.
        // (A range claim's member names none: docs/design.md, Range claims.)
        const lease = cursor.leases.get(first);
        const segment = lease !== undefined ? (lease.range ? undefined : lease.segment) : first === cursor.next && cursor.segmentStart <= first ? cursor.segmentStart : undefined;
        this.oldestOf.push({ stream: cursor.stream, first, segment });
      }
    }
    return this;
  }

  /**
   * Notices no receive absorbed yet, per notice stream in stream order. A shard's notices may sit on
   * several streams in any order (each sending container picks its own), so each shard counts once,
   * over all of them: the messages announced above what its cursor knows (a cursor not folded is read
   * by key, `cursorsOf`, up to {@link NOTICE_FIGURE_LOOKUPS} a stream; without `cursorsOf` every live
   * cursor was folded), from the latest epoch start announced — the span from the lowest `from` to
   * the highest `to`, at most the notices' own counts summed (a span over a gap). Each stream's first
   * counted shard is a candidate for the oldest message, at the shard's first counted message (by key
   * when a notice starts there: the segment its send wrote). `beyond`: one message each, when the
   * page's last notice is one no receive absorbed.
   */
  async addUndiscovered(streams: readonly UnreadNotices[], cursorsOf: ((shards: string[]) => Promise<CursorState[]>) | undefined): Promise<void> {
    const known = new Map(this.knownOf);
    const withCursor = new Set(this.knownOf.keys());
    if (cursorsOf) {
      const missing = new Set<string>();
      for (const { notices } of streams) {
        // The last notice read decides whether the notices past the page count: its shard is read too.
        const last = notices.at(-1)?.shard;
        if (last !== undefined && !known.has(last)) missing.add(last);
        let looked = 0;
        for (const { shard } of notices) {
          if (looked >= NOTICE_FIGURE_LOOKUPS - 1) break;
          if (known.has(shard) || missing.has(shard)) continue;
          missing.add(shard);
          looked++;
        }
      }
      const keys = [...missing];
      const chunks = slices(keys, BATCH_GET_MAX_KEYS);
      for (const cursor of (await mapBounded(chunks, PARTITION_CALLS_IN_FLIGHT, cursorsOf)).flat()) {
        known.set(cursor.stream, Math.max(cursor.known ?? 0, cursor.next - 1));
        withCursor.add(cursor.stream);
      }
    }
    // Per shard over every stream read: the span announced, the latest epoch start, the notices' own counts.
    const spans = new Map<string, { from: number; to: number; epoch: number; sum: number; froms: Set<number> }>();
    for (const { notices, beyond, sought } of streams) {
      // The notices past the page count only when the page ends among notices no receive absorbed:
      // a receive absorbs a stream's notices in order, so past an absorbed one nothing is known to
      // wait (the group's notice cursor lags what containers absorbed, by more than the page when
      // its writes failed: a crash suite's finding). After a seek to a time, not at all (above).
      const last = notices.at(-1);
      if (!sought && last !== undefined && last.to > (known.get(last.shard) ?? 0)) this.backlog += beyond;
      for (const { shard, from, to, epoch } of notices) {
        if (sought && !withCursor.has(shard)) continue;
        const span = spans.get(shard) ?? { from, to, epoch: 0, sum: 0, froms: new Set<number>() };
        span.from = Math.min(span.from, from);
        span.to = Math.max(span.to, to);
        if (epoch) span.epoch = Math.max(span.epoch, from);
        span.sum += Math.max(0, to - Math.max(from - 1, known.get(shard) ?? 0));
        span.froms.add(from);
        spans.set(shard, span);
      }
    }
    const start = new Map<string, number>();
    for (const [shard, span] of spans) {
      const begin = Math.max(span.from, (known.get(shard) ?? 0) + 1, span.epoch);
      if (span.to < begin) continue;
      this.backlog += Math.min(span.to - begin + 1, span.sum);
      start.set(shard, begin);
    }
    const candidates = new Set<string>();
    for (const { notices } of streams) {
      const notice = notices.find((n) => start.has(n.shard) && !candidates.has(n.shard));
      if (!notice) continue;
      candidates.add(notice.shard);
      const first = start.get(notice.shard)!;
      this.oldestOf.push({ stream: notice.shard, first, segment: spans.get(notice.shard)!.froms.has(first) ? first : undefined });
    }
  }

  /**
   * The figures folded so far, with the oldest message's age: the segment holding each stream's
   * oldest message, by key where the cursor names it (BatchGetItem, 100 a call: O(streams with
   * work ÷ 100) calls), else — or when that segment is gone or does not hold it — by a Query.
   * Eventually consistent (half the read units): a segment never changes once written.
   */
  async result(): Promise<Omit<GroupFigureValues, 'deadLettered'> & { committed: number }> {
    const now = this.now;
    let oldest: number | undefined;
    const consider = (segment: Segment | undefined, first: number) => {
      const record = segment !== undefined && first >= segment.seq && first < segment.seq + segment.count ? segment.records[first - segment.seq] : undefined;
      // Expired, purged and dead-generation records wait for no one (the receive passes over them;
      // a redriven message lives on whatever its topic became since).
      const topic = record ? this.scope.topics.get(record.topic) : undefined;
      // As the receive (receiver.ts live): a redriven message outlives its topic's generation, not a purge after the redrive.
      const gone = topic !== undefined && ((!isRedriveStream(segment!.stream) && record!.generation !== topic.generation) || isPurged(topic, record!));
      if (record && record.expiresAt > now && !gone) oldest = Math.min(oldest ?? Infinity, record.deliverableAt);
      return record !== undefined;
    };
    const keyed: typeof this.oldestOf = [];
    const lookUp: typeof this.oldestOf = [];
    for (const o of this.oldestOf) (o.segment !== undefined && this.oldestBy === 'key' ? keyed : lookUp).push(o);
    const chunks = slices(keyed, BATCH_GET_MAX_KEYS);
    await mapBounded(chunks, PARTITION_CALLS_IN_FLIGHT, async (chunk) => {
      const found = await this.stores.log.getSegments(chunk.map((o) => ({ stream: o.stream, seq: o.segment! })), false);
      const bySegment = new Map(found.map((segment) => [`${segment.stream}\u0000${segment.seq}`, segment]));
      for (const o of chunk) if (!consider(bySegment.get(`${o.stream}\u0000${o.segment}`), o.first)) lookUp.push(o);
    });
    await mapBounded(lookUp, PARTITION_CALLS_IN_FLIGHT, async ({ stream, first }) => {
      consider(await this.stores.log.segmentContaining(stream, first, false), first);
    });
    return {
      backlog: this.backlog,
      inFlight: this.inFlight,
      pending: this.pending,
      oldestMessageAgeSeconds: oldest === undefined ? 0 : Math.max(0, Math.floor((now - oldest) / 1000)),
      committed: this.committed,
    };
  }
}
