/**
 * Stream logs: append-only, gap-free sequences of messages (docs/design.md §Streams).
 *
 * Items of stream S (keys.ts):
 *   pk `S#<S>`, sk `#`                   sentinel {eb: base of the current epoch}; never expires
 *   pk `S#<S>`, sk `<16-digit seq>`      segment {n: count, m: [entries], ttl}: messages seq … seq+n-1;
 *                                        entries are message records (records.ts) or, on notice
 *                                        streams, notices {h: shard key, f: from, t: to}
 *
 * Append reads the head (the highest item, strongly consistent) and puts the
 * next segment with `attribute_not_exists(pk)`. Whoever loses the race reads
 * again. Because seq k+1 can only be written by someone who saw seq k, a reader
 * that sees k+1 knows every earlier message of the stream is already there:
 * cursors never skip a late writer. When every segment has expired and been
 * removed, the sentinel tells the next writer to open a new epoch above every
 * sequence number ever used, in one transaction with its first segment.
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
 * The wake flag: every message enters a stream here, so this is the one
 * place that sets `w = 1` on a message segment whose topics someone waits
 * for (`wakes`, the catalog's view of the topic items' `pu`/`wu`: design
 * §7.2). The flag only lets the segment's INSERT through the dispatcher's
 * filters; it changes nothing else about the segment.
 */
import { TransactWriteCommand, PutCommand, QueryCommand, BatchGetCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { MessageRecord } from '../../domain/model.js';
import { MAX_SEQ } from '../../domain/streams.js';
import { ThrottledError } from '../../domain/errors.js';
import type { Clock } from '../../ports/clock.js';
import { cancellationReasons, isConditionalFailure, translateDynamoError } from './errors.js';
import { call } from './call.js';
import { WAKE_FLAG } from './dispatch-source.js';
import { SENTINEL_SK, segmentSk, streamOfPk, streamPk } from './keys.js';
import { fromStored, toStored, type StoredRecord } from './records.js';
import { ItemConditionFailedError, WriteBatch, failedItem, type TransactItem } from './write-batch.js';

export type Head =
  | { kind: 'none' }
  | { kind: 'sentinel'; base: number }
  | { kind: 'segment'; seq: number; count: number };

export interface Segment {
  stream: string;
  seq: number;
  count: number;
  records: MessageRecord[];
}

/** FIFO shard activity: shard `shardKey` got messages `from`…`to` (docs/design.md, FIFO). */
export interface Notice {
  shardKey: string;
  from: number;
  to: number;
}
interface StoredNotice {
  h: string;
  f: number;
  t: number;
}
const toStoredNotice = (n: Notice): StoredNotice => ({ h: n.shardKey, f: n.from, t: n.to });
const fromStoredNotice = (n: StoredNotice): Notice => ({ shardKey: n.h, from: n.f, to: n.t });

export interface StreamWrite {
  stream: string;
  /**
   * Builds the stored entries of the segment once its first sequence number
   * is known; `topics`: the topics of its messages (none for notices), whose
   * waiters decide the wake flag.
   */
  build: (firstSeq: number, allFirstSeqs: number[]) => { stored: object[]; ttl: number; topics?: readonly string[] };
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

const MIN_SK = segmentSk(0);
const MAX_SK = segmentSk(MAX_SEQ);
const APPEND_ATTEMPTS = 12;
/** How long a head hint may be used after this process's own append. */
const HINT_TTL_MS = 2000;
/** How long hints stay off on a stream after one was stale. */
const HINT_BACKOFF_MS = 10_000;

interface HeadHint {
  /** The first sequence number of the next segment, as of this process's last append. */
  next: number;
  at: number;
}

export class StreamLog {
  private readonly hints = new Map<string, HeadHint>();
  private readonly staleUntil = new Map<string, number>();
  private readonly appending = new Map<string, number>();

  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly table: string,
    private readonly clock: Clock,
    private readonly wakes: WakeCheck = async () => false,
  ) {}

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
    const { Items } = await call(() => this.doc.send(
      new QueryCommand({
        TableName: this.table,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': streamPk(stream) },
        ScanIndexForward: false,
        Limit: 1,
        ConsistentRead: true,
        ProjectionExpression: 'sk, n, eb',
      })),
    );
    const item = Items?.[0];
    if (!item) return { kind: 'none' };
    if (item.sk === SENTINEL_SK) return { kind: 'sentinel', base: Number(item.eb) };
    return { kind: 'segment', seq: Number(item.sk), count: Number(item.n) };
  }

  /** The sequence number the next appended message would get. */
  static nextAfter(head: Head): number {
    if (head.kind === 'segment') return head.seq + head.count;
    if (head.kind === 'sentinel') return head.base + 1;
    return 1;
  }

  /**
   * Appends one segment built by `plan(firstSeq)`; retries lost races.
   * Returns the first sequence number. Throws {@link ItemConditionFailedError}
   * when one of the plan's extra items fails its own condition.
   */
  async append(stream: string, plan: (firstSeq: number) => AppendPlan): Promise<{ seq: number; records: MessageRecord[] }> {
    let records: MessageRecord[] = [];
    let extras = new WriteBatch();
    const [seq] = await this.appendMany(
      [
        {
          stream,
          build: (first) => {
            const planned = plan(first);
            records = planned.records;
            extras = planned.extras ?? new WriteBatch();
            return {
              stored: records.map(toStored),
              ttl: Math.ceil(Math.max(...records.map((r) => r.expiresAt)) / 1000),
              topics: topicsOf(records),
            };
          },
        },
      ],
      () => extras,
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
  async appendMany(writes: StreamWrite[], extras: (firstSeqs: number[]) => WriteBatch = () => new WriteBatch()): Promise<number[]> {
    if (writes.length === 0) throw new Error('appendMany needs a stream write; write a batch alone with BatchWriter');
    const streams = writes.map((w) => w.stream);
    // Decided before this append counts as in flight, in the same tick: two appends of this
    // process never both trust one hint.
    const now = this.clock.now();
    let hinted = writes.map((w) => this.hintedHead(w.stream, now));
    this.track(streams, 1);
    try {
      for (let attempt = 0; attempt < APPEND_ATTEMPTS; attempt++) {
        if (attempt > 0 && hinted.some(Boolean)) {
          // The first attempt trusted a hint and lost: another writer is active here.
          writes.forEach((w, i) => {
            if (!hinted[i]) return;
            this.hints.delete(w.stream);
            this.staleUntil.set(w.stream, this.clock.now() + HINT_BACKOFF_MS);
          });
          hinted = writes.map(() => undefined);
        }
        const seqs = await this.tryAppend(writes, extras, hinted, attempt);
        if (seqs) return seqs;
      }
    } finally {
      this.track(streams, -1);
    }
    throw new ThrottledError('Too many concurrent writers on one stream; retry the request.');
  }

  /** One append attempt; undefined when it lost a race (after a back-off). */
  private async tryAppend(
    writes: StreamWrite[],
    extras: (firstSeqs: number[]) => WriteBatch,
    hinted: Array<Head | undefined>,
    attempt: number,
  ): Promise<number[] | undefined> {
    const heads = await Promise.all(writes.map((w, i) => hinted[i] ?? this.head(w.stream)));
    const items: TransactItem[] = [];
    const seqs: number[] = [];
    const counts: number[] = [];
    writes.forEach((write, i) => {
      const head = heads[i] ?? { kind: 'none' };
      // A new epoch starts above every sequence number the stream could ever have used
      // (each epoch holds far fewer than 1000 messages per millisecond of its life).
      const base = head.kind === 'sentinel' ? Math.max(this.clock.now() * 1000, head.base + 1) : 0;
      seqs.push(head.kind === 'segment' ? StreamLog.nextAfter(head) : base + 1);
      if (head.kind !== 'segment') {
        items.push({
          Put: {
            TableName: this.table,
            Item: { pk: streamPk(write.stream), sk: SENTINEL_SK, eb: base },
            ConditionExpression: head.kind === 'none' ? 'attribute_not_exists(pk)' : 'eb = :old',
            ...(head.kind === 'sentinel' ? { ExpressionAttributeValues: { ':old': head.base } } : {}),
          },
        });
      }
    });
    const built = writes.map((write, i) => write.build(seqs[i] ?? 1, seqs));
    const now = this.clock.now();
    const wake = await Promise.all(built.map(({ topics }) => (topics && topics.length > 0 ? this.wakes(topics, now) : false)));
    writes.forEach((write, i) => {
      const seq = seqs[i] ?? 1;
      const { stored, ttl } = built[i] ?? { stored: [], ttl: 0 };
      counts.push(stored.length);
      items.push({
        Put: {
          TableName: this.table,
          Item: { pk: streamPk(write.stream), sk: segmentSk(seq), n: stored.length, m: stored, ttl, ...(wake[i] ? { [WAKE_FLAG]: 1 } : {}) },
          ConditionExpression: 'attribute_not_exists(pk)',
        },
      });
    });
    const offset = items.length;
    const batch = extras(seqs);
    items.push(...batch.items);
    try {
      if (items.length === 1 && items[0]?.Put) {
        // The one item is the segment itself: a lost race fails its condition (retried below).
        await this.doc.send(new PutCommand(items[0].Put));
      } else {
        try {
          await this.doc.send(new TransactWriteCommand({ TransactItems: items }));
        } catch (error) {
          const reasons = cancellationReasons(error);
          if (!reasons) throw error;
          const extra = failedItem(error, batch, offset);
          if (extra) throw extra;
          if (reasons.slice(0, offset).some((code) => code === 'ConditionalCheckFailed')) {
            await this.backoff(attempt);
            return undefined;
          }
          throw error;
        }
      }
      const at = this.clock.now();
      writes.forEach((write, i) => this.hints.set(write.stream, { next: (seqs[i] ?? 1) + (counts[i] ?? 0), at }));
      return seqs;
    } catch (error) {
      if (error instanceof ItemConditionFailedError) throw error;
      if (isConditionalFailure(error)) {
        await this.backoff(attempt);
        return undefined;
      }
      throw translateDynamoError(error);
    }
  }

  /** Appends notices (FIFO shard activity) to a notice stream. */
  async appendNotices(stream: string, notices: Notice[], ttl: number): Promise<void> {
    await this.appendMany([StreamLog.noticeWrite(stream, () => notices, ttl)]);
  }

  /** A notice segment for {@link appendMany}; `notices` may use the other writes' sequence numbers. */
  static noticeWrite(stream: string, notices: (allFirstSeqs: number[]) => Notice[], ttl: number): StreamWrite {
    return { stream, build: (_seq, all) => ({ stored: notices(all).map(toStoredNotice), ttl }) };
  }

  /** A message segment for {@link appendMany}. */
  static recordWrite(stream: string, records: (firstSeq: number) => MessageRecord[]): StreamWrite {
    return {
      stream,
      build: (seq) => {
        const built = records(seq);
        return {
          stored: built.map(toStored),
          ttl: Math.ceil(Math.max(...built.map((r) => r.expiresAt)) / 1000),
          topics: topicsOf(built),
        };
      },
    };
  }

  /** Notice segments from the one starting at `fromSeq` on. */
  async readNotices(stream: string, fromSeq: number, limit: number): Promise<Array<{ seq: number; count: number; notices: Notice[] }>> {
    const items = await this.query(stream, fromSeq, limit);
    return items.map((item) => ({
      seq: Number(item.sk),
      count: Number(item.n),
      notices: ((item.m as StoredNotice[] | undefined) ?? []).map(fromStoredNotice),
    }));
  }

  /** Segments from the one starting at `fromSeq` on, oldest first. */
  async read(stream: string, fromSeq: number, limit: number): Promise<Segment[]> {
    return (await this.query(stream, fromSeq, limit)).map((item) => this.toSegment(stream, item));
  }

  private async query(stream: string, fromSeq: number, limit: number): Promise<Record<string, unknown>[]> {
    const { Items } = await call(() =>
      this.doc.send(
        new QueryCommand({
          TableName: this.table,
          KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
          ExpressionAttributeValues: { ':pk': streamPk(stream), ':from': segmentSk(fromSeq), ':to': MAX_SK },
          Limit: limit,
          ConsistentRead: true,
        }),
      ),
    );
    return Items ?? [];
  }

  /** The segment holding `seq`, if it still exists. */
  async segmentContaining(stream: string, seq: number): Promise<Segment | undefined> {
    const { Items } = await call(() => this.doc.send(
      new QueryCommand({
        TableName: this.table,
        KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
        ExpressionAttributeValues: { ':pk': streamPk(stream), ':from': MIN_SK, ':to': segmentSk(seq) },
        ScanIndexForward: false,
        Limit: 1,
        ConsistentRead: true,
      })),
    );
    const item = Items?.[0];
    if (!item) return undefined;
    const segment = this.toSegment(stream, item);
    return seq < segment.seq + segment.count ? segment : undefined;
  }

  /** The oldest segment still stored (for counts and ages). */
  async first(stream: string): Promise<Segment | undefined> {
    const [segment] = await this.read(stream, 0, 1);
    return segment;
  }

  /** Fetches segments by (stream, first seq); missing ones (expired) are left out. */
  async getSegments(keys: Array<{ stream: string; seq: number }>): Promise<Segment[]> {
    const unique = [...new Map(keys.map((key) => [`${key.stream}\u0000${key.seq}`, key])).values()];
    const out: Segment[] = [];
    for (let i = 0; i < unique.length; i += 100) {
      let request: Record<string, unknown>[] = unique
        .slice(i, i + 100)
        .map((key) => ({ pk: streamPk(key.stream), sk: segmentSk(key.seq) }));
      for (let round = 0; request.length > 0 && round < 8; round++) {
        const result = await call(() =>
          this.doc.send(new BatchGetCommand({ RequestItems: { [this.table]: { Keys: request, ConsistentRead: true } } })),
        );
        for (const item of result.Responses?.[this.table] ?? []) {
          out.push(this.toSegment(streamOfPk(String(item.pk)), item));
        }
        request = (result.UnprocessedKeys?.[this.table]?.Keys as Record<string, unknown>[] | undefined) ?? [];
        if (request.length > 0) await this.backoff(round);
      }
      if (request.length > 0) throw new ThrottledError('The message store is busy; retry the request.');
    }
    return out;
  }

  private toSegment(stream: string, item: Record<string, unknown>): Segment {
    return {
      stream,
      seq: Number(item.sk),
      count: Number(item.n),
      records: ((item.m as StoredRecord[] | undefined) ?? []).map(fromStored),
    };
  }

  private backoff(attempt: number): Promise<void> {
    const ms = Math.min(50, 2 ** attempt) * (0.5 + Math.random());
    return new Promise((resolve) => setTimeout(resolve, ms));
  }
}
