/**
 * Stream logs: append-only, gap-free sequences of messages (docs/design.md §Streams).
 *
 * Items of stream S (keys.ts):
 *   pk `S#<S>`, sk `#`                   sentinel {eb: base of the current epoch}; never expires, but
 *                                        on FIFO shard streams it carries `ttl` (below)
 *   pk `S#<S>`, sk `<16-digit seq>`      segment {n: count, m: [entries], ttl}: messages seq … seq+n-1;
 *                                        entries are message records (records.ts; a message segment
 *                                        of ≥ 2 may hold them packed in `mz` instead: segment-records.ts) or, on notice
 *                                        streams, notices {h: shard key, f: from, t: to, e?: 1 when
 *                                        `from` opened an epoch}; n = 0: a closing marker (below)
 *
 * Append reads the head (the highest item, strongly consistent) and puts the
 * next segment with `attribute_not_exists(pk)`. Whoever loses the race waits
 * (full jitter, append-contention.ts) and tries again after the segment its
 * failed put returned, or reads the head again (learned heads, below). Because seq k+1 can only be written by someone who saw seq k, a reader
 * that sees k+1 knows every earlier message of the stream is already there:
 * cursors never skip a late writer. When every segment has expired and been
 * removed, the sentinel tells the next writer to open a new epoch above every
 * sequence number ever used, in one transaction with its first segment.
 *
 * FIFO shard streams expire whole (docs/design.md, Idle shards expire): their
 * sentinel has a `ttl`, an epoch over nothing opens at `now_ms × 1000` (never
 * at 1: an earlier life of the stream may have used low numbers), and a head
 * segment within HEAD_MARGIN_MS of its `ttl` is never appended to: the writer
 * opens a new epoch instead, with an empty closing marker at the old head's
 * next number, so that no late writer of the old epoch can land behind it.
 *
 * Head hints: a process that has just appended segment k…m to a stream knows
 * the next segment can only start at m+1 (whoever writes after it read m as
 * the head), so for a short while its next append to that stream skips the
 * head read and puts at m+1 directly — same condition, so a stale hint only
 * costs a failed put and a normal retry. Hints live a few seconds (far below
 * the minimum retention, so segment m is still there), are not used while
 * another append of this process is in flight on the stream, and are turned
 * off for a while on a stream where one turned out stale (another writer).
 *
 * Learned heads: a segment put that lost its race asks for the item it collided
 * with (`ReturnValuesOnConditionCheckFailure: ALL_OLD`, no read units): the
 * winner's segment k…m, so the next try puts at m+1 without reading the head —
 * when its wait was at most one try long (append-contention.ts, `turn`); after
 * a longer wait the stream has moved on and the head is read (trusting a stale
 * learned head made 15.7 lost races per append at 64 producers, docs/design.md).
 * In a transaction, a write whose put passed keeps the head it used. A closing
 * marker (n = 0) teaches nothing: its epoch must not be continued.
 *
 * The wake flag: every message enters a stream here, so this is the one
 * place that sets `w = 1` on a message segment whose topics someone waits
 * for (`wakes`, the catalog's view of the topic items' `pu`/`wu`: design
 * §7.2). The flag only lets the segment's INSERT through the dispatcher's
 * filters; it changes nothing else about the segment.
 */
import { TransactWriteCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { Limits, type MessageRecord } from '../../domain/model.js';
import { MAX_SEQ, isSequencedStream, isShardStream } from '../../domain/streams.js';
import { ThrottledError } from '../../domain/errors.js';
import type { Clock } from '../../ports/clock.js';
import { Contention } from './append-contention.js';
import type { AppendObserver, AppendOutcome } from '../../ports/append-observer.js';
import { cancellationImages, cancellationReasons, isConditionalFailure, translateDynamoError } from './errors.js';
import { batchGetPages, call } from './call.js';
import { WAKE_FLAG, WAKE_TOPICS } from './dispatch-source.js';
import { SENTINEL_SK, segmentSk, streamOfPk, streamPk } from './keys.js';
import { fromStored } from './records.js';
import { packSegmentRecords, segmentRecordsItem, storedRecordsOf } from './segment-records.js';
import { ItemConditionFailedError, WriteBatch, failedItem, type TransactItem } from './write-batch.js';
import { TRY_TOKEN_ITEM_BYTES, withTryToken } from './try-token.js';
import { itemBytes } from './item-size.js';
import { SegmentFill } from './segment-fill.js';
import { GRANT_PUT_DEADLINE_MS, gapState } from '../../domain/gaps.js';
import { GRANT_ATTRIBUTES_MAX_BYTES, Sequencer, grantAttributes, grantedOf, type Grant, type GrantedStored } from './sequencer.js';

/**
 * What a message segment item holds besides its records, at most (711 bytes): `pk` (`S#` and the
 * longest stream id: a 128-character namespace name and a shard key of ≤ 384 UTF-8 bytes), `sk`,
 * `n`, `ttl` and `w` (numbers counted at 21 bytes), the `m` list's own container, a sequenced
 * stream's grant attributes and a single put's try token. (`wt` is on notice segments only.) One
 * record of the largest message admitted, as a dead-letter copy, fits one item with it
 * (docs/design.md, Dead letters, "Its size").
 */
export const SEGMENT_ENVELOPE_MAX_BYTES =
  'pk'.length + 'S#'.length + 2 + Limits.nameMaxLength + 1 + 2 + 3 * Limits.shardKeyMaxLength +
  'sk'.length + segmentSk(MAX_SEQ).length +
  'n'.length + 21 + 'ttl'.length + 21 + WAKE_FLAG.length + 21 +
  'm'.length + 3 +
  GRANT_ATTRIBUTES_MAX_BYTES + TRY_TOKEN_ITEM_BYTES;

export type Head =
  | { kind: 'none' }
  | { kind: 'sentinel'; base: number }
  | { kind: 'segment'; seq: number; count: number; ttl?: number };

export interface Segment {
  stream: string;
  seq: number;
  count: number;
  records: MessageRecord[];
  /** A sequenced stream's item: its grant (a filler holds no records; sequencer.ts). */
  granted?: GrantedStored | undefined;
}

/** What a read of a stream got: `more` when the stream may go on past `segments` (the limit was reached, or a page cut was not followed). */
export interface SegmentRead {
  segments: Segment[];
  more: boolean;
  /**
   * A sequenced stream: the read stopped below a hole a writer may still fill (docs/design.md,
   * Sequenced FIFO topics); nothing past it may be passed before this time (ms). `more` is then true.
   */
  heldUntil?: number | undefined;
  /** The first page asked for fewer segments than the limit, sized by the stream's fill (segment-fill.ts). */
  sized?: boolean | undefined;
}

/** How far a read follows Query pages that DynamoDB cut at 1 MB of data read. */
export interface ReadBounds {
  /** Queries at most, the first included (default {@link READ_PAGES_MAX}). */
  maxPages?: number;
  /**
   * No further page once the segments read hold this many bytes (stored size, item-size.ts): a
   * receive passes its answer's room, since it cannot deliver more than that of what it reads.
   */
  maxBytes?: number;
  /**
   * No further page once the segments read end past this sequence number: a receive passes
   * its cursor's next message plus what it wants (a page of batched segments holds hundreds of
   * messages: enough, however few segments it holds).
   */
  reach?: number;
  /** Strongly consistent reads (default true); false: half the read units, a segment written in the last second may be missed. */
  consistent?: boolean;
  /** False: the first page asks for `limit` segments, not for what the stream's fill takes to pass `reach` (segment-fill.ts). */
  sized?: boolean;
}

/** FIFO shard activity: shard `shardKey` got messages `from`…`to` (docs/design.md, FIFO). */
/** A notice segment as read: its first number, how many notices it holds (numbers it covers), the notices. */
export interface NoticeSegment {
  seq: number;
  count: number;
  notices: Notice[];
  /** When the messages it announces have all expired (s; its `ttl`: the longest retention of its entries). */
  ttl?: number;
}

export interface Notice {
  shardKey: string;
  from: number;
  to: number;
  /** `from` is the first sequence number of a new epoch (the shard's numbers jumped there). */
  epoch?: boolean;
}
interface StoredNotice {
  h: string;
  f: number;
  t: number;
  e?: 1;
}
const toStoredNotice = (n: Notice): StoredNotice => ({ h: n.shardKey, f: n.from, t: n.to, ...(n.epoch ? { e: 1 as const } : {}) });
const fromStoredNotice = (n: StoredNotice): Notice => ({ shardKey: n.h, from: n.f, to: n.t, ...(n.e === 1 ? { epoch: true } : {}) });

export interface StreamWrite {
  stream: string;
  /**
   * How many entries `build` will return: required for a sequenced stream (its numbers are granted
   * before the segment is built); ignored elsewhere.
   */
  count?: number;
  /**
   * Builds the stored entries of the segment once its first sequence number is known
   * (`packed`, when given, is written as `mz` instead of the entries: segment-records.ts)
   * (`opened[i]`: write i's segment opens an epoch of its stream; `pack`: packing is on, else
   * no `packed` is built); `topics`: the topics
   * of its messages, whose waiters decide the wake flag; `announces` (a notice segment
   * only): the topics of the messages it announces — they decide its wake flag instead and
   * are stored with it as `wt`, since its entries do not name them.
   */
  build: (
    firstSeq: number,
    allFirstSeqs: number[],
    opened: boolean[],
    pack: boolean,
  ) => { stored: object[]; packed?: Uint8Array; ttl: number; topics?: readonly string[]; announces?: readonly string[] };
}

/**
 * Whether a segment holding messages of `topics` must carry the wake flag at
 * time `now` (ms). Wired to the catalog (services/stores.ts); it may read
 * topic items, never write.
 */
export type WakeCheck = (topics: readonly string[], now: number) => Promise<boolean>;

const topicsOf = (records: readonly MessageRecord[]): string[] => [...new Set(records.map((r) => r.topic))];

export interface AppendPlan {
  records: MessageRecord[];
  /** Items written in the same transaction as the segment (dedup markers, key index, cursor updates). */
  extras?: WriteBatch;
}

/**
 * An append made with `once` lost its race (another writer took the
 * next sequence number): the caller moves to another stream instead of
 * retrying this one (standard partitions: PartitionPicker).
 */
export class LostRaceError extends Error {
  constructor(readonly stream: string) {
    super(`Lost the append race on ${stream}`);
    this.name = 'LostRaceError';
  }
}

export interface StreamLogOptions {
  /**
   * Write segments of ≥ 2 records packed (`mz`) when that is smaller (default true). Readers take
   * both forms whatever this says; off is for an upgrade from, or a rollback to, a version that
   * reads only `m` (README, "Upgrading").
   */
  packSegments?: boolean;
  /** How lost races wait and when they give up (default: 2 s budget, real time). Tests inject a fake stopwatch. */
  contention?: Contention;
  /** Told each append's outcome (landed, races lost, throttled): the per-topic contention metrics (append-meter.ts). */
  observe?: AppendObserver;
}

export interface AppendOptions {
  /**
   * One try: a lost race throws {@link LostRaceError} (the caller goes elsewhere). Otherwise lost
   * races are retried with full-jitter backoff for up to 2 s, then 429 Throttled (append-contention.ts).
   */
  once?: boolean;
  /**
   * False: the segment never carries the wake flag. The sender's FIFO segments: a receive
   * finds them only through their notice, written after them, so the notice segment
   * carries the flag (a wake-up before the notice exists would find nothing, and a push
   * drain would end without the message).
   */
  wake?: boolean;
  /**
   * Runs once the segments' sequence numbers are known and just before they are
   * written (each attempt); throwing stops the append, nothing written. The
   * transaction-free release claims its messages' addresses here.
   */
  beforeWrite?: (firstSeqs: number[]) => Promise<void>;
  /** How many records `plan` returns: required on a sequenced stream ({@link StreamWrite.count}). */
  count?: number;
}

/** New grants a sequenced write takes after its range was filled before its put landed (each a sign of a put slower than F). */
const FILLED_TRIES_MAX = 3;

/** The entries a write to a sequenced stream declared (its grant's size). */
const grantCount = (write: StreamWrite): number => {
  if (write.count === undefined || write.count < 1) throw new Error(`a write to the sequenced stream ${write.stream} must declare its count`);
  return write.count;
};

const MIN_SK = segmentSk(0);
const MAX_SK = segmentSk(MAX_SEQ);
/** How long a head hint may be used after this process's own append. */
const HINT_TTL_MS = 2000;
/** How long hints stay off on a stream after one was stale. */
const HINT_BACKOFF_MS = 10_000;
/**
 * A FIFO shard's head segment this close to its `ttl` (ms) is not appended to: TTL may delete it
 * once its `ttl` passed, and every writer that trusted it must have landed its next segment by
 * then (a request lasts far less). The writer opens a new epoch instead (docs/design.md).
 */
export const HEAD_MARGIN_MS = 60_000;

/**
 * Query pages one stream read takes at most, the first included. A page DynamoDB cut holds 1 MB of
 * segments (DynamoDB Local answers the segment that passes 1 MB too), at the least 1 MB less one
 * segment (≤ 350 KB, SEGMENT_MAX_BYTES): ≈ 690 KB. 8 such pages pass the 5 MB of JSON a receive
 * answers (`Limits.answerMaxBytes`), which bounds what a claim can use of what it reads.
 */
export const READ_PAGES_MAX = 8;

/** Epoch starts this process opened lately, remembered for the notices that announce them. */
const OPENED_REMEMBERED = 1000;

/** An item as a failed condition returned it (marshalled: the document client leaves it so). */
type StoredImage = Record<string, AttributeValue>;

/**
 * The head a lost try learned from the item its segment put collided with (learned heads, above):
 * that segment, when it holds messages; undefined (read the head) for a closing marker, whose
 * number the old epoch's writers must not continue, or when DynamoDB returned nothing.
 */
export function learnedHead(image: StoredImage | undefined): Head | undefined {
  // Three attributes read as stored: the entries (up to ~350 KB) are never unmarshalled.
  const sk = image?.sk?.S;
  const count = Number(image?.n?.N);
  const ttl = image?.ttl?.N;
  if (sk === undefined || sk === SENTINEL_SK || !Number.isInteger(count) || count <= 0) return undefined;
  return { kind: 'segment', seq: Number(sk), count, ...(ttl === undefined ? {} : { ttl: Number(ttl) }) };
}

/** Whether a shard stream's head segment may no longer be appended to (its `ttl` is near or past). */
export const closingHead = (head: Head, now: number): boolean =>
  head.kind === 'segment' && head.ttl !== undefined && head.ttl * 1000 <= now + HEAD_MARGIN_MS;

interface HeadHint {
  /** The first sequence number of the next segment, as of this process's last append. */
  next: number;
  at: number;
}

export class StreamLog {
  private readonly hints = new Map<string, HeadHint>();
  private readonly staleUntil = new Map<string, number>();
  private readonly appending = new Map<string, number>();
  private readonly opened = new Map<string, number>();
  private readonly contention: Contention;
  private readonly sequencer: Sequencer;
  private readonly fill = new SegmentFill();

  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly table: string,
    private readonly clock: Clock,
    private readonly wakes: WakeCheck = async () => false,
    private readonly options: StreamLogOptions = {},
  ) {
    this.contention = options.contention ?? new Contention();
    this.sequencer = new Sequencer(doc, table);
  }

  /** The head as this process last left it, when that is recent and nobody here is appending. */
  private hintedHead(stream: string, now: number): Head | undefined {
    const hint = this.hints.get(stream);
    if (!hint || now - hint.at > HINT_TTL_MS || (this.appending.get(stream) ?? 0) > 0) return undefined;
    if ((this.staleUntil.get(stream) ?? 0) > now) return undefined;
    return { kind: 'segment', seq: hint.next - 1, count: 1 };
  }

  private track(streams: string[], delta: 1 | -1): void {
    for (const stream of streams) {
      const n = (this.appending.get(stream) ?? 0) + delta;
      if (n > 0) this.appending.set(stream, n);
      else this.appending.delete(stream);
    }
  }

  async head(stream: string): Promise<Head> {
    // A sequenced stream's head is its counter: every number granted from here on is at or above
    // `nx`, wherever it lands (grants below it may still be in flight).
    if (isSequencedStream(stream)) return this.sequencer.head(stream);
    const { Items } = await call(() => this.doc.send(
      new QueryCommand({
        TableName: this.table,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': streamPk(stream) },
        ScanIndexForward: false,
        Limit: 1,
        ConsistentRead: true,
        ProjectionExpression: 'sk, n, eb, #t',
        ExpressionAttributeNames: { '#t': 'ttl' },
      })),
    );
    const item = Items?.[0];
    if (!item) return { kind: 'none' };
    if (item.sk === SENTINEL_SK) return { kind: 'sentinel', base: Number(item.eb) };
    return { kind: 'segment', seq: Number(item.sk), count: Number(item.n), ...(item.ttl === undefined ? {} : { ttl: Number(item.ttl) }) };
  }

  /** The sentinel alone (a shard epoch opened over a closing head conditions on it). */
  private async sentinel(stream: string): Promise<Head> {
    const { Items } = await call(() => this.doc.send(
      new QueryCommand({
        TableName: this.table,
        KeyConditionExpression: 'pk = :pk AND sk = :s',
        ExpressionAttributeValues: { ':pk': streamPk(stream), ':s': SENTINEL_SK },
        ConsistentRead: true,
        ProjectionExpression: 'eb',
      })),
    );
    const item = Items?.[0];
    return item ? { kind: 'sentinel', base: Number(item.eb) } : { kind: 'none' };
  }

  /**
   * Whether this process opened an epoch of `stream` at `seq` (recently): the notice announcing
   * that segment says so, so that statistics do not count the jump of the sequence numbers.
   */
  openedEpochAt(stream: string, seq: number): boolean {
    return this.opened.get(stream) === seq;
  }

  /** The sequence number the next appended message would get. */
  static nextAfter(head: Head): number {
    if (head.kind === 'segment') return head.seq + head.count;
    if (head.kind === 'sentinel') return head.base + 1;
    return 1;
  }

  /**
   * Appends one segment built by `plan(firstSeq)`; retries lost races (unless `once`).
   * Returns the first sequence number. Throws {@link ItemConditionFailedError}
   * when one of the plan's extra items fails its own condition.
   */
  async append(
    stream: string,
    plan: (firstSeq: number) => AppendPlan,
    options: AppendOptions = {},
  ): Promise<{ seq: number; records: MessageRecord[] }> {
    let records: MessageRecord[] = [];
    let extras = new WriteBatch();
    const [seq] = await this.appendMany(
      [
        {
          stream,
          ...(options.count === undefined ? {} : { count: options.count }),
          build: (first, _all, _opened, pack) => {
            const planned = plan(first);
            records = planned.records;
            extras = planned.extras ?? new WriteBatch();
            return {
              ...packSegmentRecords(records, pack),
              ttl: Math.ceil(Math.max(...records.map((r) => r.expiresAt)) / 1000),
              topics: topicsOf(records),
            };
          },
        },
      ],
      () => extras,
      options,
    );
    return { seq: seq ?? 0, records };
  }

  /**
   * Appends one segment to each of several streams (at least one) in one
   * transaction, with `extras` written atomically alongside (all or nothing).
   * A stream may appear once. Returns each segment's first sequence number.
   * Throws {@link ItemConditionFailedError} when an extra item fails its own
   * condition. (Extras without segments: BatchWriter.)
   */
  async appendMany(
    writes: StreamWrite[],
    extras: (firstSeqs: number[]) => WriteBatch = () => new WriteBatch(),
    options: AppendOptions = {},
  ): Promise<number[]> {
    if (writes.length === 0) throw new Error('appendMany needs a stream write; write a batch alone with BatchWriter');
    const streams = writes.map((w) => w.stream);
    // Decided before this append counts as in flight, in the same tick: two appends of this
    // process never both trust one hint.
    const now = this.clock.now();
    let hinted = writes.map((w) => this.hintedHead(w.stream, now));
    this.track(streams, 1);
    try {
      // Lost races wait (full jitter, from a level remembered per stream) and give up after a time budget.
      const run = options.once ? undefined : this.contention.begin(streams);
      /** The heads the last lost try learned from its failed puts (learned heads, above). */
      let learned: Array<Head | undefined> = writes.map(() => undefined);
      /** Tries whose granted range a reader had filled (it came too late): taken again, no race lost. */
      let filled = 0;
      for (;;) {
        const fresh = (await run?.turn()) ?? false;
        const known = writes.map((_, i) => (fresh ? learned[i] : undefined) ?? hinted[i]);
        const tried = await this.tryAppend(writes, extras, known, options.wake !== false, run !== undefined, options.beforeWrite);
        if ('seqs' in tried) {
          run?.won();
          this.tell(streams, { landed: true, lost: run?.lost ?? 0, throttled: false });
          return tried.seqs;
        }
        if ('filled' in tried) {
          if (++filled <= FILLED_TRIES_MAX) continue;
          this.tell(streams, { landed: false, lost: run?.lost ?? 0, throttled: true });
          throw new ThrottledError('The message store is too slow to take this write in time; retry the request.');
        }
        // A hint kept by a transaction (its put passed) is still a hint: after a lost race, not trusted.
        learned = tried.learned.map((head, i) => (head !== undefined && head === hinted[i] ? undefined : head));
        if (hinted.some(Boolean)) {
          // The attempt trusted a hint and lost: another writer is active here.
          writes.forEach((w, i) => {
            if (!hinted[i]) return;
            this.hints.delete(w.stream);
            this.staleUntil.set(w.stream, this.clock.now() + HINT_BACKOFF_MS);
          });
          hinted = writes.map(() => undefined);
        }
        if (!run) {
          this.tell(streams, { landed: false, lost: 1, throttled: false });
          throw new LostRaceError(streams[0] ?? '');
        }
        if (!run.lostRace()) {
          this.tell(streams, { landed: false, lost: run.lost, throttled: true });
          throw new ThrottledError('Too many concurrent writers on one stream; retry the request.');
        }
      }
    } finally {
      this.track(streams, -1);
    }
  }

  /**
   * An append of the caller's (one-try appends on several streams: a standard topic's send, the
   * claimed release) answered 429 after losing on them: counted as throttled on `streams`.
   */
  reportThrottled(streams: readonly string[]): void {
    this.tell(streams, { landed: false, lost: 0, throttled: true });
  }

  /** Tells the observer an append's outcome; a failing observer never fails an append (its figures are statistics). */
  private tell(streams: readonly string[], outcome: AppendOutcome): void {
    try {
      this.options.observe?.(streams, outcome);
    } catch {
      // Statistics only: the append's own result stands.
    }
  }

  /**
   * One append attempt: the first sequence numbers, or, when it lost a race, per write the head
   * its failed put learned (undefined: read it next time). `known`: heads to use instead of reading
   * them (a hint, or what the last try learned).
   */
  private async tryAppend(
    writes: StreamWrite[],
    extras: (firstSeqs: number[]) => WriteBatch,
    known: Array<Head | undefined>,
    mayWake: boolean,
    learn: boolean,
    beforeWrite?: (firstSeqs: number[]) => Promise<void>,
  ): Promise<{ seqs: number[] } | { learned: Array<Head | undefined> } | { filled: true }> {
    const now = this.clock.now();
    // A sequenced stream's write takes its numbers from the counter (it cannot lose a race); the
    // others read their head (or use the one known).
    const [heads, granted] = await Promise.all([
      Promise.allSettled(writes.map(async (w, i) => (isSequencedStream(w.stream) ? undefined : (known[i] ?? this.head(w.stream))))),
      Promise.allSettled(writes.map(async (w) => (isSequencedStream(w.stream) ? this.sequencer.grant(w.stream, grantCount(w), now) : undefined))),
    ]);
    const grants = granted.map((g) => (g.status === 'fulfilled' ? g.value : undefined));
    const failed = [...heads, ...granted].find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) {
      // Ranges granted for a write that cannot go out are given up at once.
      await this.fillGranted(writes, grants, () => true);
      throw failed.reason;
    }
    const outcome = { filled: false };
    try {
      return await this.tryAppendAt(writes, extras, heads.map((h) => (h.status === 'fulfilled' ? h.value : undefined)), grants, mayWake, learn, now, outcome, beforeWrite);
    } catch (error) {
      // Nothing landed (or the answer was lost: then the fill fails on the segment, harmlessly):
      // the granted ranges are filled at once, so that no reader waits for them.
      if (!outcome.filled) await this.fillGranted(writes, grants, () => true);
      throw error;
    }
  }

  /** Fills the granted ranges of the writes `unlanded` names (their segments were not written). */
  private async fillGranted(writes: StreamWrite[], grants: Array<Grant | undefined>, unlanded: (i: number) => boolean): Promise<void> {
    await Promise.all(
      writes.map((write, i) => {
        const grant = grants[i];
        return grant && unlanded(i) ? this.sequencer.fillOwn(write.stream, grant) : undefined;
      }),
    );
  }

  /** {@link tryAppend} once the heads are read and the sequenced ranges granted. */
  private async tryAppendAt(
    writes: StreamWrite[],
    extras: (firstSeqs: number[]) => WriteBatch,
    heads: Array<Head | undefined>,
    grants: Array<Grant | undefined>,
    mayWake: boolean,
    learn: boolean,
    now: number,
    /** Set when this try gave its granted ranges up itself (filled them). */
    outcome: { filled: boolean },
    beforeWrite?: (firstSeqs: number[]) => Promise<void>,
  ): Promise<{ seqs: number[] } | { learned: Array<Head | undefined> } | { filled: true }> {
    // A FIFO shard's head near its `ttl` is closed, not continued: the epoch opens over the sentinel.
    const closing = writes.map((w, i) => !grants[i] && isShardStream(w.stream) && closingHead(heads[i] ?? { kind: 'none' }, now));
    const sentinels = await Promise.all(writes.map((w, i) => (closing[i] ? this.sentinel(w.stream) : undefined)));
    const items: TransactItem[] = [];
    /** Where each write's segment put is among `items`. */
    const segmentAt: number[] = [];
    const seqs: number[] = [];
    const counts: number[] = [];
    const opened: boolean[] = [];
    /** The sentinel put of each write that opens an epoch (its `ttl` is set once the segment is built). */
    const sentinelPuts = new Map<number, Record<string, unknown>>();
    writes.forEach((write, i) => {
      const grant = grants[i];
      if (grant) {
        seqs.push(grant.start);
        opened.push(grant.opened);
        return;
      }
      const head = heads[i] ?? { kind: 'none' };
      const shard = isShardStream(write.stream);
      if (head.kind === 'segment' && !closing[i]) {
        seqs.push(StreamLog.nextAfter(head));
        opened.push(false);
        return;
      }
      // A new epoch starts above every sequence number the stream could ever have used
      // (each epoch holds far fewer than 1000 messages per millisecond of its life). A shard
      // stream with nothing stored may have lived before (its sentinel expired): from the clock too.
      const sentinel = closing[i] ? (sentinels[i] ?? { kind: 'none' }) : head;
      const after = head.kind === 'segment' ? StreamLog.nextAfter(head) : 0;
      const base =
        sentinel.kind === 'sentinel'
          ? Math.max(now * 1000, sentinel.base + 1, after)
          : shard
            ? Math.max(now * 1000, after)
            : 0;
      seqs.push(base + 1);
      opened.push(true);
      const sentinelItem: Record<string, unknown> = { pk: streamPk(write.stream), sk: SENTINEL_SK, eb: base };
      sentinelPuts.set(i, sentinelItem);
      items.push({
        Put: {
          TableName: this.table,
          Item: sentinelItem,
          ConditionExpression: sentinel.kind === 'none' ? 'attribute_not_exists(pk)' : 'eb = :old',
          ...(sentinel.kind === 'sentinel' ? { ExpressionAttributeValues: { ':old': sentinel.base } } : {}),
        },
      });
    });
    // Packing off (an upgrade's first step): the per-record form every version reads, no frame deflated.
    const pack = this.options.packSegments !== false;
    const built = writes.map((write, i) => write.build(seqs[i] ?? 1, seqs, opened, pack));
    const wake = await Promise.all(
      built.map(({ topics, announces }) => {
        const waitedFor = announces ?? topics;
        return mayWake && waitedFor !== undefined && waitedFor.length > 0 ? this.wakes(waitedFor, now) : false;
      }),
    );
    writes.forEach((write, i) => {
      const seq = seqs[i] ?? 1;
      const { stored, packed, ttl, announces } = built[i] ?? { stored: [], ttl: 0 };
      counts.push(stored.length);
      const grant = grants[i];
      if (grant && grant.count !== stored.length) throw new Error(`a sequenced write of ${write.stream} declared ${grant.count} entries and built ${stored.length}`);
      if (opened[i] && !grant && isShardStream(write.stream)) {
        // The sentinel of a shard lives as long as the epoch's first segment.
        const sentinelItem = sentinelPuts.get(i);
        if (sentinelItem) sentinelItem.ttl = ttl;
        const head = heads[i];
        if (closing[i] && head?.kind === 'segment') {
          // The closing marker takes the one number a late writer of the old epoch could still put.
          items.push({
            Put: {
              TableName: this.table,
              Item: { pk: streamPk(write.stream), sk: segmentSk(StreamLog.nextAfter(head)), n: 0, m: [], ttl },
              ConditionExpression: 'attribute_not_exists(pk)',
            },
          });
        }
      }
      segmentAt.push(items.length);
      items.push({
        Put: {
          TableName: this.table,
          Item: {
            pk: streamPk(write.stream),
            sk: segmentSk(seq),
            n: stored.length,
            ...segmentRecordsItem({ stored, packed }),
            ttl,
            ...(grant ? grantAttributes(grant) : {}),
            ...(wake[i] ? { [WAKE_FLAG]: 1, ...(announces ? { [WAKE_TOPICS]: [...announces] } : {}) } : {}),
          },
          ConditionExpression: 'attribute_not_exists(pk)',
          // A lost race returns the winner's segment (no read units): the next try's head. Not for
          // a one-try append, which would only download it.
          ...(learn ? { ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const } : {}),
        },
      });
    });
    const offset = items.length;
    const batch = extras(seqs);
    items.push(...batch.items);
    if (beforeWrite) await beforeWrite(seqs);
    if (grants.some((g) => g && this.clock.now() - g.at > GRANT_PUT_DEADLINE_MS)) {
      // No put of a grant this old may be sent (readers pass holes on that bound: gaps.ts).
      await this.fillGranted(writes, grants, () => true);
      return { filled: true };
    }
    try {
      if (items.length === 1 && items[0]?.Put) {
        // The one item is the segment itself: a lost race fails its condition (retried below). A try
        // token makes the SDK's retry of a put that landed pass on its own item (try-token.ts) instead
        // of failing as a lost race, which would append the messages a second time.
        const put = withTryToken(items[0].Put);
        try {
          await this.doc.send(new PutCommand(put));
        } catch (error) {
          if (!isConditionalFailure(error)) throw error;
          // A sequenced range's put fails only on a filler: a reader gave it up (too late). New numbers.
          if (grants[0]) return { filled: true };
          return { learned: [learnedHead((error as { Item?: StoredImage }).Item)] };
        }
      } else {
        try {
          await this.doc.send(new TransactWriteCommand({ TransactItems: items }));
        } catch (error) {
          const reasons = cancellationReasons(error);
          if (!reasons) throw error;
          // The transaction wrote nothing: granted ranges whose put was not the failing one are filled
          // now (those that failed met a filler already).
          await this.fillGranted(writes, grants, (i) => reasons[segmentAt[i] ?? -1] !== 'ConditionalCheckFailed');
          outcome.filled = true;
          const extra = failedItem(error, batch, offset);
          if (extra) throw extra;
          // Only sequenced puts failed (each met a filler): new numbers, no race lost. Any other failed
          // put (a chained segment, a sentinel or a closing marker) is a lost race, handled below.
          const failedPuts = reasons.slice(0, offset).flatMap((code, at) => (code === 'ConditionalCheckFailed' ? [at] : []));
          const sequencedPut = (at: number) => segmentAt.some((s, i) => s === at && grants[i] !== undefined);
          if (failedPuts.length > 0 && failedPuts.every(sequencedPut)) return { filled: true };
          if (reasons.slice(0, offset).some((code) => code === 'ConditionalCheckFailed')) {
            const images = cancellationImages(error);
            // A write whose segment put failed learned the winner's head; one whose put passed keeps
            // the head it used (its number was free), unless it opened an epoch (read again).
            return {
              learned: segmentAt.map((at, i) =>
                reasons[at] === 'ConditionalCheckFailed' ? learnedHead(images[at]) : reasons[at] === 'None' && !opened[i] ? heads[i] : undefined,
              ),
            };
          }
          throw error;
        }
      }
      const at = this.clock.now();
      writes.forEach((write, i) => {
        if (!grants[i]) this.hints.set(write.stream, { next: (seqs[i] ?? 1) + (counts[i] ?? 0), at });
        if (opened[i] && isShardStream(write.stream)) this.rememberOpened(write.stream, seqs[i] ?? 1);
      });
      return { seqs };
    } catch (error) {
      if (error instanceof ItemConditionFailedError) throw error;
      throw translateDynamoError(error);
    }
  }

  private rememberOpened(stream: string, seq: number): void {
    this.opened.delete(stream);
    this.opened.set(stream, seq);
    if (this.opened.size > OPENED_REMEMBERED) this.opened.delete(this.opened.keys().next().value as string);
  }

  /** Appends notices (FIFO shard activity) to a notice stream. */
  /**
   * Appends a notice segment on its own, after the segments it announces were written;
   * `topics` (those messages' topics) decide its wake flag (see {@link AppendOptions.wake}).
   */
  async appendNotices(stream: string, notices: Notice[], ttl: number, topics?: readonly string[], options: Pick<AppendOptions, 'once'> = {}): Promise<void> {
    await this.appendMany([StreamLog.noticeWrite(stream, () => notices, ttl, topics)], undefined, options);
  }

  /**
   * A notice segment for {@link appendMany}; `notices` may use the other writes' sequence numbers.
   * `topics`: only when it alone must wake (written after its segments, not with them).
   */
  static noticeWrite(stream: string, notices: (allFirstSeqs: number[], opened: boolean[]) => Notice[], ttl: number, topics?: readonly string[]): StreamWrite {
    return {
      stream,
      build: (_seq, all, opened) => ({ stored: notices(all, opened).map(toStoredNotice), ttl, ...(topics && topics.length > 0 ? { announces: topics } : {}) }),
    };
  }

  /** A message segment for {@link appendMany}. */
  static recordWrite(stream: string, count: number, records: (firstSeq: number) => MessageRecord[]): StreamWrite {
    return {
      stream,
      count,
      build: (seq, _all, _opened, pack) => {
        const built = records(seq);
        return {
          ...packSegmentRecords(built, pack),
          ttl: Math.ceil(Math.max(...built.map((r) => r.expiresAt)) / 1000),
          topics: topicsOf(built),
        };
      },
    };
  }

  /** Notice segments from the one starting at `fromSeq` on (a cut page followed within the default bounds). */
  async readNotices(stream: string, fromSeq: number, limit: number, consistent = true): Promise<NoticeSegment[]> {
    const { items } = await this.query(stream, fromSeq, limit, { consistent });
    return items.map((item) => ({
      seq: Number(item.sk),
      count: Number(item.n),
      notices: ((item.m as StoredNotice[] | undefined) ?? []).map(fromStoredNotice),
      ...(item.ttl === undefined ? {} : { ttl: Number(item.ttl) }),
    }));
  }

  /** Segments from the one starting at `fromSeq` on, oldest first, up to `limit` (a cut page followed within the default bounds). */
  async read(stream: string, fromSeq: number, limit: number): Promise<Segment[]> {
    return (await this.readSegments(stream, fromSeq, limit)).segments;
  }

  /**
   * Segments from the one starting at `fromSeq` on, oldest first, up to `limit`, and whether the
   * stream may go on past them. A Query answer stops at 1 MB of data read, however many items
   * `Limit` asked for (two or three of the largest segments): the read goes on from its
   * `LastEvaluatedKey` while `bounds` allow, and says `more` where it stopped short.
   */
  async readSegments(stream: string, fromSeq: number, limit: number, bounds: ReadBounds = {}): Promise<SegmentRead> {
    const { items, more, sized } = await this.query(stream, fromSeq, limit, bounds);
    const segments = items.map((item) => this.toSegment(stream, item));
    if (!isSequencedStream(stream)) return { segments, more, ...(sized ? { sized } : {}) };
    // Holes are filled or held here, for every reader: none can pass a number still being written.
    const settled = await this.sequencer.settle(stream, fromSeq, segments, this.clock.now(), (item) => this.toSegment(stream, item));
    return settled.heldUntil === undefined
      ? { segments: settled.items, more, ...(sized ? { sized } : {}) }
      : { segments: settled.items, more: true, heldUntil: settled.heldUntil, ...(sized ? { sized } : {}) };
  }

  /** A claim went through every segment of a sized read of `stream` and fell short: its next reads ask for their limit (segment-fill.ts). */
  fellShort(stream: string): void {
    this.fill.fellShort(stream);
  }

  private async query(stream: string, fromSeq: number, limit: number, bounds: ReadBounds): Promise<{ items: Record<string, unknown>[]; more: boolean; sized: boolean }> {
    const items: Record<string, unknown>[] = [];
    const maxPages = bounds.maxPages ?? READ_PAGES_MAX;
    let bytes = 0;
    let start: Record<string, unknown> | undefined;
    const firstLimit = bounds.sized === false ? limit : this.fill.firstPage(stream, fromSeq, bounds.reach, limit);
    // Where the segments read so far end, and whether the first page, sized by the fill, was all the read had.
    let end = 0;
    let pages = 0;
    let firstPageFull = false;
    for (let page = 0; page < maxPages; page++) {
      const { Items, LastEvaluatedKey } = await call(() =>
        this.doc.send(
          new QueryCommand({
            TableName: this.table,
            KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
            ExpressionAttributeValues: { ':pk': streamPk(stream), ':from': segmentSk(fromSeq), ':to': MAX_SK },
            // The first page sized by the stream's fill when the caller says how far it needs (segment-fill.ts);
            // a page that ended right at `reach` needs only the segment holding it, which says whether more follows.
            Limit: page === 0 ? firstLimit : end === bounds.reach ? 1 : limit - items.length,
            ConsistentRead: bounds.consistent ?? true,
            ...(start ? { ExclusiveStartKey: start } : {}),
          }),
        ),
      );
      pages++;
      if (page === 0) firstPageFull = (Items ?? []).length === firstLimit;
      for (const item of Items ?? []) {
        items.push(item);
        if (bounds.maxBytes !== undefined) bytes += itemBytes(item);
        end = Number(item.sk) + Number(item.n);
      }
      start = LastEvaluatedKey;
      // The end of the stream, or `limit` reached (DynamoDB then answers a LastEvaluatedKey whether or
      // not more follows: `more` as it always was), or the caller has what it can use.
      if (start === undefined || items.length >= limit) break;
      // Past `reach`, not at it: the segment holding `reach` says whether more follows (a page that ends
      // right at it, its Limit hit, would report `more` for a stream that ends there).
      if (bytes >= (bounds.maxBytes ?? Infinity) || end > (bounds.reach ?? Infinity)) break;
    }
    // Receive reads only (they pass `reach`); fillers of a sequenced stream hold no messages.
    if (bounds.reach !== undefined) this.fill.learn(stream, items.filter((item) => item.hf !== 1).map((item) => Number(item.n)));
    // Sized: the fill's guess alone decided where the read stopped (its one page full, ending past `reach`),
    // so a read of `limit` could have reached further. A page cut at 1 MB, `maxBytes` or later pages decided otherwise.
    const sized = firstLimit < limit && pages === 1 && firstPageFull && start !== undefined && end > (bounds.reach ?? Infinity);
    return { items, more: start !== undefined, sized };
  }

  /**
   * The segment holding `seq`, if it still exists. `consistent` false reads at half the price: a
   * segment never changes once written, so only one written in the last second may be missed.
   */
  async segmentContaining(stream: string, seq: number, consistent = true): Promise<Segment | undefined> {
    const segment = await this.segmentAtOrBelow(stream, seq, consistent);
    return segment && seq < segment.seq + segment.count ? segment : undefined;
  }

  /**
   * The first stored segment holding records from `seq` up to below `end` (markers and fillers
   * passed over, page after page: they are few), as stored (not settled); undefined when none. For
   * a search by time that probed a gap (between epochs, a hole): the gap says nothing, the segment
   * above it does.
   */
  async segmentWithRecordsFrom(stream: string, seq: number, end: number): Promise<Segment | undefined> {
    if (seq >= end) return undefined;
    for await (const segment of this.segmentsBetween(stream, segmentSk(seq), segmentSk(end - 1), { limit: 8, consistent: true, forward: true })) {
      if (segment.records.length > 0) return segment;
    }
    return undefined;
  }

  /** The stored segments with sort keys in [`from`, `to`], page by page (`limit` a page), as stored. */
  private async *segmentsBetween(stream: string, from: string, to: string, options: { limit: number; consistent: boolean; forward: boolean }): AsyncGenerator<Segment> {
    let start: Record<string, unknown> | undefined;
    do {
      const page = await call(() =>
        this.doc.send(
          new QueryCommand({
            TableName: this.table,
            KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
            ExpressionAttributeValues: { ':pk': streamPk(stream), ':from': from, ':to': to },
            ScanIndexForward: options.forward,
            Limit: options.limit,
            ConsistentRead: options.consistent,
            ExclusiveStartKey: start,
          }),
        ),
      );
      for (const item of page.Items ?? []) yield this.toSegment(stream, item);
      start = page.LastEvaluatedKey;
    } while (start);
  }

  /**
   * The stored segments that hold `from`…`to`, oldest first (a range claim's messages: docs/design.md,
   * Range claims), as stored (not settled: range claims are never made on sequenced streams). One
   * round trip: the segment at or below `from` (a descending Query of one item) and, at once, those
   * starting in (`from`, `to`] (a forward Query limited to one more than the `to − from` it can hold, so it ends in one page unless 1 MB stops it: then it follows).
   * A segment either read does not show yet (`consistent` false) is a gap to the caller.
   */
  async segmentsCovering(stream: string, from: number, to: number, consistent = true): Promise<Segment[]> {
    const above = async (): Promise<Segment[]> => {
      const out: Segment[] = [];
      if (to <= from) return out;
      for await (const segment of this.segmentsBetween(stream, segmentSk(from + 1), segmentSk(to), { limit: to - from + 1, consistent, forward: true })) out.push(segment);
      return out;
    };
    const [first, rest] = await Promise.all([this.segmentAtOrBelow(stream, from, consistent), above()]);
    return first === undefined ? rest : [first, ...rest];
  }

  /** The nearest stored item at or below `seq` (whether or not it holds `seq`), as stored. */
  async segmentAtOrBelow(stream: string, seq: number, consistent = true): Promise<Segment | undefined> {
    const { Items } = await call(() => this.doc.send(
      new QueryCommand({
        TableName: this.table,
        KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
        ExpressionAttributeValues: { ':pk': streamPk(stream), ':from': MIN_SK, ':to': segmentSk(seq) },
        ScanIndexForward: false,
        Limit: 1,
        ConsistentRead: consistent,
      })),
    );
    return Items?.[0] ? this.toSegment(stream, Items[0]) : undefined;
  }

  /**
   * A sequenced stream: the bottom of a hole directly below `seq` that a writer may still fill
   * (gaps.ts: held or to fill), so that a position placed at `seq` (a new shard cursor, a seek)
   * is lowered to it; undefined when nothing below `seq` can still be written. Two Queries (and the
   * counter, when nothing is stored at or above `seq`).
   */
  async liveGapBelow(stream: string, seq: number): Promise<number | undefined> {
    if (!isSequencedStream(stream)) return undefined;
    const keyed = (condition: string, values: Record<string, unknown>, forward: boolean) =>
      call(() =>
        this.doc.send(
          new QueryCommand({
            TableName: this.table,
            KeyConditionExpression: `pk = :pk AND ${condition}`,
            ExpressionAttributeValues: { ':pk': streamPk(stream), ...values },
            ScanIndexForward: forward,
            Limit: 1,
            ConsistentRead: true,
            ProjectionExpression: 'sk, n, ga, pv, pt, ef',
          }),
        ),
      );
    const [below, above] = await Promise.all([
      keyed('sk BETWEEN :from AND :to', { ':from': MIN_SK, ':to': segmentSk(Math.max(0, seq - 1)) }, false),
      keyed('sk >= :at', { ':at': segmentSk(seq) }, true),
    ]);
    const lower = below.Items?.[0];
    const upper = above.Items?.[0];
    // Nothing stored at or above `seq`: the counter stands for the next item (its last grant is the
    // one below it), so a put in flight above everything stored is a hole too (a third read).
    const granted = upper ? grantedOf(upper) : await this.sequencer.counter(stream);
    if (!granted) return undefined;
    const bottom = Math.max(lower ? Number(lower.sk) + Number(lower.n) : 0, granted.epoch);
    // `seq` inside the item below, or no gap at all: nothing to lower (a position is only ever lowered).
    if (bottom > seq || bottom >= granted.seq) return undefined;
    return gapState(bottom, granted, this.clock.now()).kind === 'pass' ? undefined : bottom;
  }

  /**
   * The oldest segment still stored (for counts, ages and where `earliest` starts). On a sequenced
   * stream, as stored (not settled: a hole below it is no reason to answer nothing), and a live hole
   * just below it lowers it: the answer is then a segment of no records from the hole's bottom.
   */
  async first(stream: string): Promise<Segment | undefined> {
    const { items } = await this.query(stream, 0, 1, {});
    const item = items[0];
    if (!item) return undefined;
    const segment = this.toSegment(stream, item);
    const bottom = await this.liveGapBelow(stream, segment.seq);
    return bottom === undefined ? segment : { stream, seq: bottom, count: segment.seq + segment.count - bottom, records: [] };
  }

  /**
   * Fetches segments by (stream, first seq); missing ones (expired) are left out. `consistent` false
   * reads at half the price: a segment never changes once written, so only one written in the last
   * second may be missed.
   */
  async getSegments(keys: Array<{ stream: string; seq: number }>, consistent = true): Promise<Segment[]> {
    const unique = [...new Map(keys.map((key) => [`${key.stream}\u0000${key.seq}`, key])).values()];
    const out: Segment[] = [];
    const itemKeys = unique.map((key) => ({ pk: streamPk(key.stream), sk: segmentSk(key.seq) }));
    for await (const items of batchGetPages(this.doc, this.table, itemKeys, { consistent })) {
      for (const item of items) out.push(this.toSegment(streamOfPk(String(item.pk)), item));
    }
    return out;
  }

  private toSegment(stream: string, item: Record<string, unknown>): Segment {
    const granted = grantedOf(item);
    return {
      stream,
      seq: Number(item.sk),
      count: Number(item.n),
      records: storedRecordsOf(item).map(fromStored),
      ...(granted ? { granted } : {}),
    };
  }
}
