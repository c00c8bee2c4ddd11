/**
 * Deferred messages: scheduled messages and transactional half messages wait
 * here until they become deliverable (docs/design.md, Scheduled messages and
 * Transactional messages). Keys are in keys.ts.
 *
 * A deferred item (pk `X#<ulid>`, sk `X`):
 *
 *   st    state: scheduled → releasing → released | cancelled | expired; prepared → [committing →] committed |
 *         rolled-back, committing → expired (a claim closed past its records' expiry: never appended
 *         again, appended once or never — docs/design.md, Transactional messages: Closed claims)
 *   tp    topic name
 *   r     the message record (records.ts)
 *   du    due time (ms); a half message: its send time
 *   a     {s: stream, q: seq} where it was appended, once released or committed; while
 *         releasing or committing: where its claim says it will land
 *   rf, rt, rc, rx while releasing or committing (the claim, docs/design.md, Scheduled messages:
 *         Release; Transactional messages: Commit): the first seq of the segment its claimant
 *         puts, the claim's token, the claimant's clock (ms) read before the claim, when the
 *         claimed records expire
 *   g1pk, g1sk   while it waits: `T#<due minute>[#<bucket>]` / `<due ms>#<ulid>` (scheduled; bucket
 *                by the ULID, keys.ts `dueIndexPkOf`) or
 *                `K#<0..3>` / `<next check ms>#<ulid>` (half message, until resolved; a kept one
 *                stays at `KEPT_CHECK_AT`, never due, so the producer group's look-up finds it)
 *   ttl   removal (epoch s): after the appended message itself would expire
 *   pa    release attempts that failed (a message that cannot be released is moved
 *         in the due index to the next sweep; g1sk then holds the retry time)
 *
 * Half messages (SPEC §4) also carry:
 *
 *   pg    producer group whose checker is asked
 *   ck    checkAfterSeconds: delay of the first check-back
 *   nc    next check time (ms); removed when resolved or kept
 *   cc    checks made so far
 *   rb    who resolved it: producer | check | onMaxChecks (set only with committing / committed / rolled-back,
 *         and kept when a claimed commit expires)
 *   ra    resolved at (ms; a claimed commit: the claim's time)
 *   kp    true: `onMaxChecks: keep` stopped the checks, it stays prepared (not resolved)
 *   ks    when the checks stopped (ms), with kp
 *
 * Check records (pk `X#<ulid>`, sk `C#<6-digit n>`): one per check-back call
 * {n, at, status, httpStatus, error, latencyMs, ttl}.
 *
 * Wake markers (pk `WAKE`, sk `s<second>` | `m<minute>`, {ttl}) remember which
 * timer buckets are armed, so a send arms a bucket's timer once and the local
 * runtime re-arms them after a restart.
 *
 * The sweep's low-water mark (pk `TIMER`, sk `low`, {lo: ms}): every scheduled
 * message due up to `lo` was handled (released, cancelled, or moved on to a
 * later retry); it only moves forward.
 */
import { GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { MessageRecord } from '../../domain/model.js';
import { batchGetPages, call, conditional, conditionalWithImage, queryAll, queryPages } from './call.js';
import {
  CHECK_INDEX_SHARDS,
  CHECK_RECORD_PREFIX,
  WAKE_PK,
  checkIndexPk,
  checkIndexPkOf,
  checkIndexSk,
  checkIndexUpTo,
  KEPT_CHECK_AT,
  checkRecordKey,
  deferredKey as key,
  DUE_INDEX_BUCKETS,
  dueIndexPk,
  dueIndexPkOf,
  dueIndexSk,
  dueIndexUpTo,
  dueOfIndexSk,
  idOfDeferredPk,
  minuteOf,
  sweepMarkKey,
  wakeBucket,
  wakeBucketsEnd,
} from './keys.js';
import { fromStored, toStored, type StoredRecord } from './records.js';
import type { TransactItem } from './write-batch.js';
import { GSI1 } from './table.js';
import { newTryToken, TRY_TOKEN } from './try-token.js';

export const DeferredState = {
  scheduled: 'scheduled',
  releasing: 'releasing',
  released: 'released',
  cancelled: 'cancelled',
  prepared: 'prepared',
  /** A half message of a standard topic whose commit claimed its address (the commit won; not marked yet). */
  committing: 'committing',
  committed: 'committed',
  rolledBack: 'rolled-back',
  /**
   * A claimed release or commit that a finisher reached only within 60 s of its records' expiry,
   * its slot not holding the message: closed, never appended again. The claimant may have put it
   * and TTL removed it, or never put it: it was delivered at most once, perhaps never.
   */
  expired: 'expired',
} as const;
export type DeferredState = (typeof DeferredState)[keyof typeof DeferredState];

export interface Deferred {
  id: string;
  state: DeferredState;
  topic: string;
  record: MessageRecord;
  dueAt: number;
  address: { stream: string; seq: number } | undefined;
  /** While `releasing` or `committing`: the claim of the release or commit under way (or left by a crash). */
  claim?: ReleaseClaim;
  /** Half messages (SPEC §4). */
  transaction?: {
    producerGroup: string;
    checkAfterSeconds: number;
    nextCheckAt: number | undefined;
    checkCount: number;
    resolvedBy: string | undefined;
    resolvedAt: number | undefined;
    kept: boolean;
    /** `onMaxChecks: keep` stopped the checks at (ms). */
    checksStoppedAt: number | undefined;
  };
}

/** A release claim: the message will land at `stream`/`seq`, inside the segment put at `first`. */
export interface ReleaseClaim {
  stream: string;
  seq: number;
  first: number;
  token: string;
  /** The claimant's clock (ms), read before the claim was written. */
  at: number;
  /**
   * When the claimed records expire (ms; their segment's TTL is not before it): an empty slot read
   * before then was never put; after it, it may have been put and removed by TTL.
   */
  expiresAt: number;
}

export interface CheckRecord {
  n: number;
  at: number;
  status: 'commit' | 'rollback' | 'unknown';
  httpStatus: number | null;
  error: string | null;
  latencyMs: number;
}


const toDeferred = (item: Record<string, unknown>): Deferred => {
  const address = item.a as { s: string; q: number } | undefined;
  return {
    id: idOfDeferredPk(String(item.pk)),
    state: item.st as DeferredState,
    topic: String(item.tp),
    record: fromStored(item.r as StoredRecord),
    dueAt: Number(item.du),
    address: address ? { stream: address.s, seq: address.q } : undefined,
    ...((item.st === DeferredState.releasing || item.st === DeferredState.committing) && address
      ? { claim: { stream: address.s, seq: address.q, first: Number(item.rf), token: String(item.rt), at: Number(item.rc), expiresAt: item.rx === undefined ? Number.POSITIVE_INFINITY : Number(item.rx) } }
      : {}),
    ...(item.pg === undefined
      ? {}
      : {
          transaction: {
            producerGroup: String(item.pg),
            checkAfterSeconds: Number(item.ck),
            nextCheckAt: item.nc === undefined ? undefined : Number(item.nc),
            checkCount: Number(item.cc ?? 0),
            resolvedBy: item.rb === undefined ? undefined : String(item.rb),
            resolvedAt: item.ra === undefined ? undefined : Number(item.ra),
            kept: item.kp === true,
            checksStoppedAt: item.ks === undefined ? undefined : Number(item.ks),
          },
        }),
  };
};


/** Where a {@link DeferredStore.duePage} walk stands in one bucket of a minute: after an entry, or done. */
interface BucketPosition {
  after?: Record<string, unknown>;
  done?: boolean;
}
/** The continuation of a due page: a position per bucket. */
interface DuePageCursor {
  buckets: BucketPosition[];
}

export class DeferredStore {
  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly table: string,
  ) {}

  /** The put of a new scheduled message (alone, or in a transaction with its dedup marker and keys). */
  scheduleItem(id: string, record: MessageRecord, dueAt: number, retentionSeconds: number): TransactItem {
    return {
      Put: {
        TableName: this.table,
        Item: {
          ...key(id),
          st: DeferredState.scheduled,
          tp: record.topic,
          r: toStored(record),
          du: dueAt,
          g1pk: dueIndexPkOf(minuteOf(dueAt), id),
          g1sk: dueIndexSk(dueAt, id),
          // Kept until the released message itself would expire, so queries by id keep working.
          ttl: Math.ceil(dueAt / 1000) + retentionSeconds + 86_400,
        },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    };
  }

  /** The put of a new half message: prepared, invisible, indexed for its first check. */
  prepareItem(id: string, record: MessageRecord, producerGroup: string, checkAfterSeconds: number, now: number, retentionSeconds: number): TransactItem {
    const nextCheckAt = now + checkAfterSeconds * 1000;
    return {
      Put: {
        TableName: this.table,
        Item: {
          ...key(id),
          st: DeferredState.prepared,
          tp: record.topic,
          r: toStored(record),
          du: now,
          pg: producerGroup,
          ck: checkAfterSeconds,
          nc: nextCheckAt,
          cc: 0,
          g1pk: checkIndexPkOf(id),
          g1sk: checkIndexSk(nextCheckAt, id),
          ttl: Math.ceil(now / 1000) + 2 * retentionSeconds + 86_400,
        },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    };
  }

  /** Commits a half message at `address` (in the transaction that appends it); fails unless still prepared. */
  commitItem(id: string, address: { stream: string; seq: number }, by: string, now: number): TransactItem {
    return {
      Update: {
        TableName: this.table,
        Key: key(id),
        UpdateExpression: 'SET st = :committed, a = :a, rb = :by, ra = :now REMOVE g1pk, g1sk, nc',
        ConditionExpression: 'st = :prepared',
        ExpressionAttributeValues: {
          ':committed': DeferredState.committed,
          ':prepared': DeferredState.prepared,
          ':a': { s: address.stream, q: address.seq },
          ':by': by,
          ':now': now,
        },
      },
    };
  }

  /**
   * Claims the commit of a half message of a standard topic (docs/design.md,
   * Transactional messages: Commit): `committing`, with the address it will
   * land at, the claim's token and time, and who resolved it when (`rb`,
   * `ra` = the claim's time: the commit wins here). `expect`: the token of the
   * claim it takes over, else the half message must still be prepared — and
   * kept or not as `kept` says: a kept half message's check-index entry is
   * never due, so its claim moves the entry to `sweepAt` (the check sweep then
   * finds the claim if its claimant crashes); so does a claim whose next check
   * is far (`moveCheck`: the check sweep must find a crashed claim well before
   * its records' expiry, where it would be closed without an append); the
   * others keep theirs (their next check time: no index write) on condition
   * that it is still by `checkBy`. False when the condition fails.
   */
  async claimCommit(
    id: string,
    claim: ReleaseClaim,
    expect: string | undefined,
    fresh: { by: string; kept: boolean; moveCheck: boolean; sweepAt: number; checkBy: number },
  ): Promise<boolean> {
    const values: Record<string, unknown> = {
      ':committing': DeferredState.committing,
      ':a': { s: claim.stream, q: claim.seq },
      ':f': claim.first,
      ':t': claim.token,
      ':at': claim.at,
      ':x': claim.expiresAt,
    };
    const set = 'SET st = :committing, a = :a, rf = :f, rt = :t, rc = :at, rx = :x';
    // `OR` its own claim: the claim's token (random, new per claim: claimed-release.ts) is this
    // write's try token — the SDK's retry of a claim that landed (its answer lost) writes it again
    // and passes, where it was taken for another commit's claim (docs/design.md, Append, "A put
    // that landed, retried").
    const claimed = (condition: string) => `(${condition}) OR (st = :committing AND rt = :t)`;
    if (expect !== undefined) return this.conditional(id, set, claimed('st = :committing AND rt = :old'), { ...values, ':old': expect });
    values[':prepared'] = DeferredState.prepared;
    values[':by'] = fresh.by;
    if (!fresh.kept && !fresh.moveCheck) {
      // Not moved: only while the next check is still by `checkBy` (a check lease may have moved it since it was read).
      return this.conditional(id, `${set}, rb = :by, ra = :at`, claimed('st = :prepared AND attribute_not_exists(kp) AND nc <= :by_time'), {
        ...values,
        ':by_time': fresh.checkBy,
      });
    }
    if (!fresh.kept) {
      return this.conditional(id, `${set}, rb = :by, ra = :at, nc = :due, g1sk = :sk`, claimed('st = :prepared AND attribute_not_exists(kp)'), {
        ...values,
        ':due': fresh.sweepAt,
        ':sk': checkIndexSk(fresh.sweepAt, id),
      });
    }
    return this.conditional(id, `${set}, rb = :by, ra = :at, g1sk = :sk`, claimed('st = :prepared AND kp = :true'), {
      ...values,
      ':true': true,
      ':sk': checkIndexSk(fresh.sweepAt, id),
    });
  }

  /**
   * Marks a half message whose commit is claimed committed at `address` (where
   * it is; undefined: the claimed address stays, for a claim closed without
   * an append) and takes it out of the check index; false unless the claim
   * `token` is still the item's.
   */
  async markCommitted(id: string, address: { stream: string; seq: number } | undefined, token: string): Promise<boolean> {
    return this.conditional(
      id,
      `SET st = :committed${address ? ', a = :a' : ''} REMOVE g1pk, g1sk, nc, rf, rt, rc, rx`,
      'st = :committing AND rt = :t',
      {
        ':committed': DeferredState.committed,
        ':committing': DeferredState.committing,
        ':t': token,
        ...(address ? { ':a': { s: address.stream, q: address.seq } } : {}),
      },
    );
  }

  /** Rolls a half message back; false unless it was still prepared. */
  async rollback(id: string, by: string, now: number): Promise<boolean> {
    return this.conditional(id, 'SET st = :rolled, rb = :by, ra = :now REMOVE g1pk, g1sk, nc', 'st = :prepared', {
      ':rolled': DeferredState.rolledBack,
      ':prepared': DeferredState.prepared,
      ':by': by,
      ':now': now,
    });
  }

  /**
   * Takes the next check of a half message: moves its next check time and
   * counts the check, conditional on the next check time it was found with,
   * so that two sweeps never call the checker twice for one due check.
   */
  async leaseCheck(id: string, expectNextCheckAt: number, nextCheckAt: number): Promise<boolean> {
    return this.conditionalOrMine(
      id,
      'SET nc = :next, g1sk = :sk ADD cc :one',
      'st = :prepared AND nc = :expect',
      { ':next': nextCheckAt, ':sk': checkIndexSk(nextCheckAt, id), ':one': 1, ':prepared': DeferredState.prepared, ':expect': expectNextCheckAt },
      // The SDK's retry of a lease that landed meets the next check time it set: the lease is
      // this worker's (else the check was counted and skipped). Another worker's lease sets the
      // same time only if it read the clock in the same millisecond: then both call the checker.
      (old) => old.st === DeferredState.prepared && old.nc === nextCheckAt,
    );
  }

  /**
   * `onMaxChecks: keep`: stays prepared, checked no more. Not a resolution:
   * `rb`/`ra` stay unset until the producer resolves it; `ks` says when checks stopped.
   * Its check-index entry moves to a time no sweep reaches (same write), so that
   * {@link hasUnresolvedHalf} still sees it.
   */
  async keep(id: string, now: number): Promise<boolean> {
    return this.conditional(id, 'SET kp = :true, ks = :now, g1sk = :kept REMOVE nc', 'st = :prepared', {
      ':kept': checkIndexSk(KEPT_CHECK_AT, id),
      ':true': true,
      ':now': now,
      ':prepared': DeferredState.prepared,
    });
  }

  async addCheck(id: string, check: CheckRecord, ttlSeconds: number): Promise<void> {
    await call(() =>
      this.doc.send(
        new PutCommand({
          TableName: this.table,
          Item: { ...checkRecordKey(id, check.n), ...check, ttl: ttlSeconds },
        }),
      ),
    );
  }

  /**
   * Every check record of a half message, oldest first. Page after page: up to `maxChecks` (1,000)
   * records whose `error` is the checker call's error message — a TLS error names the certificate's
   * every alternative name — can pass the 1 MB one Query answers.
   */
  async checks(id: string): Promise<CheckRecord[]> {
    const items = await queryAll(this.doc, {
      TableName: this.table,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :c)',
      ExpressionAttributeValues: { ':pk': key(id).pk, ':c': CHECK_RECORD_PREFIX },
      ConsistentRead: true,
    });
    return items.map((item) => ({
      n: Number(item.n),
      at: Number(item.at),
      status: item.status as CheckRecord['status'],
      httpStatus: item.httpStatus === null || item.httpStatus === undefined ? null : Number(item.httpStatus),
      error: item.error === null || item.error === undefined ? null : String(item.error),
      latencyMs: Number(item.latencyMs),
    }));
  }

  /**
   * Half messages whose next check is due, up to `limit` per index partition
   * (GSI: eventually consistent; the check lease re-checks). Follows the
   * index's pages: a page may stop short of `limit` while more entries follow.
   */
  async dueChecks(now: number, limit: number): Promise<string[]> {
    const out: string[] = [];
    for (let shard = 0; shard < CHECK_INDEX_SHARDS; shard++) {
      const pages = queryPages(
        this.doc,
        {
          TableName: this.table,
          IndexName: GSI1,
          KeyConditionExpression: 'g1pk = :pk AND g1sk <= :now',
          ExpressionAttributeValues: { ':pk': checkIndexPk(shard), ':now': checkIndexUpTo(now) },
        },
        limit,
      );
      for await (const page of pages) out.push(...page.map((item) => idOfDeferredPk(String(item.pk))));
    }
    return out;
  }

  /**
   * Whether `producerGroup` has a half message still prepared (waiting for a
   * check, or kept after maxChecks). No write on the send path: it reads the
   * whole check-back index (keys only, every producer group's unresolved half
   * messages, eventually consistent) and the items' `pg`/`st` in BatchGets of
   * 100 (consistent), stopping at the first match. O(unresolved half messages
   * of the deployment): an admin path only.
   */
  async hasUnresolvedHalf(producerGroup: string): Promise<boolean> {
    for (let shard = 0; shard < CHECK_INDEX_SHARDS; shard++) {
      const pages = queryPages(this.doc, {
        TableName: this.table,
        IndexName: GSI1,
        KeyConditionExpression: 'g1pk = :pk',
        ExpressionAttributeValues: { ':pk': checkIndexPk(shard) },
      });
      for await (const page of pages) {
        const ids = page.map((item) => idOfDeferredPk(String(item.pk)));
        for await (const items of batchGetPages(this.doc, this.table, ids.map(key), { consistent: true, projection: 'pg, st' })) {
          if (items.some((item) => item.pg === producerGroup && item.st === DeferredState.prepared)) return true;
        }
      }
    }
    return false;
  }

  private async conditional(id: string, update: string, condition: string, values: Record<string, unknown>): Promise<boolean> {
    return conditional(() =>
      this.doc.send(
        new UpdateCommand({ TableName: this.table, Key: key(id), UpdateExpression: update, ConditionExpression: condition, ExpressionAttributeValues: values }),
      ),
    );
  }

  /**
   * {@link conditional}, for a write whose own result the item tells apart: when the condition
   * fails, the item's old image (`ALL_OLD`, no extra read) is asked whether it is what this very
   * write leaves (`mine`) — the SDK's retry of a write that landed and whose answer was lost
   * (docs/design.md, Append, "A put that landed, retried") — and then the write took effect.
   */
  private async conditionalOrMine(
    id: string,
    update: string,
    condition: string,
    values: Record<string, unknown>,
    mine: (old: Record<string, unknown>) => boolean,
  ): Promise<boolean> {
    const result = await conditionalWithImage(this.doc, {
      TableName: this.table,
      Key: key(id),
      UpdateExpression: update,
      ConditionExpression: condition,
      ExpressionAttributeValues: values,
    });
    return result.ok || (result.old !== undefined && mine(result.old));
  }

  async get(id: string): Promise<Deferred | undefined> {
    const { Item } = await call(() => this.doc.send(new GetCommand({ TableName: this.table, Key: key(id), ConsistentRead: true })));
    return Item ? toDeferred(Item) : undefined;
  }

  /**
   * Scheduled messages of a due-minute bucket with `dueAt <= until`, earliest
   * first, at most `limit` (GSI: eventually consistent). Follows the index's
   * pages: a page may stop short of `limit` while more entries follow.
   */
  async due(minute: number, until: number, limit: number): Promise<string[]> {
    const ids: string[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const page = await this.duePage(minute, until, limit - ids.length, start);
      ids.push(...page.ids);
      start = page.next;
    } while (start && ids.length < limit);
    return ids;
  }

  /**
   * One page of {@link due} from `start` on, in due order across the minute's buckets; `next`
   * continues it (undefined: every bucket is read to `until`). Each bucket is read up to `limit`
   * from where it stopped and the first `limit` of the merge are taken, so pages come in due order:
   * a release takes due messages in due order (append-chunks.ts), and one FIFO shard's scheduled
   * messages keep theirs. Reads up to `DUE_INDEX_BUCKETS × limit` entries for `limit` (the sweep,
   * and the release of a wake-up queued before wake-ups carried ids; a timer's release reads its
   * ids by key). `start` is only ever a `next` of this method within one walk, never a stored key.
   */
  async duePage(minute: number, until: number, limit: number, start?: Record<string, unknown>): Promise<{ ids: string[]; next: Record<string, unknown> | undefined }> {
    const from = start ? (start as unknown as DuePageCursor).buckets : Array.from({ length: DUE_INDEX_BUCKETS }, (): BucketPosition => ({}));
    const pages = await Promise.all(
      from.map((position, bucket) =>
        position.done
          ? { items: [] as Record<string, unknown>[], more: false }
          : call(() =>
              this.doc.send(
                new QueryCommand({
                  TableName: this.table,
                  IndexName: GSI1,
                  KeyConditionExpression: 'g1pk = :pk AND g1sk <= :until',
                  ExpressionAttributeValues: { ':pk': dueIndexPk(minute, bucket), ':until': dueIndexUpTo(until) },
                  Limit: limit,
                  ...(position.after ? { ExclusiveStartKey: position.after } : {}),
                }),
              ),
            ).then((page) => ({ items: page.Items ?? [], more: page.LastEvaluatedKey !== undefined })),
      ),
    );
    // The first `limit` of the merge are the minute's next `limit` entries: a bucket's entries not
    // read yet come after the `limit` it returned, and so after all of the first `limit`.
    const read = pages.flatMap((page, bucket) => page.items.map((item) => ({ bucket, item })));
    read.sort((a, b) => (String(a.item.g1sk) < String(b.item.g1sk) ? -1 : String(a.item.g1sk) > String(b.item.g1sk) ? 1 : 0));
    const taken = read.slice(0, limit);
    const buckets: BucketPosition[] = from.map((position, bucket) => {
      const page = pages[bucket];
      if (position.done || !page) return position;
      const mine = taken.filter((t) => t.bucket === bucket);
      const last = mine.at(-1)?.item;
      if (!page.more && mine.length === page.items.length) return { done: true };
      return last ? { after: { pk: last.pk, sk: last.sk, g1pk: last.g1pk, g1sk: last.g1sk } } : position;
    });
    const next = buckets.every((b) => b.done) ? undefined : ({ buckets } satisfies DuePageCursor as unknown as Record<string, unknown>);
    return { ids: taken.map((t) => idOfDeferredPk(String(t.item.pk))), next };
  }

  /** The sweep's low-water mark (ms), undefined before the first sweep. */
  async sweepMark(): Promise<number | undefined> {
    const { Item } = await call(() => this.doc.send(new GetCommand({ TableName: this.table, Key: sweepMarkKey, ConsistentRead: true })));
    return Item?.lo === undefined ? undefined : Number(Item.lo);
  }

  /** Moves the low-water mark forward to `to`; false when it already is there or beyond (a concurrent sweep). */
  async advanceSweepMark(to: number): Promise<boolean> {
    return conditional(() =>
      this.doc.send(
        new UpdateCommand({
          TableName: this.table,
          Key: sweepMarkKey,
          UpdateExpression: 'SET lo = :to',
          ConditionExpression: 'attribute_not_exists(lo) OR lo < :to',
          ExpressionAttributeValues: { ':to': to },
        }),
      ),
    );
  }

  /** Every message still scheduled in a minute bucket, with its due time (the minute timer arms their second-level wake-ups). */
  async dueEntries(minute: number): Promise<Array<{ id: string; dueAt: number }>> {
    const buckets = await Promise.all(
      Array.from({ length: DUE_INDEX_BUCKETS }, (_, bucket) =>
        queryAll(this.doc, {
          TableName: this.table,
          IndexName: GSI1,
          KeyConditionExpression: 'g1pk = :pk',
          ExpressionAttributeValues: { ':pk': dueIndexPk(minute, bucket) },
        }),
      ),
    );
    return buckets
      .flat()
      .map((item) => ({ id: idOfDeferredPk(String(item.pk)), dueAt: dueOfIndexSk(String(item.g1sk)) }))
      .sort((a, b) => a.dueAt - b.dueAt);
  }

  /**
   * Deferred messages by id, strongly consistent (BatchGet, 100 keys a
   * request, unprocessed keys asked again): what a release wake-up reads
   * instead of the eventually consistent due index. Absent ids are left out;
   * an item that cannot be read as a deferred message is named in `unreadable`.
   */
  async getMany(ids: string[]): Promise<{ found: Deferred[]; unreadable: Map<string, unknown> }> {
    const found: Deferred[] = [];
    const unreadable = new Map<string, unknown>();
    const unique = [...new Set(ids)];
    for await (const items of batchGetPages(this.doc, this.table, unique.map(key), { consistent: true })) {
      for (const item of items) {
        try {
          found.push(toDeferred(item));
        } catch (error) {
          unreadable.set(idOfDeferredPk(String(item.pk)), error);
        }
      }
    }
    return { found, unreadable };
  }

  /**
   * Half messages whose next check-back falls in [from, to] (ms), from the
   * check-back index (every partition; eventually consistent, which is enough
   * for the minute timer: it reads checks set at least two minutes earlier).
   */
  async checksDueBetween(from: number, to: number): Promise<Array<{ id: string; at: number }>> {
    const out: Array<{ id: string; at: number }> = [];
    for (let shard = 0; shard < CHECK_INDEX_SHARDS; shard++) {
      const items = await queryAll(this.doc, {
        TableName: this.table,
        IndexName: GSI1,
        KeyConditionExpression: 'g1pk = :pk AND g1sk BETWEEN :from AND :to',
        ExpressionAttributeValues: { ':pk': checkIndexPk(shard), ':from': checkIndexSk(from, ''), ':to': checkIndexUpTo(to) },
      });
      out.push(...items.map((item) => ({ id: idOfDeferredPk(String(item.pk)), at: dueOfIndexSk(String(item.g1sk)) })));
    }
    return out;
  }

  /** Marks a scheduled message released at `address`; fails its condition unless it is still scheduled. */
  releaseItem(id: string, address: { stream: string; seq: number }): TransactItem {
    return {
      Update: {
        TableName: this.table,
        Key: key(id),
        UpdateExpression: 'SET st = :released, a = :a REMOVE g1pk, g1sk',
        ConditionExpression: 'st = :scheduled',
        ExpressionAttributeValues: {
          ':released': DeferredState.released,
          ':scheduled': DeferredState.scheduled,
          ':a': { s: address.stream, q: address.seq },
        },
      },
    };
  }

  /**
   * Claims the release of a scheduled message (docs/design.md, Scheduled
   * messages: Release): `releasing`, with the address it will land at and the
   * claim's token and time. `expect`: the token of the claim it takes over
   * (the claimant's own earlier claim after a lost append race, or a claim a
   * crash left), else the message must still be scheduled. False when the
   * condition fails (released, cancelled, or claimed by someone else meanwhile).
   */
  async claimRelease(id: string, claim: ReleaseClaim, expect: string | undefined): Promise<boolean> {
    // `OR` its own claim: the claim's token (random, new per claim) is this write's try token, as
    // in claimCommit — the SDK's retry of a claim that landed passes.
    return this.conditional(
      id,
      'SET st = :releasing, a = :a, rf = :f, rt = :t, rc = :at, rx = :x',
      `(${expect === undefined ? 'st = :scheduled' : 'st = :releasing AND rt = :old'}) OR (st = :releasing AND rt = :t)`,
      {
        ':releasing': DeferredState.releasing,
        ':a': { s: claim.stream, q: claim.seq },
        ':f': claim.first,
        ':t': claim.token,
        ':at': claim.at,
        ':x': claim.expiresAt,
        ...(expect === undefined ? { ':scheduled': DeferredState.scheduled } : { ':old': expect }),
      },
    );
  }

  /**
   * Marks a claimed message released at `address` (where it is, which may be
   * another place in the claimed segment than the claim said) and takes it
   * out of the due index; false unless the claim `token` is still the item's.
   */
  async markReleased(id: string, address: { stream: string; seq: number }, token: string): Promise<boolean> {
    return this.conditional(id, 'SET st = :released, a = :a REMOVE g1pk, g1sk, rf, rt, rc, rx', 'st = :releasing AND rt = :t', {
      ':released': DeferredState.released,
      ':releasing': DeferredState.releasing,
      ':a': { s: address.stream, q: address.seq },
      ':t': token,
    });
  }

  /**
   * Closes a claim (`releasing` or `committing`, as `claimed` says) past its records' expiry: `expired`,
   * out of the due or check index, its claimed address dropped (the message may not be there); a
   * commit keeps who resolved it when (`rb`, `ra`). False unless the claim `token` is still the item's.
   */
  async expireClaimed(id: string, token: string, claimed: typeof DeferredState.releasing | typeof DeferredState.committing): Promise<boolean> {
    return this.conditional(id, 'SET st = :expired REMOVE g1pk, g1sk, nc, a, rf, rt, rc, rx', 'st = :claimed AND rt = :t', {
      ':expired': DeferredState.expired,
      ':claimed': claimed,
      ':t': token,
    });
  }

  /** Cancels a claimed message (its topic was deleted or purged); false unless the claim `token` is still the item's. */
  async cancelClaimed(id: string, token: string): Promise<boolean> {
    return this.conditional(id, 'SET st = :cancelled REMOVE g1pk, g1sk, a, rf, rt, rc, rx', 'st = :releasing AND rt = :t', {
      ':cancelled': DeferredState.cancelled,
      ':releasing': DeferredState.releasing,
      ':t': token,
    });
  }

  /**
   * Moves a scheduled message that could not be released — or a claimed one
   * left to its claimant for now — to `retryAt` in the due index (its due
   * time stays), counting the attempt in `pa`, so the sweep tries it again
   * and its low-water mark can pass its old minute. False when it is neither
   * scheduled nor releasing.
   */
  async retryLater(id: string, retryAt: number): Promise<boolean> {
    return this.conditional(id, 'SET g1pk = :pk, g1sk = :sk ADD pa :one', 'st IN (:scheduled, :releasing)', {
      ':pk': dueIndexPkOf(minuteOf(retryAt), id),
      ':sk': dueIndexSk(retryAt, id),
      ':one': 1,
      ':scheduled': DeferredState.scheduled,
      ':releasing': DeferredState.releasing,
    });
  }

  /** Cancels a scheduled message of `topic`: `done`, or its state when it was not scheduled (undefined if absent). */
  async cancel(id: string, topic: string): Promise<{ done: true } | { done: false; state: DeferredState } | undefined> {
    // A try token (try-token.ts): the SDK's retry of a cancel that landed (its answer lost) writes
    // it again and passes, where it met `cancelled` and answered 409 for a cancel that took effect.
    // A cancelled item's old image cannot tell this cancel from an earlier one: the token does.
    // 8 bytes (TRY_TOKEN_ITEM_BYTES): the same as the token a deferred item put alone already
    // carries (BatchWriter), which this one replaces; an item put in a transaction gains them.
    const token = newTryToken();
    const cancelled = await this.conditional(
      id,
      `SET st = :cancelled, ${TRY_TOKEN} = :tk REMOVE g1pk, g1sk`,
      `(st = :scheduled AND tp = :topic) OR ${TRY_TOKEN} = :tk`,
      { ':cancelled': DeferredState.cancelled, ':scheduled': DeferredState.scheduled, ':topic': topic, ':tk': token },
    );
    if (cancelled) return { done: true };
    // Not (or no longer) scheduled: its state says why.
    const current = await this.get(id);
    return current && current.topic === topic ? { done: false, state: current.state } : undefined;
  }

  async hasWake(bucket: string): Promise<boolean> {
    const { Item } = await call(() =>
      this.doc.send(new GetCommand({ TableName: this.table, Key: { pk: WAKE_PK, sk: bucket }, ConsistentRead: true })),
    );
    return Item !== undefined;
  }

  /** Records that a timer bucket is armed; false when it already was. */
  async markWake(bucket: string, expiresAt: number): Promise<boolean> {
    return conditional(() =>
      this.doc.send(
        new PutCommand({
          TableName: this.table,
          Item: { pk: WAKE_PK, sk: bucket, ttl: Math.ceil(expiresAt / 1000) },
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      ),
    );
  }

  /** The earliest armed bucket of one kind (`s` second, `m` minute number), if any. */
  async earliestWake(kind: 's' | 'm'): Promise<number | undefined> {
    const { Items } = await call(() =>
      this.doc.send(
        new QueryCommand({
          TableName: this.table,
          KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
          ExpressionAttributeValues: { ':pk': WAKE_PK, ':from': wakeBucket(kind, 0), ':to': wakeBucketsEnd(kind) },
          Limit: 1,
          ConsistentRead: true,
        }),
      ),
    );
    const sk = Items?.[0]?.sk;
    return sk === undefined ? undefined : Number(String(sk).slice(1));
  }

  /** Armed buckets of one kind (`s` seconds, `m` minutes) from `from` on. */
  async wakes(kind: 's' | 'm', from: number): Promise<number[]> {
    const items = await queryAll(this.doc, {
      TableName: this.table,
      KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
      ExpressionAttributeValues: { ':pk': WAKE_PK, ':from': wakeBucket(kind, from), ':to': wakeBucketsEnd(kind) },
      ConsistentRead: true,
    });
    return items.map((item) => Number(String(item.sk).slice(1)));
  }
}

