/**
 * Receive: find streams with work for a group, plan claims by delivery mode,
 * write each plan with one conditional cursor update (docs/design.md, Receive).
 */
import { ThrottledError } from '../domain/errors.js';
import { jsonBytes, type AnswerBudget } from '../domain/answer-budget.js';
import { planClaims, type ClaimMode, type Delivery, type Verdict } from '../domain/claims.js';
import { holeRecheckMs } from '../domain/gaps.js';
import {
  MAX_IN_FLIGHT_PER_STREAM,
  RANGE_MAX_MESSAGES,
  cursorExpired,
  expiredLeases,
  leasesInOrder,
  completionEpoch,
  rangeToken,
  rangesOf,
  tagMatches,
  type CursorState,
  type DoneEntry,
  type Lease,
} from '../domain/cursor.js';
import { retryDelayMs } from '../domain/retry-policy.js';
import { normaliseRange } from './range-normaliser.js';
import { spillOnItsOwn } from './spill-on-its-own.js';
import { GRANT_SPILLS_AT, historyTtl, planSpill } from '../domain/history.js';
import type { MessageIdCodec } from '../domain/message-ids.js';
import { DeadLetterProperty, type DeadLetterReason } from '../domain/dead-letter.js';
import { Limits, iso, isPurged, messageContent, type DeliveredMessage, type Group, type MessageRecord, type Topic } from '../domain/model.js';
import {
  isRedriveStream,
  isSequencedStream,
  isShardStream,
  isWideFifo,
  namespaceOf,
  noticeStreamCount,
  redriveStream,
  shardStreamId,
  streamId,
  streamNamespace,
  type StreamLocal,
} from '../domain/streams.js';
import type { NoticeSegment } from '../adapters/dynamodb/stream-log.js';
import { claimFits, type ClaimChange } from '../adapters/dynamodb/cursor-updates.js';
import { completionKeys } from '../adapters/dynamodb/cursor-item.js';
import type { GrantOutcome } from '../adapters/dynamodb/cursors.js';
import { readyBucketCount, readyBucketPk, readyBucketPks, readyNowKey } from '../adapters/dynamodb/keys.js';
import { readyKeyChange } from '../adapters/dynamodb/ready-index.js';
import { ItemConditionFailedError, WriteBatch } from '../adapters/dynamodb/write-batch.js';
import type { Clock } from '../ports/clock.js';
import type { Random } from '../ports/random.js';
import type { Notifier } from '../ports/notifier.js';
import type { CarriedCommit, CarriedCommits } from './carried-commits.js';
import { ensureDeadLetterTopic } from './lookups.js';
import { firstAtOrAfter } from './stream-search.js';
import { missingCursorStart } from './missing-cursor-start.js';
import { endOf, reusableRead, type StreamRead } from './reusable-read.js';
import { readExpiredLeaseRecords } from './expired-lease-records.js';
import { PartitionSampler, type PartitionLook } from './partition-sampler.js';
import { shuffle } from '../domain/shuffle.js';
import { Contention, type ContendedAppend } from '../adapters/dynamodb/append-contention.js';
import { realStopwatch } from '../ports/stopwatch.js';
import type { Stores } from './stores.js';

/** What one receive call may take: the group's subscriptions, narrowed by the request's `topics`. */
export interface ReceiveScope {
  group: Group;
  /** Live subscribed topics by name. */
  topics: Map<string, Topic>;
  /** The topics this receive asked for. */
  requested: Set<string>;
  visibilityMs: number;
  /** Called when a protected stream's oldest lease is a pending commit (completes the chain). */
  cascade: (group: Group, stream: string) => Promise<void>;
  /** No new claim starts after this time (ms): the request must answer before its own timeout. */
  deadline: number;
  /** Room left in the answer: each message's JSON is taken from it before the message is leased. */
  budget: AnswerBudget;
  /**
   * Commits the receive carries: those of a standard partition this receive claims from join that
   * stream's claim update (claimed from first); every other one is committed on its own first.
   * All are written when `receiveOnce` returns.
   */
  carried?: CarriedCommits;
  /**
   * Told when a claim on a sequenced shard stopped below a hole its writer may still fill
   * (docs/design.md, Sequenced FIFO topics): nothing appends when the hole is filled, so the caller
   * looks again then — a long poll wakes (`Notifier.wakeAt`), a push drain sends a job for it.
   */
  held?: (topic: string, until: number) => void;
  /**
   * A short receive (no wait, no park): on a group's ready-index buckets beyond 16 it reads a sample
   * in its second wave, as an SQS short poll samples its servers (docs/design.md, "Short receives
   * sample the buckets"); long-poll looks, parking receives and push claims read every bucket.
   */
  sample?: boolean;
  /**
   * A waiting receive (a long-poll look, a parking receive): a wide group's ready index that was
   * quiet at this container's last thorough read and has had nothing written since (its horizon)
   * is not read again (docs/design.md, Ready index, "The horizon").
   */
  waiting?: boolean;
  /**
   * Partition or notice streams the caller heard news on (a push job's stream): sampled first, as
   * named streams (partition-sampler.ts), so a topic of more than 8 of them reads them this look.
   */
  heard?: readonly string[];
}

/** How many FIFO shards one receive claims from at once. */
const CLAIM_WAVE = 4;
/**
 * Ready shards one receive reads from the ready index: several per message
 * wanted (a shard may turn out to have nothing claimable, or be taken by a
 * concurrent receiver), and never fewer than a small page.
 */
const READY_READ_PER_MESSAGE = 4;
const READY_READ_MIN = 20;
/** How often a receive of wide FIFO topics only reads the group's home key with its first wave (else only with a second). */
const HOME_IN_FIRST_WAVE = 1 / 8;
/** Notice segments one receive reads per notice stream (the rest wait for the next receive). */
const NOTICE_SEGMENTS_PER_RECEIVE = 25;
/**
 * Shards one receive absorbs notices of, over all the notice streams of every FIFO namespace it
 * reads (the rest wait for the next receive): each is a raise — a cursor write, and for a new shard cursor
 * the reads that place its start — so a receive stays O(batch) however many shards a send's one
 * notice segment names.
 */
export const NOTICE_SHARDS_PER_RECEIVE = 100;
/**
 * Notices a group's notice cursor may stay behind what this container absorbed (see
 * {@link NoticeMemo}): the cursor's `advance` is written once the gap reaches this many, not
 * after every receive with news. Also what another container reads again, once, at most.
 */
const NOTICE_LAG_MAX = 8;
/** Notice memos one container keeps (groups × notice streams read: 4 a namespace, up to 256 a wide FIFO topic); the oldest is forgotten past this. */
const NOTICE_MEMOS_MAX = 4096;
/**
 * How long a container writes a notice stream's cursor at every receive with news (as without the
 * lag) after it met notices another receive had absorbed: the group is read by several containers.
 */
const NOTICE_SHARED_MS = 60_000;
/**
 * Segments a new shard cursor's start is walked back for below its first notice (see `shardStart`);
 * past them, a binary search.
 */
const SHARD_START_WALK_SEGMENTS = 4;
/** Plans of one claim: each lost race (the cursor changed) reads the cursor and plans again. */
const CLAIM_ATTEMPTS = 3;
/** Shards whose grant state one container remembers (see {@link ShardGrants}); the least recently granted is forgotten past this. */
const GRANT_SHARDS_REMEMBERED = 1024;
/** Rounds of writing expired ranges out that one claim makes before it leaves the shard to the next receive. */
const RANGE_ROUNDS = 2;
/**
 * How far past `nx` as read a range may start (grants of others between the grant's read and its
 * write): the records it can meet are read before it (`grantClaim`), a condition of the grant.
 */
const RANGE_AHEAD = 4 * RANGE_MAX_MESSAGES;
/**
 * The reach of a container whose last grant on the shard failed because more than RANGE_AHEAD was
 * granted between its read and its write (`ShardGrants.reach`): a window of RANGE_AHEAD_WIDE + n numbers,
 * read only while the last window's records were small enough that it stays within
 * WIDE_WINDOW_BYTES (one Query page; the receive's memory).
 */
const RANGE_AHEAD_WIDE = 9 * RANGE_MAX_MESSAGES;
const WIDE_WINDOW_BYTES = 1024 * 1024;
/** A failed grant's pause on its shard: full jitter in [0, slot × 2^(failures in a row − 1)], at most this many doublings. */
const GRANT_PAUSE_SLOT_MS = 20;
const GRANT_PAUSE_LEVELS = 5;
/** A range member's receipt handle may be a few characters longer than the one its room was measured with. */
const RANGE_HANDLE_SLACK_BYTES = 32;
/**
 * Bytes a message's JSON may still grow by after its plan admitted it: the plan marks some
 * tokens afterwards (a readiness hint, a few characters of the receipt handle). Plus its comma.
 */
const ANSWER_SLACK_BYTES = 16;
/** The name of the lease close written with a dead-letter append (write-batch.ts). */
const DEAD_LETTER_CLOSE = 'cursor';

export class Receiver {
  /** Which partitions of a standard topic a receive looks at, in which order (partition-sampler.ts). */
  private readonly sampler: PartitionSampler;
  /** Per group and notice stream: how far this container absorbed the notices (see {@link NoticeMemo}). */
  private readonly noticeMemos = new Map<string, NoticeMemo>();
  /** Per group and notice stream: until when its cursor moves at every receive (another container reads it too). */
  private readonly noticeSharedUntil = new Map<string, number>();
  /**
   * Per group and shard: the highest known head this container wrote (a raise, or a claim's `kn`). A
   * notice whose shard knew as much is evidence of another container only above it: below, this
   * container raised past it itself, from a later notice on another notice stream.
   */
  private readonly ownKnown = new Map<string, number>();
  /** `<group>\u0000<stream>` → what this container's grants there remember ({@link ShardGrants}). */
  private readonly shardGrants = new Map<string, ShardGrants>();

  constructor(
    private readonly stores: Stores,
    private readonly clock: Clock,
    private readonly random: Random,
    private readonly notifier: Notifier,
    /**
     * Lost claim races on FIFO shard cursors, per group and shard (docs/design.md, "Lost claims on a
     * hot shard"): full jitter, as lost appends (append-contention.ts), but a claim still makes at most
     * {@link CLAIM_ATTEMPTS} tries.
     */
    private readonly claimContention: Contention = new Contention(realStopwatch, () => random.fraction()),
    /** Range claims on hot FIFO shards (docs/design.md, Range claims); off only in tests of the ordinary path. */
    private readonly rangeClaims = true,
  ) {
    this.sampler = new PartitionSampler(clock, random, notifier);
  }

  async receiveOnce(scope: ReceiveScope, max: number): Promise<DeliveredMessage[]> {
    const { group, topics, requested, carried } = scope;
    const carriedStreams = carried?.streams() ?? [];
    const heard = scope.heard ?? [];
    const namespaces = new Set<string>();
    const looks: Array<{ topic: Topic; look: PartitionLook }> = [];
    try {
      for (const topic of topics.values()) {
        if (!requested.has(topic.name)) continue;
        if (topic.type === 'fifo') namespaces.add(streamNamespace(topic));
        // O(batch): at most 8 partitions per topic, rotating over looks (partition-sampler.ts).
        // Streams with carried commits are sampled first, so their claims can fold the commits.
        else looks.push({ topic, look: this.sampler.look(group.name, topic, [...carriedStreams, ...heard]) });
      }
      return await this.receiveLooking(scope, max, carriedStreams, namespaces, looks);
    } finally {
      for (const { look } of looks) look.done();
    }
  }

  private async receiveLooking(
    scope: ReceiveScope,
    max: number,
    carriedStreams: string[],
    namespaces: Set<string>,
    looks: Array<{ topic: Topic; look: PartitionLook }>,
  ): Promise<DeliveredMessage[]> {
    const { group, requested, carried } = scope;
    const out: DeliveredMessage[] = [];
    // Claim order: each topic's lead (named, fair or hinted partitions: partition-sampler.ts), then each
    // topic's rotation, topics from a random one, so that no topic always comes last. One topic: the
    // sampler's order as it is. The redrive stream counts as a topic whose lead it is (a busy hinted
    // partition must not keep it waiting: it is first of the leads with a chance of 1 in topics + 1).
    const sampled = new Map<string, Topic>();
    const units: Array<{ lead: string[]; rest: string[] }> = looks.map(({ topic, look }) => {
      for (const stream of look.streams) sampled.set(stream, topic);
      return { lead: look.streams.slice(0, look.lead), rest: look.streams.slice(look.lead) };
    });
    // The group's redrive stream, only while a redrive may have left something there (a hint on
    // the group item: no read at all otherwise), and only for a receive of all its topics.
    const redrive = redriveStreamToRead(group, requested, this.clock.now());
    if (redrive !== undefined) units.push({ lead: [redrive], rest: [] });
    const offset = units.length > 1 ? Math.floor(this.random.fraction() * units.length) : 0;
    const ordered = [...units.slice(offset), ...units.slice(0, offset)];
    const partitions = [...ordered.flatMap((u) => u.lead), ...ordered.flatMap((u) => u.rest)];
    const folding = new Set(carried ? partitions.filter((p) => carried.of(p).length > 0) : []);
    // FIFO shards of the namespaces asked for: their carried commits fold into the shard's claim too
    // (not in protected mode, whose commits complete in sequence through the committer).
    const foldingShards =
      group.deliveryMode === 'protected' ? [] : carriedStreams.filter((s) => isShardStream(s) && namespaces.has(namespaceOf(s)));
    for (const stream of foldingShards) folding.add(stream);
    // FIFO: the notice streams this receive reads, per namespace — all of them up to 8, else a sample
    // of 8 (partition-sampler.ts, as a standard topic's partitions), so a receive stays O(batch).
    const noticeSample = new Map<string, Set<string>>();
    const noticeTopics = new Map<string, Topic>();
    // Wide FIFO topics' shards are on the group's ready-index buckets, not under R#<group>
    // (docs/design.md, Ready index): a receive asking for one reads its buckets (16–64, by its notice
    // streams), whatever it samples. Per namespace: how many.
    const wideNamespaces = new Map<string, number>();
    // Sequenced FIFO topics' shard streams are `…/q:<key>` (docs/design.md, Sequenced FIFO topics).
    const sequencedNamespaces = new Set<string>();
    for (const topic of scope.topics.values()) {
      if (!requested.has(topic.name) || topic.type !== 'fifo') continue;
      const namespace = streamNamespace(topic);
      const streams = noticeSample.get(namespace) ?? new Set<string>();
      for (const stream of this.sampler.sample(group.name, topic, scope.heard ?? [])) {
        streams.add(stream);
        noticeTopics.set(stream, topic);
      }
      noticeSample.set(namespace, streams);
      if (isWideFifo(topic)) wideNamespaces.set(namespace, readyBucketCount(noticeStreamCount(topic)));
      if (topic.sequenced === true) sequencedNamespaces.add(namespace);
    }
    const noticeStreams = [...noticeSample.values()].flatMap((streams) => [...streams]);
    // Only the cursors this receive starts from: O(subscriptions), never O(shards). Partition cursors
    // are read eventually consistently (half price), or come from this container's cursor cache while
    // fresh (no read): a stale one only makes its conditional claim fail and read again. Notice
    // cursors consistently: a stale one would re-absorb notices (writes).
    // (Read eventually consistently, shard-expiry.test.ts's 2,000-shard test lost shard cursors.)
    // Carried commits of streams this receive does not claim from are written first, as plain commits.
    const [noticeCursors, partitionCursors] = await Promise.all([
      noticeStreams.length ? this.stores.cursors.getMany(group.name, noticeStreams, { now: this.clock.now() }) : new Map<string, CursorState>(),
      partitions.length
        ? this.stores.cursors.getMany(group.name, partitions, { consistent: false, now: this.clock.now(), cached: group.createdAt })
        : new Map<string, CursorState>(),
      carried?.separateAll((stream) => folding.has(stream)),
    ]);
    const cursors = new Map([...noticeCursors, ...partitionCursors]);

    // FIFO: read the notices of the namespaces asked for, then claim from the announced shards and
    // the ready index's shards together, in random order so that concurrent receivers spread over
    // them. A claim on an announced shard raises its known head in the same write (one update of
    // the shard cursor instead of a raise and a claim, and the ready-index key written once); every
    // announced shard no claim wrote is raised on its own before a notice cursor moves past it.
    if (namespaces.size > 0) {
      // The shards this receive absorbs notices of, over every namespace it reads (one raise each).
      const taken = new Set<string>();
      const reads = await Promise.all(
        [...noticeSample].map(([namespace, streams]) =>
          this.readNotices(group, namespace, [...streams], cursors, fromEarliest(scope, namespace), { buckets: wideNamespaces.get(namespace), sequenced: sequencedNamespaces.has(namespace) }, taken),
        ),
      );
      const absorbed = reads.flatMap((read) => read.absorbed);
      // Notice streams with news lead this container's next samples of a wide FIFO topic.
      for (const bucket of absorbed) {
        const topic = noticeTopics.get(bucket.stream);
        if (topic) this.sampler.found(group.name, topic, bucket.stream);
      }
      // One raise per shard, whichever notice streams announced it (a send's notices go to any of them).
      const announced = leadRaises(absorbed);
      const looks = Math.max(READY_READ_MIN, max * READY_READ_PER_MESSAGE);
      // The home key, and the buckets of the widest wide topic asked for (their keys are the same for
      // every topic of the group: `R#<group>#<b>`), in two waves (ready-index.ts): 1 Query, or 3 and
      // 14–62 more when the first wave offers too few shards, whatever the subscriptions.
      const buckets = Math.max(0, ...wideNamespaces.values());
      // A receive of wide topics only reads the home key with the first wave 1 time in 8 (else with the
      // second, when there is one): no key is read by every receive of the group (docs/design.md, "No
      // key every receive reads").
      // A shard of a topic this receive asked for (the group's keys hold its other topics' shards too).
      const asked = (stream: string) => namespaces.has(namespaceOf(stream));
      const wideOnly = buckets > 0 && [...namespaces].every((namespace) => wideNamespaces.has(namespace));
      const homeFirst = !wideOnly || this.random.fraction() < HOME_IN_FIRST_WAVE;
      const found = await this.stores.readyIndex.readyAcross(group.name, buckets > 0 ? readyBucketPks(group.name, buckets) : [], this.clock.now(), looks, {
        spread: () => this.random.fraction(),
        homeFirst,
        sample: scope.sample === true,
        rest: scope.waiting === true,
        wanted: asked,
      });
      for (const stream of found) {
        const shard = announced.get(stream);
        if (shard) shard.indexed = true;
      }
      const ready = found.filter((stream) => asked(stream) && !announced.has(stream) && !folding.has(stream));
      // O(batch): as many shards as the ready index is read for; announced shards left out are raised on their own.
      // Shards with carried commits lead (their claims write the commits) but share each wave's room like
      // any other, so a busy shard a consumer keeps committing does not crowd out the others.
      const others = shuffle([...announced.keys()].filter((s) => !folding.has(s)).concat(ready), () => this.random.fraction());
      const candidates = [...foldingShards, ...others.slice(0, looks)];
      // Shards are claimed a few at a time, the request's room split between them, so that
      // one receive never leases more than it returns and a busy store costs latency, not time-outs.
      for (let i = 0; i < candidates.length && out.length < max && this.clock.now() < scope.deadline; ) {
        const room = max - out.length;
        const wave = candidates.slice(i, i + Math.min(CLAIM_WAVE, room));
        i += wave.length;
        const shares = wave.map((_, k) => Math.floor(room / wave.length) + (k < room % wave.length ? 1 : 0));
        const claimed = await Promise.all(
          wave.map((stream, k) => this.claim(scope, stream, group.deliveryMode, undefined, shares[k] ?? 1, announced.get(stream))),
        );
        for (const messages of claimed) out.push(...messages);
      }
      await Promise.all(absorbed.map((bucket) => this.finishNotices(group, bucket)));
      // Notice streams the shard budget cut (or the segments read did not reach the end of) lead this
      // container's next samples, marked now: a receive that raised and claimed 100 new shards can
      // outlast the productive window, and a cut stream would otherwise wait for the rotation.
      for (const stream of reads.flatMap((read) => read.left)) {
        const topic = noticeTopics.get(stream);
        if (topic) this.sampler.found(group.name, topic, stream);
      }
    }

    // Streams with carried commits first (their claims write the commits, with no room left too),
    // then every other partition stream in the order above.
    for (const stream of folding) {
      if (this.clock.now() >= scope.deadline) break;
      if (isShardStream(stream)) continue;
      const got = await this.claim(scope, stream, 'unordered', cursors.get(stream), max - out.length);
      const topic = sampled.get(stream);
      if (got.length > 0 && topic) this.sampler.found(group.name, topic, stream);
      out.push(...got);
    }
    for (const stream of partitions.filter((p) => !folding.has(p))) {
      if (out.length >= max || this.clock.now() >= scope.deadline) break;
      const got = await this.claim(scope, stream, 'unordered', cursors.get(stream), max - out.length);
      const topic = sampled.get(stream);
      if (got.length > 0 && topic) this.sampler.found(group.name, topic, stream);
      out.push(...got);
    }
    // Whatever a claim could not take (lost races, no time left) is committed on its own.
    await carried?.separateAll();
    return out;
  }

  /**
   * Reads the notices of a FIFO namespace that this group has not seen yet in `streams` (its notice
   * streams this receive looks at; every notice stream with news: where its cursor moves to, and
   * one raise per announced shard, within the receive's shard budget `taken`). Nothing is written
   * here but a missing notice cursor; re-reading a notice is harmless.
   */
  private async readNotices(
    group: Group,
    namespace: string,
    streams: readonly string[],
    cursors: Map<string, CursorState>,
    earliest: boolean,
    shape: NamespaceShape,
    taken: Set<string>,
  ): Promise<{ absorbed: AbsorbedNotices[]; left: string[] }> {
    const now = this.clock.now();
    const reads = (await Promise.all(streams.map((stream) => this.readBucket(group, stream, cursors, now)))).filter((r): r is BucketRead => r !== undefined);
    // A send's notices are one segment, whatever its shard keys (up to a batch's 100), so what the
    // streams read announce is bounded by segments, not shards: a receive absorbs notices of at most
    // NOTICE_SHARDS_PER_RECEIVE shards (`taken`: shared by every namespace the receive reads: O(batch)
    // raises; the rest on the next receives), starting at a random one of the streams read so that
    // every stream moves on.
    const offset = reads.length > 1 ? Math.floor(this.random.fraction() * reads.length) : 0;
    const absorbed: AbsorbedNotices[] = [];
    // Streams with notices this receive did not absorb: cut by the budget, or read only in part.
    const left: string[] = [];
    for (const read of [...reads.slice(offset), ...reads.slice(0, offset)]) {
      const bucket = this.absorb(group, namespace, read, taken, earliest, shape);
      if (bucket) absorbed.push(bucket);
      const last = read.segments.at(-1);
      const readTo = last ? last.seq + last.count : 0;
      if (read.segments.length >= NOTICE_SEGMENTS_PER_RECEIVE || readTo > (bucket?.next ?? read.start.next)) left.push(read.stream);
    }
    return { absorbed, left };
  }

  /** Reads a notice stream from where this group (or this container: its memo) absorbed it. */
  private async readBucket(group: Group, stream: string, cursors: Map<string, CursorState>, now: number): Promise<BucketRead | undefined> {
    const cursor = cursors.get(stream);
    if (!cursor) {
      // A subscription creates its notice cursors, so a group without one on this stream was subscribed
      // before the stream existed (its topic was deleted and created again with more notice streams):
      // it starts at the stream's first retained notice (missingCursorStart).
      await this.stores.cursors.createIfAbsent(group.name, stream, await missingCursorStart(this.stores.log, stream, []), now);
      return undefined;
    }
    // Notices this container absorbed after the cursor's position are not read again (see NoticeMemo).
    const start = this.noticeMemo(group.name, cursor) ?? cursor;
    const segments = await this.stores.log.readNotices(stream, start.segmentStart, NOTICE_SEGMENTS_PER_RECEIVE);
    return { stream, cursor, start, segments };
  }

  /**
   * The notices of one stream read that this receive absorbs: in order, up to the first notice of a
   * shard past the receive's budget (`taken`: the shards absorbed so far, over every stream and
   * namespace the receive read; a shard announced on several streams counts once), with one raise per
   * shard announced.
   */
  private absorb(group: Group, namespace: string, read: BucketRead, taken: Set<string>, earliest: boolean, { buckets, sequenced }: NamespaceShape): AbsorbedNotices | undefined {
    const { stream, cursor, start, segments } = read;
    const shards = new Map<string, { from: number; to: number; epoch?: number }>();
    let next = start.next;
    let segmentStart = start.segmentStart;
    let full = false;
    for (const segment of segments) {
      const end = segment.seq + segment.count;
      if (end <= next) continue;
      if (segment.seq > next) next = segment.seq;
      for (const notice of segment.notices.slice(next - segment.seq)) {
        const shard = shardStreamId(namespace, notice.shardKey, sequenced);
        if (!taken.has(shard)) {
          if (taken.size >= NOTICE_SHARDS_PER_RECEIVE) {
            full = true;
            break;
          }
          taken.add(shard);
        }
        const known = shards.get(notice.shardKey);
        // The latest epoch start announced (statistics count a shard's backlog from it).
        const epoch = notice.epoch ? Math.max(known?.epoch ?? 0, notice.from) : known?.epoch;
        shards.set(notice.shardKey, {
          from: Math.min(known?.from ?? notice.from, notice.from),
          to: Math.max(known?.to ?? 0, notice.to),
          ...(epoch === undefined ? {} : { epoch }),
        });
        next++;
      }
      if (full) {
        // Stopped inside this segment: the next read starts at it again and passes what was absorbed.
        segmentStart = segment.seq;
        break;
      }
      next = end;
      segmentStart = end;
    }
    if (next === start.next) return undefined;
    // After a seek, new shard cursors start where the seek put the namespace (the notice cursor says
    // where), and are created only while no later seek moved it (else the notices are read again).
    const sought = cursor.seek;
    const starts = (shard: string, from: number, to: number) =>
      sought !== undefined
        ? this.startAtOrAfter(shard, from, to, sought.floor)
        : earliest
          ? this.firstRetained(shard, from)
          : this.shardStart(shard, from, Math.max(group.createdAt, cursor.createdAt ?? 0));
    const raises = [...shards].map(([shardKey, range]): AnnouncedShard => {
      const shard = shardStreamId(namespace, shardKey, sequenced);
      const readyPk = buckets === undefined ? undefined : readyBucketPk(group.name, shard, buckets);
      return announcedShard(shard, range, readyPk, (from, to, epoch) =>
        this.stores.cursors.raiseKnown(
          group.name,
          shard,
          () => starts(shard, from, to),
          to,
          this.clock.now(),
          { noticeStream: stream, version: sought?.version },
          epoch,
          readyPk,
        ),
      );
    });
    return { stream, cursor, next, segmentStart, raises };
  }

  /**
   * Raises every announced shard of a notice stream that no claim of this receive raised; only when
   * all of them took effect (a seek that raced a new cursor's creation leaves the notices to be read
   * again) are the notices read absorbed: this container remembers it, and the group's notice cursor
   * moves past them once it lags {@link NOTICE_LAG_MAX} notices behind, or at once when this receive
   * met a notice another receive had absorbed already (another container reads this group too).
   */
  private async finishNotices(group: Group, bucket: AbsorbedNotices): Promise<void> {
    const raised = await Promise.all(bucket.raises.map(async (raise) => (raise.applied ? ('claimed' as const) : await raise.apply())));
    // Raised on its own just now (a claim that raised noted it itself).
    bucket.raises.forEach((raise, i) => raised[i] === true && this.noteKnown(group, raise.stream, raise.to));
    if (!raised.every(Boolean)) return;
    const now = this.clock.now();
    // Notices absorbed before by another receive: this group is read by more than one container, whose
    // memos would make each read the others' notices again. The cursor moves at every receive a while.
    // (Not when this container raised the shard that far itself, from another notice stream.)
    const absorbedElsewhere = bucket.raises.some((raise, i) => (raised[i] === 'known' || raise.known) && this.ownKnownOf(group, raise.stream) < raise.to);
    if (absorbedElsewhere) {
      const key = noticeMemoKey(group.name, bucket.stream);
      this.noticeSharedUntil.delete(key);
      const oldest = this.noticeSharedUntil.keys().next();
      if (this.noticeSharedUntil.size >= NOTICE_MEMOS_MAX && !oldest.done) this.noticeSharedUntil.delete(oldest.value);
      this.noticeSharedUntil.set(key, now + NOTICE_SHARED_MS);
    }
    this.rememberNotices(group.name, bucket);
    const shared = (this.noticeSharedUntil.get(noticeMemoKey(group.name, bucket.stream)) ?? 0) > now;
    if (shared || bucket.next - bucket.cursor.next >= NOTICE_LAG_MAX) {
      await this.stores.cursors.advance(group.name, bucket.stream, bucket.cursor.next, bucket.next, bucket.segmentStart);
    }
  }

  /**
   * Where this container absorbed a notice stream up to, when that is ahead of the group's notice
   * cursor as read and still about the same cursor: created at the same time (not a group deleted
   * and made again) and moved by no seek since (the same `sv`). Undefined otherwise.
   */
  private noticeMemo(group: string, cursor: CursorState): NoticeMemo | undefined {
    const memo = this.noticeMemos.get(noticeMemoKey(group, cursor.stream));
    if (!memo) return undefined;
    const same = memo.createdAt === cursor.createdAt && memo.version === cursor.seek?.version && memo.next > cursor.next;
    if (!same) this.noticeMemos.delete(noticeMemoKey(group, cursor.stream));
    return same ? memo : undefined;
  }

  /** Notes the known head this container wrote on a shard cursor (see {@link ownKnown}). */
  private noteKnown(group: Group, shard: string, known: number): void {
    const key = ownKnownKey(group, shard);
    const before = this.ownKnown.get(key) ?? 0;
    this.ownKnown.delete(key);
    const oldest = this.ownKnown.keys().next();
    if (this.ownKnown.size >= NOTICE_MEMOS_MAX && !oldest.done) this.ownKnown.delete(oldest.value);
    this.ownKnown.set(key, Math.max(before, known));
  }

  /** The known head this container wrote on a shard cursor of this incarnation of the group (0: none noted). */
  private ownKnownOf(group: Group, shard: string): number {
    return this.ownKnown.get(ownKnownKey(group, shard)) ?? 0;
  }

  private rememberNotices(group: string, bucket: AbsorbedNotices): void {
    const key = noticeMemoKey(group, bucket.stream);
    this.noticeMemos.delete(key);
    const oldest = this.noticeMemos.keys().next();
    if (this.noticeMemos.size >= NOTICE_MEMOS_MAX && !oldest.done) this.noticeMemos.delete(oldest.value);
    this.noticeMemos.set(key, {
      createdAt: bucket.cursor.createdAt,
      version: bucket.cursor.seek?.version,
      next: bucket.next,
      segmentStart: bucket.segmentStart,
    });
  }

  /**
   * Where a new shard cursor starts after a seek: at the first message deliverable at or after
   * `floor` (0: the first retained one), looked for among the shard's stored messages up to the
   * notice's last (`to`); past `to` when none is (binary search, bounded).
   */
  private async startAtOrAfter(stream: string, from: number, to: number, floor: number): Promise<number> {
    const first = await this.stores.log.first(stream);
    if (!first) return from;
    if (floor === 0) return Math.min(first.seq, from);
    return (await firstAtOrAfter(this.stores.log, stream, Math.min(first.seq, from), to + 1, floor)).next;
  }

  /**
   * Where a group's new shard cursor starts: at the first message the notice
   * read first announces, or lower when messages that became deliverable after
   * the group subscribed (`since`: the later of the group's creation and its
   * notice cursor's, which a subscription added later creates) precede it.
   * Notices land out of sequence order (a shard's notices go to any notice
   * stream, read in any order; a send that died before its notice and was
   * retried later), and starting at `from` would skip those messages for good.
   * Reads back 4 segments, then binary-searches (bounded).
   */
  private async shardStart(stream: string, from: number, since: number): Promise<number> {
    let start = from;
    for (let i = 0; i < SHARD_START_WALK_SEGMENTS && start > 1; i++) {
      // A sequenced shard: a hole just below may still take a message sent after the group
      // subscribed (its writer granted before a later one landed): start under it; the claim
      // settles it (docs/design.md, Sequenced FIFO topics).
      start = (await this.stores.log.liveGapBelow(stream, start)) ?? start;
      const segment = await this.stores.log.segmentContaining(stream, start - 1);
      if (!segment) {
        // A sequenced shard: a hole liveGapBelow found nothing can still land in (a dead grant no
        // reader filled, past its bounds) holds no message, as a filler: the walk goes on below it.
        const below = isSequencedStream(stream) ? await this.stores.log.segmentAtOrBelow(stream, start - 1) : undefined;
        if (!below?.granted) return start;
        start = below.seq + below.count;
        continue;
      }
      if (segment.granted?.filler) {
        // A filled hole holds no message: the walk goes on below it.
        start = segment.seq;
        continue;
      }
      for (let seq = start - 1; seq >= segment.seq; seq--) {
        const record = segment.records[seq - segment.seq];
        // Deliverable in the very millisecond the group subscribed counts as before it (as `from` would).
        if (!record || record.deliverableAt <= since) return start;
        start = seq;
      }
    }
    if (start <= 1) return start;
    // Still after the group's creation that far back: the notice read first came long after the
    // shard's first one (it was on another notice stream, read later). Binary search the rest (bounded).
    const first = await this.stores.log.first(stream);
    if (!first || first.seq >= start) return start;
    return (await firstAtOrAfter(this.stores.log, stream, first.seq, start, since + 1)).next;
  }

  /**
   * Where a new shard cursor of an `earliest` subscription starts: at the
   * shard's first stored message (never above `from`), so the group gets the
   * shard's retained history in order. Expired records and records of a dead
   * generation are passed over by the claim, as anywhere in a stream.
   */
  private async firstRetained(stream: string, from: number): Promise<number> {
    const first = await this.stores.log.first(stream);
    return first ? Math.min(first.seq, from) : from;
  }

  /**
   * Plans and writes one claim on one stream; retries when another receiver got there first. With
   * `announced` (a FIFO shard a notice of this receive announced), the claim also raises the shard's
   * known head in its one write and marks the raise applied once a write or the cursor read shows it.
   * Lost claims on a shard cursor wait full-jitter turns (docs/design.md, "Lost claims on a hot shard").
   */
  private async claim(
    scope: ReceiveScope,
    stream: string,
    mode: ClaimMode,
    hint: CursorState | undefined,
    want: number,
    announced?: AnnouncedShard,
  ): Promise<DeliveredMessage[]> {
    const contended = isShardStream(stream) ? this.claimContention.begin([`${scope.group.name}\u0000${stream}`]) : undefined;
    try {
      return await this.claimTries(scope, stream, mode, hint, want, announced, contended);
    } finally {
      // A claim that lost and then found nothing left to write (or threw) hands its level on too.
      contended?.settle();
    }
  }

  /** {@link claim}'s tries; `contended`: the shard cursor's lost races (undefined: not a shard). */
  private async claimTries(
    scope: ReceiveScope,
    stream: string,
    mode: ClaimMode,
    hint: CursorState | undefined,
    want: number,
    announced: AnnouncedShard | undefined,
    contended: ContendedAppend | undefined,
  ): Promise<DeliveredMessage[]> {
    const { group } = scope;
    const ids = await this.stores.ids.codec();
    // FIFO shard cursors (but in protected mode, whose claims cascade pending commits first) come from
    // this container's cursor cache while fresh, as partition cursors do (docs/design.md, the cursor
    // cache): a steady consumer of a shard then claims with one write and no read.
    const cachedShard = isShardStream(stream) && mode !== 'protected';
    let cursor = hint ?? (cachedShard ? this.stores.cursors.remembered(group.name, stream, group.createdAt) : undefined);
    let stale = cursor !== undefined;
    // Planned from a cache entry (not yet read, nor returned by a failed claim): a plan that writes
    // nothing may only mean the entry missed another container's raise, commit or release.
    let remembered = hint === undefined && cursor !== undefined;
    // What the last attempt read of the stream: a claim lost to another receiver plans again from it
    // when it still covers the cursor the lost write returned (reusableRead).
    let lastRead: StreamRead | undefined;
    // A read sized by the stream's fill that the plan went through and fell short on is read again
    // with the full limit, once (segment-fill.ts: positions are not deliveries).
    let sized = true;
    // On a shard this container lost claims on lately, the first write waits its turn too (then the
    // claim is planned again, as of then) — only a write: a claim with nothing to write answers at once.
    let turnOwed = contended?.contended ?? false;
    // Expired ranges written out (at most this many rounds a claim).
    let rangeRounds = 0;
    // A grant's read found a gap or no room in the answer: this claim takes no range.
    let noRange = false;
    // No turn runs past the receive's deadline.
    const turn = () => contended?.turn(true, scope.deadline - this.clock.now());
    for (let attempt = 0; attempt < CLAIM_ATTEMPTS; attempt++) {
      const now = this.clock.now();
      if (cursor === undefined) {
        cursor = await this.stores.cursors.get(group.name, stream, now);
        remembered = false;
      }
      if (!cursor) {
        // A new shard (or one whose cursor expired): the notice's raise creates its cursor, then claim.
        const created = isShardStream(stream) && announced && !announced.applied ? await announced.apply() : false;
        if (announced && created) {
          if (created === true) this.noteKnown(group, stream, announced.to);
          announced.applied = true;
          continue;
        }
        if (isShardStream(stream)) return [];
        // Subscriptions and raises create partition cursors; a group without one was subscribed before
        // its topic was deleted and created again with more partitions: it starts where the new
        // generation starts there (missingCursorStart).
        await this.stores.cursors.createIfAbsent(group.name, stream, await missingCursorStart(this.stores.log, stream, scope.topics.values()), now);
        cursor = undefined;
        continue;
      }
      if (mode === 'protected' && leasesInOrder(cursor)[0]?.pending) {
        await scope.cascade(group, stream);
        cursor = undefined;
        continue;
      }
      // Carried commits whose leases the cursor shows as ours fold into this claim; the others
      // (repeats, stale handles) are committed on their own, which classifies them.
      const held = cursor;
      // A notice raise this claim writes: only while the cursor (read consistently) knows less than it announced.
      const raise = announced && !announced.applied && (held.known ?? 0) < announced.to ? announced : undefined;
      const carried = scope.carried?.of(stream) ?? [];
      // An epoch's start the cursor does not know (its first notice read after a later one, on another
      // notice stream): the raise on its own notes it (finishNotices), whatever this claim does.
      const epochUnknown = announced?.epoch !== undefined && (held.epochStart ?? 0) < announced.epoch;
      if (announced && !raise) {
        // Announced before (a notice read again): the ready index covers the shard. With no entry due
        // by now it has nothing claimable (the ready-index invariant): no segment read, no claim.
        if (carried.length === 0 && (held.readyAt === undefined || held.readyAt > now)) {
          // A notice below a head this container raised itself (the shard's later notice came first, on
          // another notice stream) is no news: no read — unless this receive found the shard ready on
          // the ready index (another container's commit or release made it ready since the entry).
          // Otherwise whatever made it ready put it there, and the next receive that reads it claims.
          if (remembered && (announced.indexed || this.ownKnownOf(group, stream) < announced.to)) {
            // The entry may be older than a release or commit that made the shard ready: read it.
            remembered = false;
            stale = false;
            cursor = undefined;
            attempt--;
            continue;
          }
          if (!announced.applied) announced.known = true;
          announced.applied = !epochUnknown;
          return [];
        }
        if (!announced.applied) announced.known = true;
        announced.applied = !epochUnknown;
      }
      const foldable = carried.filter((c) => foldsInto(held, c));
      if (stale && foldable.length < carried.length) {
        // The hint is an eventually consistent read: it may not show a lease granted just before.
        // Read the cursor consistently before a carried commit is taken for a repeat or a stale one.
        stale = false;
        cursor = undefined;
        attempt--;
        continue;
      }
      stale = false;
      if (foldable.length < carried.length) await scope.carried?.separate(stream, carried.filter((c) => !foldable.includes(c)));
      // The claim is planned as if the folded commits had taken effect (never renewing their leases),
      // and as if the raise had (the announced messages count as known: the shard stays ready for them).
      // Its read position `ns` is found only for an ordinary claim (below): a grant does not read from it.
      let read: CursorState = {
        ...held,
        ...(foldable.length === 0 ? {} : { leases: withoutLeases(held.leases, foldable) }),
        ...(raise ? { known: raise.to } : {}),
      };
      // Ranges whose leases expired are written out as ordinary leases before a plan renews them
      // (docs/design.md, Range claims): the plan's writes name leases in `fl`.
      const expiredRanges = rangesOf(read).filter((r) => r.expiresAt <= now);
      if (expiredRanges.length > 0) {
        if (rangeRounds++ >= RANGE_ROUNDS) return [];
        await Promise.all(expiredRanges.map((r) => normaliseRange(this.stores, group.name, stream, r, now, { cursor: held })));
        cursor = undefined;
        remembered = false;
        stale = false;
        attempt--;
        continue;
      }
      const limit = mode === 'serialized' ? 1 : want;
      const expired = expiredLeases(read, now);
      // A raise this claim would write does not keep it from a range: the grant is planned as if the
      // raise had taken effect (it makes the shard ready now), which is written on its own first.
      const raised = raise ? { ...held, known: Math.max(held.known ?? 0, raise.to), readyKey: readyNowKey(stream) } : held;
      const granting = noRange ? 0 : this.grantable(scope, stream, mode, raised, expired.length, want, contended, now, held.leases.size - foldable.length);
      if (granting === 'full') {
        // Every lease the shard may hold is in flight, most of them in ranges: an ordinary claim would
        // only move the ready-index entry to the earliest expiry — a write that the next grant or
        // commit makes lose, and that a commit undoes. The entry stays ready now (early is safe: one
        // look), and this receive answers nothing here — after reading the cursor, if it came from the cache.
        if (remembered) {
          remembered = false;
          stale = false;
          cursor = undefined;
          attempt--;
          continue;
        }
        if (foldable.length > 0) await scope.carried?.separate(stream, foldable);
        return [];
      }
      const paused = this.shardGrants.get(`${group.name}\u0000${stream}`)?.pause;
      if (granting !== 0 && paused !== undefined && paused.until > this.claimContention.stopwatch.now()) {
        // Wait out the pause (above) with nothing written here.
        if (foldable.length > 0) await scope.carried?.separate(stream, foldable);
        return [];
      }
      if (granting > 0 && remembered) {
        // A grant planned from the cache entry could fail on the lease bound other grants took since
        // (a failed write is billed at the cursor's size against its 1,000 WCU/s; a consistent read
        // of it is a quarter or less of that against 3,000 RCU/s): read it first.
        remembered = false;
        stale = false;
        cursor = undefined;
        attempt--;
        continue;
      }
      if (granting > 0 && raise) {
        // The raise on its own (conditional on the known head being lower: one that lost found it
        // raised already), then the grant is planned from the cursor read again. Before, the raise
        // made this an ordinary claim, which lost to every grant made meanwhile on a hot shard.
        const applied = await raise.apply();
        if (applied === true) this.noteKnown(group, stream, raise.to);
        if (applied === 'known') raise.known = true;
        // A seek raced it (false): the ordinary claim takes it from here, as before.
        if (applied === false) noRange = true;
        else raise.applied = true;
        cursor = undefined;
        attempt--;
        continue;
      }
      if (granting > 0) {
        if (foldable.length > 0) await scope.carried?.separate(stream, foldable);
        const granted = await this.grantClaim(scope, stream, held, granting, now, ids);
        if (granted.ok) return granted.delivered;
        if (granted.noRange) {
          // An ordinary claim reads on past a gap, and takes what the answer can hold.
          noRange = true;
          attempt--;
        }
        // A condition a grant is made under no longer held (a seek, a release, a commit of other
        // leases that changed readiness, the lease bound): plan an ordinary claim from the image.
        cursor = granted.seen && !cursorExpired(granted.seen, this.clock.now()) ? granted.seen : undefined;
        continue;
      }
      // After range grants `ns` may lag `nx` (`nl`): the claim reads from the segment holding `nx`.
      read = { ...read, segmentStart: await this.readPosition(stream, held) };
      // Completions past the cursor's memory go to history items first; the claim then removes
      // them from `dn` under the mark it read (docs/design.md, History for the whole retention).
      // Planned with the leases as held: a chunk ends below a folded commit's lease, whose completion
      // this write puts in `dn` (past the new mark it would be a straggler: a write of its own).
      const spill = planSpill({ ...read, leases: held.leases });
      // An attempt that spills history writes before it claims: it reads the stream afresh.
      const reused = spill ? undefined : reusableRead(lastRead, read, limit);
      const [leaseRecords, fresh, spilled] = await Promise.all([
        // Oldest first, a chunk of segments at a time, up to what the answer can hold (expired-lease-records.ts).
        readExpiredLeaseRecords(
          (keys) => this.stores.log.getSegments(keys),
          stream,
          expired,
          limit,
          scope.budget.remaining,
          (record) => this.live(scope, record, now, stream),
          group.maxDeliveries,
        ),
        // A Query page stops at 1 MB (two or three of the largest segments): the read follows it while
        // what it read is below the answer's room and reaches fewer than `limit` messages past the
        // cursor — the plan could not use more — (docs/design.md, Receive, "A page cut at 1 MB"),
        // and says `more` where it stopped short of `limit + 1` segments.
        reused
          ? Promise.resolve({ segments: reused.segments, more: reused.truncated, heldUntil: reused.heldUntil })
          : this.stores.log.readSegments(stream, read.segmentStart, limit + 1, { maxBytes: scope.budget.remaining, reach: read.next + limit, sized }),
        spill
          ? this.stores.history.write(group.name, stream, read.createdAt ?? 0, read.done, spill, historyTtl(now))
          : Promise.resolve(undefined),
      ]);
      const segments = fresh.segments;
      const truncated = fresh.more || (!reused && segments.length === limit + 1);
      if (!reused) lastRead = { start: read.segmentStart, segments, truncated, heldUntil: fresh.heldUntil };
      // A sequenced shard's read stopped below a hole its writer may still fill: the shard is looked
      // at again when the hole is filled, or sooner (its late segment raises no notice that helps).
      const heldUntil = fresh.heldUntil === undefined ? undefined : Math.min(fresh.heldUntil, now + holeRecheckMs(fresh.heldUntil - now));
      // Room in the answer is taken before the lease is written, and given back if the write loses
      // (or when the claim is planned again for fewer messages).
      let taken = 0;
      const admit = (delivery: Delivery): boolean => {
        const bytes = jsonBytes(this.deliver(delivery, stream, scope.topics, ids)) + ANSWER_SLACK_BYTES;
        if (!scope.budget.take(bytes)) return false;
        taken += bytes;
        return true;
      };
      const shard = isShardStream(stream);
      const planFor = (take: number, fold: CarriedCommit[]) => {
        scope.budget.give(taken);
        taken = 0;
        const plan = planClaims({
          cursor: read,
          mode,
          now,
          want: take,
          visibilityMs: scope.visibilityMs,
          maxDeliveries: group.maxDeliveries,
          retryPolicy: group.retryPolicy,
          leaseRecords,
          segments,
          truncated,
          heldUntil,
          live: (record) => this.live(scope, record, now, stream),
          verdict: (record) => this.verdict(scope, record, stream),
          token: () => this.random.token(),
          admit,
        });
        const known = Math.max(read.known ?? 0, plan.seen);
        // The ready-index key is written only when readiness changes (an index key change costs 2 WRU).
        const index = shard ? readyKeyChange(stream, read, plan.readyAt, now) : undefined;
        // A raise puts the shard under its ready-index key (a cursor of an earlier version, or of the
        // topic before it was created again with another width, has another).
        const rekey = raise && raise.readyPk !== held.readyPk ? { pk: raise.readyPk, entry: index === undefined && read.readyKey !== undefined } : undefined;
        // A concurrent group's claim that leaves the shard's readiness and known head as they are lets
        // commits made since its plan pass (docs/design.md, "Commits pass claims").
        const passCommits = mode === 'concurrent' && index === undefined && rekey === undefined && held.known !== undefined && known === held.known;
        const change: ClaimChange = {
          expectNext: read.next,
          next: plan.next,
          segmentStart: plan.segmentStart,
          grant: plan.grant,
          close: plan.close,
          forgetDone: spilled ? completionKeys(held, spilled.remove) : [],
          ...(fold.length > 0 ? { commit: { entries: fold.map(({ seq, token }) => ({ seq, token })), now } } : {}),
          ...(spilled ? { history: { expectMark: spilled.expectMark, mark: spilled.mark } } : {}),
          // The cursor may come from the cursor cache: the plan holds only in the seek epoch it read.
          seekEpoch: { expect: held.seekEpoch },
          ...(held.segmentStartLags ? { clearsLag: true } : {}),
          ...(shard
            ? {
                shard: {
                  expectKnown: held.known,
                  // As stored: folded commits' leases are still there when the condition is evaluated.
                  expectInFlight: held.leases.size,
                  // The leases exactly as the plan saw them: another container's release or shortened lease
                  // changes nothing else a claim is conditional on, whether the cursor came from the cache
                  // entry or from a read a few ms before (the claim would deliver past a message waiting out
                  // its back-off and move the ready-index entry to the old expiry).
                  expectLeases: held.leases,
                  known,
                  now,
                  ...(passCommits ? { passCommits: { visibilityVersion: held.visibilityVersion, readyKey: held.readyKey } } : {}),
                  ...(index ? { index } : {}),
                  ...(rekey ? { rekey } : {}),
                  ...(raise?.epoch !== undefined ? { epochStart: raise.epoch } : {}),
                },
              }
            : {}),
        };
        const changed =
          fold.length > 0 ||
          spilled !== undefined ||
          plan.grant.length > 0 ||
          plan.close.length > 0 ||
          plan.next !== read.next ||
          (shard && (index !== undefined || known !== held.known));
        return { plan, change, changed };
      };
      // Limits by construction: a claim whose expressions or resulting item would pass their
      // budgets is planned again for fewer messages (the last ones are left for the next receive).
      // Carried commits first: as many as fit with no delivery at all; the rest are committed on their own.
      let fold = foldable;
      while (fold.length > 0 && !claimFits(held, planFor(0, fold).change)) fold = fold.slice(0, -1);
      if (fold.length < foldable.length) await scope.carried?.separate(stream, foldable.slice(fold.length));
      let take = limit;
      let planned = planFor(take, fold);
      while (take > 0 && !claimFits(held, planned.change)) {
        take = Math.min(take - 1, planned.plan.deliveries.length);
        planned = planFor(take, fold);
      }
      const { plan, change, changed } = planned;
      if (heldUntil !== undefined && plan.readyAt === heldUntil) {
        const namespace = namespaceOf(stream);
        if (namespace.startsWith('t:')) scope.held?.(namespace.slice(2), heldUntil);
      }
      // The claim went through all it read and falls short of what it asks, where a fresh read of
      // `limit + 1` segments may hold the rest: read the stream afresh. Either the read was an earlier
      // one (the cursor is newer than it: segments appended since), or its first page was sized by the
      // stream's fill and records the claim skips (another tag, expired) took its positions — then in
      // full, and the stream's next reads too, for a while (segment-fill.ts). (A claim stopped short of
      // the read's end — leases in flight, the answer budget, an ordered stop — would stop at the same
      // place on a fresh read.)
      const shortOfSized = !reused && 'sized' in fresh && fresh.sized === true && fresh.heldUntil === undefined && truncated;
      if ((reused || shortOfSized) && plan.deliveries.length < limit && plan.next >= endOf(segments)) {
        if (shortOfSized) {
          this.stores.log.fellShort(stream);
          sized = false;
        }
        scope.budget.give(taken);
        lastRead = undefined;
        attempt--;
        continue;
      }
      if (!changed && remembered) {
        // Nothing to write by the cache entry: it may miss a raise (messages announced by another
        // container), a commit or a release. Read the cursor before answering nothing.
        scope.budget.give(taken);
        remembered = false;
        stale = false;
        cursor = undefined;
        attempt--;
        continue;
      }
      remembered = false;
      if (changed && turnOwed) {
        turnOwed = false;
        scope.budget.give(taken);
        await turn();
        attempt--;
        continue;
      }
      if (changed) {
        // Claims return the cursor they leave into the cursor cache (shards in protected mode: not cached).
        const outcome = await this.stores.cursors.claim(group.name, stream, change, shard && !cachedShard ? undefined : group.createdAt);
        if (!outcome.ok) {
          // Another receiver moved the cursor, or a carried token no longer holds: plan again (carried
          // commits that no longer fold are then committed on their own) from the cursor the failed
          // write was checked against — as consistent as a read, and free — or read it when it is gone.
          scope.budget.give(taken);
          cursor = outcome.seen && !cursorExpired(outcome.seen, this.clock.now()) ? outcome.seen : undefined;
          if (contended) {
            // A shard: wait a full-jitter turn, then plan from the returned cursor all the same (reading
            // it again after a long turn measured worse: docs/design.md, "Lost claims on a hot shard").
            // A loss to a stale cache entry or a carried token that no longer holds counts as a race
            // too: at most one slot's wait on a quiet shard.
            contended.lostRace();
            if (attempt + 1 < CLAIM_ATTEMPTS) await turn();
          }
          continue;
        }
        contended?.won();
        if (fold.length > 0) scope.carried?.folded(stream, fold);
        if (raise) raise.applied = true;
        // Only what this claim raised: a head another container's raise wrote is not this container's.
        if (change.shard && change.shard.known > (held.known ?? 0)) this.noteKnown(group, stream, change.shard.known);
      }
      const movedDead = await this.deadLetter(group, stream, plan.dead, now, scope.deadline);
      const delivered = plan.deliveries.map((d) => this.deliver(d, stream, scope.topics, ids));
      if (movedDead > 0 && delivered.length < want && this.clock.now() < scope.deadline) {
        // Dead letters made room (a serialized shard moves on): look again at once — unless the
        // deadline passed (the look would dead-letter the next one: a new append after the deadline).
        return [...delivered, ...(await this.claim(scope, stream, mode, undefined, want - delivered.length))];
      }
      return delivered;
    }
    return [];
  }

  /**
   * How many messages a range claim would take here (0: claim as usual). Only a `concurrent` group's
   * claim on a FIFO shard of one topic (not sequenced, not redriven) without tag filters, where this
   * container lost claims lately, where leases it does not commit now are in flight or where ranges were granted before, with nothing expired, released or announced anew in what it read,
   * a backlog of at least twice the range beyond `nx` and the shard ready now
   * (docs/design.md, Range claims). `full`: all that, but the lease bound is taken, by ranges among others.
   */
  private grantable(
    scope: ReceiveScope,
    stream: string,
    mode: ClaimMode,
    held: CursorState,
    expired: number,
    want: number,
    contended: ContendedAppend | undefined,
    now: number,
    heldElsewhere: number,
  ): number | 'full' {
    // Where this container lost claims lately, where leases this receive does not commit are in
    // flight (other consumers hold them: an ordinary claim would race theirs), or where ranges were
    // granted before (a hot shard: an ordinary claim races the next grant).
    if (!this.rangeClaims || mode !== 'concurrent' || expired > 0) return 0;
    if (contended?.contended !== true && heldElsewhere <= 0 && held.rangeMaps !== true) return 0;
    if (!isShardStream(stream) || isSequencedStream(stream) || isRedriveStream(stream)) return 0;
    const namespace = namespaceOf(stream);
    const topic = namespace.startsWith('t:') ? namespace.slice(2) : undefined;
    const subscription = scope.group.subscriptions.find((s) => s.topic === topic);
    if (topic === undefined || !scope.requested.has(topic) || !subscription || !tagMatches(subscription.tags, undefined)) return 0;
    const n = Math.min(want, RANGE_MAX_MESSAGES);
    if (n <= 0 || held.known === undefined || held.known - held.next + 1 < 2 * n || held.readyKey !== readyNowKey(stream)) return 0;
    if ([...held.leases.values()].some((l) => l.released === true && l.expiresAt > now)) return 0;
    return rangesOf(held).length <= rangeBound(held, n).rangesAtMost ? n : rangesOf(held).length > 0 ? 'full' : 0;
  }

  /**
   * A range claim of up to `n` messages (docs/design.md, Range claims): one eventually consistent
   * Query of the records it can meet, then one write that no other claim makes fail. Members no
   * longer deliverable are written out at once (range-normaliser.ts): a range that stays a range is
   * one whose every member was delivered. `noRange`: a gap in what it read, or no room in the
   * answer — the claim goes the ordinary way.
   */
  private async grantClaim(
    scope: ReceiveScope,
    stream: string,
    held: CursorState,
    n: number,
    now: number,
    ids: MessageIdCodec,
  ): Promise<{ ok: true; delivered: DeliveredMessage[] } | { ok: false; seen?: CursorState; noRange?: true }> {
    const { group } = scope;
    const memoKey = `${group.name}\u0000${stream}`;
    const grants = this.grantsOf(memoKey);
    const memo = grants.rangeSegment;
    const expiresAt = now + scope.visibilityMs + retryDelayMs(group.retryPolicy, 1, group.maxDeliveries);
    // Completions past the cursor's memory go to history in a write of their own (a grant does not
    // depend on `dn`; a spill made with an ordinary claim would lose to every grant). The commit of a
    // range that crosses a step spills them (Committer.commitRanges); a grant only past
    // GRANT_SPILLS_AT: every grantor that read the same completions spilled them, all but one in vain.
    await spillOnItsOwn(this.stores, group.name, stream, held, held.done.size > GRANT_SPILLS_AT ? planSpill(held) : undefined, now);
    // The maps a grant writes into: once per cursor.
    if (held.rangeMaps !== true && !(await this.stores.cursors.addRangeMaps(group.name, stream, now))) return { ok: false };
    const id = this.random.token();
    // Read first (SPEC §3.3: a receive never leases a message it cannot return; answer-budget.ts): the
    // records the grant can meet — it starts at most RANGE_AHEAD past `nx` as read, a condition, and
    // ends at or below the known head — are read before it. A number without a stored segment (a
    // new epoch's jump, segments TTL removed) makes this claim an ordinary one, which reads on past
    // the gap; the range takes no more members than the largest record read fits the answer, room
    // held until they are answered.
    const ahead = grants.reach ?? RANGE_AHEAD;
    const end = Math.min(held.next + ahead + n, held.known! + 1);
    // Eventually consistent (half the units): a segment the read does not show yet is a gap to it —
    // an ordinary claim then — never a member passed over.
    const segments = await this.stores.log.segmentsCovering(stream, held.next, end - 1, false);
    // What each number of the window holds, read once: its segment and, when deliverable, its record.
    const window = new Map<number, { segment: number; record: MessageRecord | undefined }>();
    // Sizes are measured with one sealed handle for all (the handles of one range differ by a few
    // characters at most: RANGE_HANDLE_SLACK_BYTES), not a seal a record.
    const sizing = withSealedHandle(ids, ids.sealReceipt({ topic: namespaceOf(stream).slice(2), stream, seq: end, token: rangeToken({ id, start: end, n }, held.seekEpoch) }));
    let largest = 0;
    for (let seq = held.next; seq < end; seq++) {
      const segment = segments.find((s) => s.seq <= seq && seq < s.seq + s.count);
      if (segment === undefined) return { ok: false, seen: held, noRange: true };
      const stored = segment.records[seq - segment.seq];
      const record = stored !== undefined && this.live(scope, stored, now, stream) && this.verdict(scope, stored, stream) === 'deliver' ? stored : undefined;
      window.set(seq, { segment: segment.seq, record });
      if (record === undefined) continue;
      const lease: Lease = { seq, expiresAt, token: '', deliveries: 1, segment: segment.seq, topic: record.topic, pending: false };
      largest = Math.max(largest, jsonBytes(this.deliver({ record, lease }, stream, scope.topics, sizing)) + ANSWER_SLACK_BYTES + RANGE_HANDLE_SLACK_BYTES);
    }
    // Nothing in the window to deliver (expired, purged, another generation): an ordinary claim reads
    // on past it in one go — a range would pass over n numbers a receive, answering nothing each time.
    if (largest === 0) return { ok: false, seen: held, noRange: true };
    n = Math.min(n, Math.floor(scope.budget.remaining / largest));
    const reserved = largest * n;
    if (n <= 0 || !scope.budget.take(reserved)) return { ok: false, seen: held, noRange: true };
    const change = {
      id,
      n,
      expiresAt,
      nextAtMost: Math.min(held.known! - n, held.next + ahead),
      ...rangeBound(held, n),
      seekEpoch: held.seekEpoch,
      visibilityVersion: held.visibilityVersion,
      readyKey: held.readyKey!,
      // A segment start at or below every `nx` this grant can meet: the read position as read, or the
      // segment of this container's last range here when that is higher and not past `nx` as read.
      segmentStart: memo !== undefined && memo > held.segmentStart && memo <= held.next ? memo : held.segmentStart,
      now,
    };
    const outcome = await this.stores.cursors.grant(group.name, stream, change, group.createdAt);
    const pause = grants.pause;
    grants.pause = undefined;
    grants.reach = widenedReach(held, change.nextAtMost, ahead, largest, outcome);
    if (!outcome.ok) {
      scope.budget.give(reserved);
      const failures = Math.min((pause?.failures ?? 0) + 1, GRANT_PAUSE_LEVELS);
      grants.pause = { until: this.claimContention.stopwatch.now() + this.random.fraction() * GRANT_PAUSE_SLOT_MS * 2 ** (failures - 1), failures };
      return outcome;
    }
    const range = { id, start: outcome.start, n };
    const first = segments.find((s) => s.seq <= range.start && range.start < s.seq + s.count);
    if (first !== undefined) grants.rangeSegment = first.seq;
    const token = rangeToken(range, held.seekEpoch);
    // The room held is taken again member by member (no await between: no other claim of this receive takes it meanwhile).
    scope.budget.give(reserved);
    const delivered: DeliveredMessage[] = [];
    const untried = new Set<number>();
    const passed = new Set<number>();
    for (let seq = range.start; seq < range.start + n; seq++) {
      // Within the window by the grant's condition.
      const { segment, record } = window.get(seq) ?? { segment: 0, record: undefined };
      if (record === undefined) {
        passed.add(seq);
        continue;
      }
      const lease: Lease = { seq, expiresAt, token, deliveries: 1, segment, topic: record.topic, pending: false, range };
      const message = this.deliver({ record, lease }, stream, scope.topics, ids);
      if (untried.size > 0 || !scope.budget.take(jsonBytes(message) + ANSWER_SLACK_BYTES)) {
        // Not reached: the room was held for the largest record the grant could meet (kept as a guard).
        untried.add(seq);
        continue;
      }
      delivered.push(message);
    }
    if (untried.size > 0 || passed.size > 0) {
      await normaliseRange(this.stores, group.name, stream, range, now, { untried, passed });
    }
    return { ok: true, delivered };
  }

  /** This container's grant state on a shard, as the most recently used (the least recently used is forgotten past GRANT_SHARDS_REMEMBERED). */
  private grantsOf(memoKey: string): ShardGrants {
    const grants = this.shardGrants.get(memoKey) ?? {};
    this.shardGrants.delete(memoKey);
    this.shardGrants.set(memoKey, grants);
    while (this.shardGrants.size > GRANT_SHARDS_REMEMBERED) this.shardGrants.delete(this.shardGrants.keys().next().value as string);
    return grants;
  }

  /**
   * Where a claim reads the stream from: the cursor's read position `ns`, or, on a cursor whose
   * `nx` range claims moved without it (`nl`; docs/design.md, Range claims), the segment holding
   * `nx` (one Query of one item); the claim then writes it as `ns`.
   */
  private async readPosition(stream: string, cursor: CursorState): Promise<number> {
    if (cursor.segmentStartLags !== true) return cursor.segmentStart;
    const holding = await this.stores.log.segmentAtOrBelow(stream, cursor.next);
    return holding !== undefined && holding.seq > cursor.segmentStart ? holding.seq : cursor.segmentStart;
  }

  private live(scope: ReceiveScope, record: MessageRecord, now: number, stream: string): boolean {
    // A redriven message lives until its dead-letter copy would have expired, also after its topic was deleted.
    const topic = scope.topics.get(record.topic);
    // A purge of its topic after the redrive drops it too (its deliverableAt is the redrive).
    if (isRedriveStream(stream)) return record.expiresAt > now && !(topic !== undefined && isPurged(topic, record));
    return topic !== undefined && record.expiresAt > now && record.generation === topic.generation && !isPurged(topic, record);
  }

  private verdict(scope: ReceiveScope, record: MessageRecord, stream: string): Verdict {
    // Redriven messages were delivered to this group before: its tags matched then.
    if (isRedriveStream(stream)) return 'deliver';
    const subscription = scope.group.subscriptions.find((s) => s.topic === record.topic);
    if (!subscription || !tagMatches(subscription.tags, record.tag)) return 'skip';
    return scope.requested.has(record.topic) ? 'deliver' : 'stop';
  }

  private deliver({ record, lease }: Delivery, stream: string, topics: Map<string, Topic>, ids: MessageIdCodec): DeliveredMessage {
    return {
      messageId: record.messageId,
      receiptHandle: ids.sealReceipt({ topic: record.topic, stream, seq: lease.seq, token: lease.token }),
      topic: record.topic,
      ...messageContent(record),
      // A redriven message has no place in its shard's sequence any more.
      sequence: topics.get(record.topic)?.type === 'fifo' && !isRedriveStream(stream) ? lease.seq : null,
      sentAt: iso(record.sentAt),
      deliverableAt: iso(record.deliverableAt),
      deliveryCount: lease.deliveries,
    };
  }

  /**
   * Moves messages that used up `maxDeliveries` to the group's dead-letter
   * topic: the append and the closing of the lease are one transaction, so
   * the message is in exactly one of the two places. No append starts after
   * `until` (the receive's deadline: each append may wait out a contended
   * stream for up to its budget); the rest stay expired leases past their
   * deliveries, which the next receive moves. How many were handled.
   */
  private async deadLetter(group: Group, stream: string, dead: Array<{ lease: Lease; record: MessageRecord }>, now: number, until: number): Promise<number> {
    if (dead.length === 0) return 0;
    const target = await ensureDeadLetterTopic(this.stores, group.deadLetterTopic, now);
    const ids = await this.stores.ids.codec();
    let handled = 0;
    for (const { lease, record } of dead) {
      if (handled > 0 && this.clock.now() >= until) break;
      handled++;
      const local: StreamLocal = { kind: 'partition', partition: Math.floor(this.random.fraction() * target.partitions) };
      try {
        await this.stores.log.append(streamId(target, local), (seq) => {
          const copy: MessageRecord = {
            ...record,
            messageId: ids.messageId(target, local, seq),
            topic: target.name,
            shardKey: record.shardKey,
            properties: {
              ...record.properties,
              [DeadLetterProperty.sourceTopic]: record.topic,
              [DeadLetterProperty.sourceMessageId]: record.messageId,
              [DeadLetterProperty.group]: group.name,
              [DeadLetterProperty.deliveryCount]: String(lease.deliveries),
              [DeadLetterProperty.reason]: (lease.released ? 'released' : 'lease-expired') satisfies DeadLetterReason,
            },
            deliverableAt: now,
            expiresAt: now + target.retentionSeconds * 1000,
            generation: target.generation,
          };
          // The copy is found by key like any message, and from the original by its id (the link).
          const extras = new WriteBatch().add(
            DEAD_LETTER_CLOSE,
            this.stores.cursors.deadLetterItem(group.name, stream, doneEntry(lease, now, 'dead-lettered'), lease.token, lease.expiresAt),
          );
          // Counted in the same transaction: the group's `deadLettered` figure reads 8 counters, not every cursor.
          extras.add('dead-letter-count', this.stores.deadLetterCounts.countItem(group.name, group.createdAt, this.random.fraction()));
          extras.add(
            'dead-letter-link',
            this.stores.markers.deadLetterLinkItem(
              record.topic,
              record.messageId,
              group.name,
              { topic: target.name, messageId: copy.messageId, expiresAt: copy.expiresAt },
              record.expiresAt,
              now,
              lease.seq,
            ),
          );
          new Set(copy.keys).forEach((key) =>
            extras.add(`key:${key}`, this.stores.markers.keyItem(target.name, key, copy.messageId, copy.deliverableAt, copy.expiresAt)),
          );
          return { records: [copy], extras };
        });
        this.notifier.notify(target.name);
      } catch (error) {
        // The store is busy (a transaction conflict on the group's dead-letter counter or the cursor,
        // throttling): this receive's claim landed, so it answers what it claimed, and this dead letter
        // and the ones after it stay expired leases past their deliveries, which the next receive moves.
        if (error instanceof ThrottledError) {
          handled--;
          break;
        }
        // Another receiver dead-lettered it, or its last holder committed it meanwhile.
        if (!(error instanceof ItemConditionFailedError && error.item === DEAD_LETTER_CLOSE)) throw error;
      }
    }
    return handled;
  }
}

/** A FIFO shard a notice announced to this receive: its raise, written by a claim or on its own. */
export interface AnnouncedShard {
  /** The shard stream. */
  stream: string;
  /** The highest sequence number announced. */
  to: number;
  /** The start of an epoch a notice announced (`ke`). */
  epoch?: number;
  /** Whether the group's cursor is known to hold the raise (a claim wrote it, or it knew as much). */
  applied: boolean;
  /** The cursor knew as much before this receive raised it: the notice had been absorbed (another container). */
  known: boolean;
  /** The shard's ready-index key: its bucket when its topic is wide (undefined: the home key). */
  readyPk: string | undefined;
  /** The lowest sequence number announced (where a new cursor looks for its start). */
  from: number;
  /** This receive's ready-index read listed the shard as ready too (set by the receive). */
  indexed?: boolean;
  /**
   * The raise on its own (`CursorStore.raiseKnown`: update, or create the cursor); false when a seek
   * raced it, `'known'` when the cursor knew as much already. Made once: later calls answer the first's result.
   */
  apply: () => Promise<boolean | 'known'>;
  /** Raises to `to` with these bounds, through the notice stream that announced it (its seek check). */
  raise: (from: number, to: number, epoch: number | undefined) => Promise<boolean | 'known'>;
}

/** An announced shard whose `apply` raises it once (the same raise may be finished for two notice streams). */
function announcedShard(stream: string, range: { from: number; to: number; epoch?: number }, readyPk: string | undefined, raise: AnnouncedShard['raise']): AnnouncedShard {
  let made: Promise<boolean | 'known'> | undefined;
  const shard: AnnouncedShard = {
    stream,
    from: range.from,
    to: range.to,
    ...(range.epoch === undefined ? {} : { epoch: range.epoch }),
    applied: false,
    known: false,
    readyPk,
    raise,
    apply: () => (made ??= raise(shard.from, shard.to, shard.epoch)),
  };
  return shard;
}

/**
 * One raise per shard of what a receive read on several notice streams: a send's notices go to
 * whichever notice stream its container picked (docs/design.md, FIFO, "Notices go to any notice
 * stream"), so one shard may be announced on several. The raise reaches the highest `to` and the
 * latest epoch, starts a new cursor from the lowest `from`, and goes through the notice stream of the
 * highest `to`; every bucket that announced the shard holds this one raise instead of its own, so the
 * claim writes it once and each notice cursor moves on only once it took effect.
 */
export function leadRaises(absorbed: Array<{ raises: AnnouncedShard[] }>): Map<string, AnnouncedShard> {
  const all = new Map<string, AnnouncedShard[]>();
  for (const bucket of absorbed) for (const raise of bucket.raises) all.set(raise.stream, [...(all.get(raise.stream) ?? []), raise]);
  const leads = new Map<string, AnnouncedShard>();
  for (const [stream, raises] of all) {
    if (raises.length === 1) {
      leads.set(stream, raises[0]!);
      continue;
    }
    const top = raises.reduce((a, b) => (b.to > a.to ? b : a));
    const epochs = raises.flatMap((r) => (r.epoch === undefined ? [] : [r.epoch]));
    const range = { from: Math.min(...raises.map((r) => r.from)), to: top.to, ...(epochs.length > 0 ? { epoch: Math.max(...epochs) } : {}) };
    leads.set(stream, announcedShard(stream, range, top.readyPk, top.raise));
  }
  for (const bucket of absorbed) bucket.raises = bucket.raises.map((raise) => leads.get(raise.stream) ?? raise);
  return leads;
}

/**
 * How far one container absorbed a group's notice stream: every shard its notices up to `next`
 * announced was raised (as the notice cursor's `advance` requires), but the cursor, to save its
 * write, may still be up to NOTICE_LAG_MAX notices behind. The container's next receives read on
 * from here; other containers read from the cursor, and reading a notice again is harmless.
 * Valid only for the cursor it was made from (`ca`) and its seek count (`sv`): a seek or a group
 * made again means the notices must be read from the cursor's position.
 */
interface NoticeMemo {
  createdAt: number | undefined;
  version: number | undefined;
  next: number;
  segmentStart: number;
}

const noticeMemoKey = (group: string, stream: string): string => `${group}\u0000${stream}`;
/** Per group incarnation (a group deleted and made again under its name starts afresh) and shard. */
const ownKnownKey = (group: Pick<Group, 'name' | 'createdAt'>, shard: string): string => `${group.name}\u0000${group.createdAt}\u0000${shard}`;

/** What a FIFO namespace's notices name: shards under wide ready-index buckets, and `…/q:` shard streams (sequenced). */
interface NamespaceShape {
  /** A wide topic's ready-index buckets (keys.ts `readyBucketCount`); undefined: the group's home key. */
  buckets: number | undefined;
  sequenced: boolean;
}

/** One notice stream as a receive read it: the group's cursor, where reading started, the segments read. */
interface BucketRead {
  stream: string;
  cursor: CursorState;
  start: { next: number; segmentStart: number };
  segments: NoticeSegment[];
}

/** What one receive read from one notice stream: where its cursor moves once every announced shard is raised. */
interface AbsorbedNotices {
  stream: string;
  /** The group's notice cursor as read (its position may be behind where the reading started: NoticeMemo). */
  cursor: CursorState;
  next: number;
  segmentStart: number;
  raises: AnnouncedShard[];
}

/**
 * The group's redrive stream when this receive reads it: while the group's hint says a redrive
 * may have left deliverable messages there, and only when the receive asks for every topic the
 * group subscribes to (redriven messages may come from topics no longer subscribed or deleted).
 */
const redriveStreamToRead = (group: Group, requested: Set<string>, now: number): string | undefined =>
  (group.redriveUntil ?? 0) > now && group.subscriptions.every((s) => requested.has(s.topic)) ? redriveStream(group.name) : undefined;

/** History items outlive every message whose completion they hold: written after it, kept for the longest retention. */

/**
 * Whether new shard cursors of a FIFO namespace start at the shard's first
 * retained message: when every subscribed topic of the namespace was
 * subscribed with `startFrom: "earliest"` (a time-order group may mix them;
 * then shards start as for `latest`).
 */
const fromEarliest = (scope: ReceiveScope, namespace: string): boolean => {
  const subscribed = scope.group.subscriptions.filter((s) => {
    const topic = scope.topics.get(s.topic);
    return topic !== undefined && streamNamespace(topic) === namespace;
  });
  return subscribed.length > 0 && subscribed.every((s) => s.startFrom === 'earliest');
};

/** What one container's grants on one shard remember (receiver.ts `shardGrants`). */
interface ShardGrants {
  /**
   * The segment holding the first message of the last range this container was granted there: a
   * grant sets the cursor's read position `ns` to it (docs/design.md, Range claims).
   */
  rangeSegment?: number;
  /** The reach of this container's next grant there, when widened (RANGE_AHEAD_WIDE). */
  reach?: number;
  /**
   * Until when (ms of the claim contention's stopwatch: a wait, not a message time) this container
   * makes no grant there: set by a grant that failed (other grants took the lease bound or moved `nx`
   * past what it read), a full-jitter wait that grows with the failures in a row — at the bound every
   * consumer of a hot shard reads that one slot is left, and all but one grant would fail, each
   * billed at the cursor's size.
   */
  pause?: { until: number; failures: number };
}

/**
 * The reach of a container's next grant on the shard after this one, `ahead` (undefined: the narrow
 * RANGE_AHEAD): widened to RANGE_AHEAD_WIDE when this one failed because grants of others between its
 * read and its write took `nx` past its window (on a hot shard under many consumers, a wave of
 * grantors reads one `nx`, and all but the first RANGE_AHEAD ÷ n + 1 failed on it), where a window
 * that wide stays within WIDE_WINDOW_BYTES at the largest record this one met; back to RANGE_AHEAD
 * once a grant found the narrow window enough.
 */
function widenedReach(held: CursorState, nextAtMost: number, ahead: number, largest: number, outcome: GrantOutcome): number | undefined {
  const widened = ahead > RANGE_AHEAD ? ahead : undefined;
  if (outcome.ok) return widened !== undefined && outcome.start - held.next <= RANGE_AHEAD ? undefined : widened;
  const pastWindow = outcome.seen !== undefined && outcome.seen.next > nextAtMost && nextAtMost === held.next + ahead;
  if (!pastWindow || ahead >= RANGE_AHEAD_WIDE || largest * (RANGE_AHEAD_WIDE + RANGE_MAX_MESSAGES) > WIDE_WINDOW_BYTES) return widened;
  return RANGE_AHEAD_WIDE;
}

/** `ids`, but every receipt handle it seals is `handle` (measuring answers without sealing each). */
const withSealedHandle = (ids: MessageIdCodec, handle: string): MessageIdCodec =>
  Object.assign(Object.create(ids) as MessageIdCodec, { sealReceipt: () => handle });

/**
 * The lease bound of a grant of `n` (MAX_IN_FLIGHT_PER_STREAM), as conditions on what it can count:
 * `size(fl)` no more than read (commits only shrink it; a write-out grows it and fails the grant)
 * and at most so many ranges besides this one: those read, and as many more as the room left after
 * the leases read and this range holds ranges of RANGE_MAX_MESSAGES — so whatever other grants made
 * meanwhile, the shard never holds more than the bound.
 */
const rangeBound = (held: CursorState, n: number): { plainLeases: number; rangesAtMost: number } => {
  const plainLeases = [...held.leases.values()].filter((l) => l.range === undefined).length;
  return { plainLeases, rangesAtMost: rangesOf(held).length + Math.floor((MAX_IN_FLIGHT_PER_STREAM - held.leases.size - n) / RANGE_MAX_MESSAGES) };
};

/** A carried commit folds into a claim when the cursor read shows its lease, ours and not a pending commit. */
const foldsInto = (cursor: CursorState, commit: CarriedCommit): boolean => {
  const lease = cursor.leases.get(commit.seq);
  // A range member's commit is the committer's (a whole range in one write, or written out first).
  return lease !== undefined && lease.token === commit.token && !lease.pending && lease.range === undefined;
};

const withoutLeases = (leases: Map<number, Lease>, commits: CarriedCommit[]): Map<number, Lease> => {
  const left = new Map(leases);
  for (const { seq } of commits) left.delete(seq);
  return left;
};

const doneEntry = (lease: Lease, at: number, outcome: DoneEntry['outcome']): DoneEntry => ({
  seq: lease.seq,
  token: lease.token,
  at,
  outcome,
  deliveries: lease.deliveries,
  ...completionEpoch(lease.token),
});
