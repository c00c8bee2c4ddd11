/**
 * Reads and writes of cursor items (one per consumer group and stream; the
 * item and its attributes: cursor-item.ts). The update expressions are built
 * by the pure functions of cursor-updates.ts; this file sends them and
 * decides what a failed condition means. The FIFO ready index these writes
 * maintain is described in ready-index.ts; pending outputs of protected
 * commits are their own items (pending-outputs.ts).
 */
import { DeleteCommand, GetCommand, PutCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { cursorExpired, deliveriesOfToken, type CursorState, type DoneEntry, type Lease, type RangeOfLease } from '../../domain/cursor.js';
import { markOf, repeatsCommit } from '../../domain/history.js';
import { guessedReadiness, retryReadiness } from '../../domain/readiness.js';
import { isShardStream } from '../../domain/streams.js';
import { batchGetPages, call, conditional, conditionalWithImage, queryPages, queryPagesUpTo } from './call.js';
import { cancellationReasons, isConditionalFailure, translateDynamoError } from './errors.js';
import { newCursorItem, shardCursorTtl, toState } from './cursor-item.js';
import {
  advanceUpdate,
  claimLanded,
  claimUpdate,
  completionChunks,
  completionUpdate,
  deadLetterUpdate,
  noticeSeekUpdate,
  raiseEpochUpdate,
  raiseKnownUpdate,
  seekMoveUpdate,
  grantUpdate,
  normaliseUpdate,
  rangeMapsUpdate,
  spillUpdate,
  type GrantChange,
  unsoughtSinceCondition,
  visibilityUpdate,
  visibilityVariants,
  type ClaimChange,
  type CompletionChange,
  type SeekRead,
  type UpdateParts,
} from './cursor-updates.js';
import { CursorCache } from './cursor-cache.js';
import type { HistoryStore } from './history.js';
import { cursorPk, readyIndexPk, readyNowKey } from './keys.js';
import type { TransactItem } from './write-batch.js';

export type { ClaimChange, CompletionChange, SeekRead } from './cursor-updates.js';

export type CommitOutcome = 'committed' | 'expired';

/** What a claim did: written, or lost to another writer, with the cursor as that writer left it. */
export type ClaimOutcome = { ok: true } | { ok: false; seen?: CursorState };

/** What a range claim did: the range's first sequence number, or lost (a condition failed), with the cursor then. */
export type GrantOutcome = { ok: true; start: number } | { ok: false; seen?: CursorState };

/** What a group's figures read of a cursor: its position, leases, known head and epoch, committed count, creation and expiry (not its completions `dn`). */
const FIGURE_PROJECTION = 'pk, sk, nx, ns, fl, fr, fq, se, cm, ca, kn, ke, sv, sf, #t';
/** The live cursors among cursor items (an expired FIFO shard cursor reads as absent until TTL deletes it). */
const live = (items: readonly Record<string, unknown>[], now: number): CursorState[] => items.map(toState).filter((cursor) => !cursorExpired(cursor, now));
/** Attempts of `raiseKnown`: update the cursor, else create it, racing its creation by another receiver. */
const RAISE_ATTEMPTS = 3;

export class CursorStore {
  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly table: string,
    private readonly history: HistoryStore,
    /** Partition and shard cursors this container last read or wrote (cursor-cache.ts); off unless configured. */
    readonly cache: CursorCache = new CursorCache(),
  ) {}

  /**
   * The cursor of (group, stream) as this container last saw it, while fresh (cursor-cache.ts):
   * for planning only, like an eventually consistent read. Undefined when not cached.
   */
  remembered(group: string, stream: string, incarnation: number): CursorState | undefined {
    return this.cache.get(group, stream, incarnation);
  }

  /**
   * How message `seq` completed for the cursor's group, as far as `cursor`
   * (any snapshot) and the history items it spilled know: `dn` first, then,
   * for a sequence number at or below its history mark that it does not hold
   * as a lease, the history (one Query, sometimes one GetItem more).
   */
  async completionOf(cursor: CursorState, seq: number): Promise<DoneEntry | undefined> {
    const done = cursor.done.get(seq);
    if (done !== undefined || seq > markOf(cursor) || cursor.leases.has(seq)) return done;
    return this.history.find(cursor.group, cursor.stream, cursor.createdAt ?? 0, seq);
  }

  private key(group: string, stream: string) {
    return { pk: cursorPk(group), sk: stream };
  }

  /**
   * The cursor, read consistently; undefined when missing or expired. An expired
   * FIFO shard cursor met here is removed (`IF ttl = :read`, what TTL would do
   * later): a receive that found it through the ready index never serves that
   * entry again (docs/design.md, Idle shards expire).
   */
  async get(group: string, stream: string, now: number): Promise<CursorState | undefined> {
    const { Item } = await call(() =>
      this.doc.send(new GetCommand({ TableName: this.table, Key: this.key(group, stream), ConsistentRead: true })),
    );
    if (!Item) return undefined;
    const state = toState(Item);
    if (!cursorExpired(state, now)) return state;
    await conditional(() =>
      this.doc.send(
        new DeleteCommand({
          TableName: this.table,
          Key: this.key(group, stream),
          ConditionExpression: '#t = :read',
          ExpressionAttributeNames: { '#t': 'ttl' },
          ExpressionAttributeValues: { ':read': state.expiresAtSeconds },
        }),
      ),
    );
    return undefined;
  }

  /**
   * Cursors of `group` on the named streams (missing ones are left out).
   * `consistent: false` reads at half the price; fit for planning only,
   * because every write planned from a cursor is conditional on what it read.
   * With `cached` (the group's `createdAt`; eventually consistent reads only),
   * partition cursors this container saw recently come from the cursor cache
   * and only the others are read (and remembered): planning only, as above.
   */
  async getMany(
    group: string,
    streams: string[],
    options: { consistent?: boolean; now: number; cached?: number },
  ): Promise<Map<string, CursorState>> {
    const now = options.now;
    const consistent = options.consistent ?? true;
    const incarnation = consistent ? undefined : options.cached;
    const out = new Map<string, CursorState>();
    const toRead: string[] = [];
    for (const stream of streams) {
      const hit = incarnation === undefined ? undefined : this.cache.get(group, stream, incarnation);
      if (hit) out.set(stream, hit);
      else toRead.push(stream);
    }
    const at = this.cache.now();
    for await (const items of this.batchItems(group, toRead, { consistent })) {
      for (const item of items) {
        const state = toState(item);
        if (cursorExpired(state, now)) continue;
        out.set(String(item.sk), state);
        if (incarnation !== undefined) this.cache.put(group, String(item.sk), state, at, incarnation);
      }
    }
    return out;
  }

  /** The named cursor items (only `projection`, if given), as BatchGetItem answers them (100 keys a request, unprocessed keys retried). */
  private batchItems(group: string, streams: readonly string[], options: { consistent: boolean; projection?: string }): AsyncGenerator<Record<string, unknown>[]> {
    const { projection } = options;
    return batchGetPages(
      this.doc,
      this.table,
      streams.map((sk) => this.key(group, sk)),
      { consistent: options.consistent, ...(projection === undefined ? {} : { projection }), ...(projection?.includes('#t') ? { names: { '#t': 'ttl' } } : {}) },
    );
  }

  /**
   * Every live cursor of a group (admin statistics; O(streams the group has touched)). Expired
   * FIFO shard cursors are left out (read until TTL deletes them, then not even that).
   */
  async list(group: string, now: number): Promise<CursorState[]> {
    const out: CursorState[] = [];
    for await (const page of this.livePages(group, now)) out.push(...page);
    return out;
  }

  /**
   * The first `pagesMax` pages of the group's live cursors whose streams start with `prefix` (a
   * Query page is at most 1 MB), without their completions (`dn`: for figures, the bulk of an idle
   * shard cursor), each with whether more cursors follow unread (`more`): what a group's figures
   * fold as they read, so memory follows one page, not the group's cursors. Read units still follow
   * the items' whole size (docs/design.md, Per-group metrics). `dn` reads as empty.
   */
  async *figurePages(group: string, now: number, pagesMax: number, prefix: string): AsyncGenerator<{ cursors: CursorState[]; more: boolean }> {
    const pages = queryPagesUpTo(this.doc, this.itemQuery(group, { projection: FIGURE_PROJECTION, consistent: true, prefix }), pagesMax);
    for await (const { items, more } of pages) yield { cursors: live(items, now), more };
  }

  /**
   * The named cursors (eventually consistent, without their completions `dn`), live ones only: the
   * active cursors of a group's figures, found on the eventually consistent ready index
   * (BatchGetItem, 100 keys a call, ½ RRU a cursor of up to 4 KB).
   */
  async figuresOf(group: string, streams: readonly string[], now: number): Promise<CursorState[]> {
    const out: CursorState[] = [];
    for await (const items of this.batchItems(group, streams, { consistent: false, projection: FIGURE_PROJECTION })) out.push(...live(items, now));
    return out;
  }

  /** The group's live cursors (consistent), page by page. */
  private async *livePages(group: string, now: number): AsyncGenerator<CursorState[]> {
    for await (const page of this.itemPages(group, { consistent: true })) yield live(page, now);
  }

  /**
   * Deletes the group's cursors created at or before `createdUpTo` (ms), one
   * conditional DeleteItem each (`ca <= :upTo`), `parallel` at a time, reading
   * only their keys page by page. Used when a group is deleted and again when
   * a group of that name is created anew: cursors of the new group are created
   * later, so the condition never removes one of them. Returns how many went.
   */
  async removeCreatedUpTo(group: string, createdUpTo: number, parallel = 8, prefix?: string): Promise<number> {
    this.cache.forgetGroup(group);
    let removed = 0;
    for await (const page of this.itemPages(group, { projection: 'pk, sk', consistent: false, ...(prefix === undefined ? {} : { prefix }) })) {
      const keys = page.map((item) => String(item.sk));
      for (let i = 0; i < keys.length; i += parallel) {
        const done = await Promise.all(
          keys.slice(i, i + parallel).map((stream) =>
            conditional(() =>
              this.doc.send(
                new DeleteCommand({
                  TableName: this.table,
                  Key: this.key(group, stream),
                  ConditionExpression: 'ca <= :upTo',
                  ExpressionAttributeValues: { ':upTo': createdUpTo },
                }),
              ),
            ),
          ),
        );
        removed += done.filter(Boolean).length;
      }
    }
    return removed;
  }

  /** The group's cursor items (only `projection`, if given), page by page; with `prefix`, those whose stream starts with it. */
  private itemPages(group: string, options: { projection?: string | undefined; consistent: boolean; prefix?: string }): AsyncGenerator<Record<string, unknown>[]> {
    return queryPages(this.doc, this.itemQuery(group, options));
  }

  /** The Query of the group's cursor items (see {@link itemPages}). */
  private itemQuery(group: string, options: { projection?: string | undefined; consistent: boolean; prefix?: string }) {
    const { projection } = options;
    return {
      TableName: this.table,
      KeyConditionExpression: options.prefix === undefined ? 'pk = :pk' : 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: { ':pk': cursorPk(group), ...(options.prefix === undefined ? {} : { ':prefix': options.prefix }) },
      ...(projection === undefined ? {} : { ProjectionExpression: projection }),
      ...(projection?.includes('#t') ? { ExpressionAttributeNames: { '#t': 'ttl' } } : {}),
      ConsistentRead: options.consistent,
    };
  }

  /** Creates the cursor at `next` unless it already exists (subscribing twice changes nothing). */
  async createIfAbsent(group: string, stream: string, next: number, now: number): Promise<void> {
    await conditional(() =>
      this.doc.send(
        new PutCommand({ TableName: this.table, Item: newCursorItem(group, stream, next, now), ConditionExpression: 'attribute_not_exists(pk)' }),
      ),
    );
  }

  /**
   * Applies a claim plan. When another receiver changed the cursor first, the answer holds the
   * cursor the failed condition was evaluated against (`ReturnValuesOnConditionCheckFailure:
   * ALL_OLD`: strongly consistent, no read capacity), so the receiver plans again without reading it
   * (`seen` is absent when the item is gone; an expired one is the caller's to discard). With `incarnation` (the group's
   * `createdAt`), a partition or shard cursor's claim returns the item it leaves (`ALL_NEW`, no extra
   * capacity) into the cursor cache, and a lost race marks the stream contended there.
   */
  async claim(group: string, stream: string, change: ClaimChange, incarnation?: number): Promise<ClaimOutcome> {
    const cached = incarnation !== undefined && this.cache.enabled && CursorCache.caches(stream);
    const at = this.cache.now();
    const result = await conditionalWithImage(this.doc, {
      TableName: this.table,
      Key: this.key(group, stream),
      ...claimUpdate(group, change),
      ...(cached ? { ReturnValues: 'ALL_NEW' as const } : {}),
    });
    if (result.ok) {
      if (cached && result.item) this.cache.put(group, stream, toState(result.item), at, incarnation);
      return { ok: true };
    }
    if (result.old && claimLanded(result.old, change)) {
      // The SDK's retry of this claim, which had landed (its answer lost): it took effect. The
      // cursor it left is not in hand: the cached copy goes.
      if (cached) this.cache.forget(group, stream);
      return { ok: true };
    }
    if (cached) this.cache.lost(group, stream);
    return { ok: false, ...(result.old ? { seen: toState(result.old) } : {}) };
  }

  /**
   * A range claim (docs/design.md, Range claims; {@link grantUpdate}): the range's first sequence
   * number from the item the write left (`ALL_NEW`, no extra capacity), which also goes into the
   * cursor cache with `incarnation`. A grant whose answer was lost and that the SDK repeated finds
   * its own range in the failed condition's image: it took effect.
   */
  async grant(group: string, stream: string, change: GrantChange, incarnation?: number): Promise<GrantOutcome> {
    const cached = incarnation !== undefined && this.cache.enabled && CursorCache.caches(stream);
    const at = this.cache.now();
    const result = await conditionalWithImage(this.doc, { TableName: this.table, Key: this.key(group, stream), ...grantUpdate(change), ReturnValues: 'ALL_NEW' });
    const startOf = (item: Record<string, unknown> | undefined) => (item?.fr as Record<string, unknown> | undefined)?.[change.id];
    if (result.ok) {
      const start = startOf(result.item);
      if (cached && result.item) this.cache.put(group, stream, toState(result.item), at, incarnation);
      return { ok: true, start: Number(start) };
    }
    const landed = startOf(result.old);
    if (landed !== undefined) {
      if (cached) this.cache.forget(group, stream);
      return { ok: true, start: Number(landed) };
    }
    if (cached) this.cache.lost(group, stream);
    return { ok: false, ...(result.old ? { seen: toState(result.old) } : {}) };
  }

  /** A spill on its own ({@link spillUpdate}); false when another spill or a seek came first. */
  async spill(group: string, stream: string, spilled: { expectMark: number | undefined; mark: number; remove: readonly string[] }, seekEpoch: number | undefined, now: number): Promise<boolean> {
    this.cache.forget(group, stream);
    return conditional(() => this.doc.send(new UpdateCommand({ TableName: this.table, Key: this.key(group, stream), ...spillUpdate(spilled, seekEpoch, now) })));
  }

  /** Gives a live cursor the empty range maps a grant writes into (a no-op once they exist); false when the cursor is gone. */
  async addRangeMaps(group: string, stream: string, now: number): Promise<boolean> {
    this.cache.forget(group, stream);
    return conditional(() => this.doc.send(new UpdateCommand({ TableName: this.table, Key: this.key(group, stream), ...rangeMapsUpdate(now) })));
  }

  /**
   * Writes range `range` (lease expiry `expiresAt`, as read) out as the ordinary leases `leases`
   * ({@link normaliseUpdate}); false when the range is no longer there as read (written out,
   * committed or ended by a seek meanwhile).
   */
  async normalise(group: string, stream: string, range: RangeOfLease, expiresAt: number, leases: Lease[], now: number): Promise<boolean> {
    this.cache.forget(group, stream);
    return conditional(() =>
      this.doc.send(new UpdateCommand({ TableName: this.table, Key: this.key(group, stream), ...normaliseUpdate(range, expiresAt, leases, now) })),
    );
  }

  /**
   * Commits leases of one stream in one write. When any token no longer
   * matches, each entry is retried alone and classified from the item's old
   * image: a repeat of a commit that took effect answers `committed`,
   * anything else `expired`.
   */
  async commit(
    group: string,
    stream: string,
    entries: Array<{ seq: number; token: string }>,
    now: number,
  ): Promise<CommitOutcome[]> {
    const out: CommitOutcome[] = [];
    // Limits by construction: as many writes as the expression budget needs (one for up to 100 leases).
    for (const chunk of completionChunks(group, stream, entries, now)) out.push(...(await this.commitChunk(group, stream, chunk, now)));
    return out;
  }

  private async commitChunk(
    group: string,
    stream: string,
    entries: Array<{ seq: number; token: string }>,
    now: number,
  ): Promise<CommitOutcome[]> {
    if (entries.length > 1 && new Set(entries.map((e) => e.seq)).size === entries.length) {
      if (await this.completeGuessing(group, stream, { complete: entries, now }, entries)) return entries.map(() => 'committed');
    }
    const out: CommitOutcome[] = [];
    for (const entry of entries) out.push(await this.commitOne(group, stream, entry, now));
    return out;
  }

  /**
   * Commits every member of range `range` (token `token`) in one write (docs/design.md, Range
   * claims); false when the range is not there as granted (written out, committed, or ended by a
   * seek): the caller then commits its members as ordinary leases, which also answers a repeat.
   */
  async commitRange(group: string, stream: string, range: RangeOfLease, token: string, now: number): Promise<{ committed: boolean; after?: CursorState }> {
    const members = Array.from({ length: range.n }, (_, i) => ({ seq: range.start + i, token }));
    // The cursor as this commit left it (`ALL_NEW`, no read units): whether this commit spills (Committer.commitRanges).
    const after = await this.completeGuessing(group, stream, { complete: [], ranges: [{ range, token }], now }, members, true);
    return after === false ? { committed: false } : { committed: true, ...(after === true ? {} : { after: toState(after) }) };
  }

  /**
   * One completion write of the leases `leases` (as `change` says): on a FIFO shard first as their
   * claim guessed readiness, then as the cursor each failed attempt saw says; only a readiness
   * guess that did not hold is worth another try. Whether it took effect.
   */
  private async completeGuessing(
    group: string,
    stream: string,
    change: Omit<CompletionChange, 'readiness'>,
    leases: Array<{ seq: number; token: string }>,
    image = false,
  ): Promise<boolean | Record<string, unknown>> {
    const shard = isShardStream(stream);
    let readiness = shard ? guessedReadiness(leases.map((e) => e.token)) : undefined;
    for (let attempt = 1; ; attempt++) {
      const result = await this.complete(group, stream, { ...change, ...(readiness ? { readiness } : {}) }, image);
      if (result.ok) return result.item ?? true;
      const old = result.old ? toState(result.old) : undefined;
      readiness = old && shard && !cursorExpired(old, change.now) ? retryReadiness(old, leases, attempt) : undefined;
      if (!readiness) return false;
    }
  }


  private async commitOne(group: string, stream: string, entry: { seq: number; token: string }, now: number): Promise<CommitOutcome> {
    const shard = isShardStream(stream);
    let readiness = shard ? guessedReadiness([entry.token]) : undefined;
    for (let attempt = 1; ; attempt++) {
      const result = await this.complete(group, stream, { complete: [entry], now, ...(readiness ? { readiness } : {}) });
      if (result.ok) return 'committed';
      const read = result.old ? toState(result.old) : undefined;
      // An expired shard cursor is absent: its messages are past retention, every handle is stale.
      const old = read && !cursorExpired(read, now) ? read : undefined;
      if (old && repeatsCommit(await this.completionOf(old, entry.seq), entry.token)) return 'committed';
      // The lease is still ours: only the readiness guess failed; decide again from what the cursor was.
      readiness = old && shard ? retryReadiness(old, [entry], attempt) : undefined;
      if (!readiness) return 'expired';
    }
  }

  private complete(group: string, stream: string, change: CompletionChange, image = false) {
    return this.updateCached(group, stream, completionUpdate(group, stream, change), image);
  }

  /**
   * A commit or visibility change of one cursor, with the old image when its condition fails; a
   * partition cursor this container has in its cache gets the item the write leaves (`ALL_NEW`).
   */
  private async updateCached(group: string, stream: string, parts: UpdateParts, image = false) {
    const cached = this.cache.enabled && CursorCache.caches(stream);
    const at = this.cache.now();
    const result = await conditionalWithImage(this.doc, {
      TableName: this.table,
      Key: this.key(group, stream),
      ...parts,
      ...(cached || image ? { ReturnValues: 'ALL_NEW' as const } : {}),
    });
    if (cached && result.ok && result.item) this.cache.update(group, stream, toState(result.item), at);
    return result;
  }

  /** A completion (see {@link completionUpdate}) as a transaction item: commits with publish outputs, protected commits. */
  completionItem(group: string, stream: string, change: CompletionChange): TransactItem {
    // The transaction's result is not returned to this store: the cached cursor is dropped.
    this.cache.forget(group, stream);
    return { Update: { TableName: this.table, Key: this.key(group, stream), ...completionUpdate(group, stream, change) } };
  }

  /**
   * A check (no write) that lease `seq` still carries `token` and, unless `pending` is allowed,
   * is not a pending commit: written with each leading transaction of a split commit, so a
   * stale or repeated handle publishes nothing (docs/design.md, Split commits).
   */
  leaseCheckItem(group: string, stream: string, lease: { seq: number; token: string }, pending: boolean): TransactItem {
    return {
      ConditionCheck: {
        TableName: this.table,
        Key: this.key(group, stream),
        ConditionExpression: pending ? 'fl.#s.k = :k' : 'fl.#s.k = :k AND attribute_not_exists(fl.#s.c)',
        ExpressionAttributeNames: { '#s': String(lease.seq) },
        ExpressionAttributeValues: { ':k': lease.token },
      },
    };
  }

  /** How a commit of `entry` that failed its condition should be answered, from the cursor as it is now. */
  async classify(group: string, stream: string, entry: { seq: number; token: string }, now: number): Promise<CommitOutcome | 'pending'> {
    const cursor = await this.get(group, stream, now);
    if (cursor && repeatsCommit(await this.completionOf(cursor, entry.seq), entry.token)) return 'committed';
    const lease = cursor?.leases.get(entry.seq);
    if (lease && lease.token === entry.token && lease.pending) return 'pending';
    return 'expired';
  }

  /**
   * Moves a lease's expiry (`released`: its holder gave it back, a failed attempt; the expiry is then
   * the end of its back-off); false when the token is no longer the message's latest lease.
   */
  async setVisibility(group: string, stream: string, seq: number, token: string, expiresAt: number, now: number, released: boolean, untried = false): Promise<boolean> {
    for (const variant of visibilityVariants(stream, expiresAt, now)) {
      const result = await this.updateCached(group, stream, visibilityUpdate(group, stream, { seq, token }, expiresAt, variant, released, now, untried));
      if (result.ok) return true;
      const old = result.old ? toState(result.old) : undefined;
      const lease = old && !cursorExpired(old, now) ? old.leases.get(seq) : undefined;
      if (!lease || lease.token !== token || lease.pending) return false;
      // A repeated give-back: the first one took effect.
      if (untried && lease.deliveries === deliveriesOfToken(token) - 1) return true;
      // Only the index condition failed: try the next variant.
    }
    return false;
  }

  /** The transaction item that closes a lease as dead-lettered (written with the dead-letter append). */
  deadLetterItem(group: string, stream: string, done: DoneEntry, token: string, expiresAt?: number): TransactItem {
    this.cache.forget(group, stream);
    return { Update: { TableName: this.table, Key: this.key(group, stream), ...deadLetterUpdate(group, stream, done, token, expiresAt) } };
  }

  /**
   * A notice announced messages `from`…`to` of a FIFO shard: raise the group's
   * known head and put the shard on the ready index, creating the shard cursor
   * at `from` (a number, or computed on demand) the first time the group hears
   * of the shard. Idempotent. With `unsought` (the shard's notice cursor and
   * the seek count `sv` read from it), a new cursor is created in one
   * transaction with a check that no seek moved the namespace since: false
   * when one did (nothing was created; the notices must be read again).
   * `'known'` when the live cursor knew `to` already (its failed condition's old
   * image says so; the notice had been absorbed before). `readyPk`: the shard's ready-index key
   * (a wide topic's bucket, `rk`; undefined: the home key).
   */
  async raiseKnown(
    group: string,
    stream: string,
    from: number | (() => Promise<number>),
    to: number,
    now: number,
    unsought?: { noticeStream: string; version: number | undefined },
    epochStart?: number,
    readyPk?: string,
  ): Promise<boolean | 'known'> {
    for (let attempt = 0; attempt < RAISE_ATTEMPTS; attempt++) {
      const raised = await conditionalWithImage(this.doc, {
        TableName: this.table,
        Key: this.key(group, stream),
        ...raiseKnownUpdate(group, stream, to, now, epochStart, readyPk),
      });
      if (raised.ok) return true;
      // An old image of a live cursor: it already knows at least `to`. An expired one is absent:
      // a new cursor replaces it (docs/design.md, Idle shards expire).
      const old = raised.old ? toState(raised.old) : undefined;
      if (old && !cursorExpired(old, now)) {
        if ((old.known ?? 0) < to) return true;
        // It knew `to` already, but not this epoch's start: the epoch's first notice was read after a
        // later one (another notice stream). Statistics count the shard's backlog from it.
        if (epochStart !== undefined && (old.epochStart ?? 0) < epochStart) {
          await conditional(() => this.doc.send(new UpdateCommand({ TableName: this.table, Key: this.key(group, stream), ...raiseEpochUpdate(epochStart, now) })));
        }
        return 'known';
      }
      // Where the new cursor starts may take reads to find out (see Receiver): only now that it is needed.
      const start = typeof from === 'number' ? from : await from();
      const item = {
        ...newCursorItem(group, stream, start, now),
        kn: to,
        g1pk: readyPk ?? readyIndexPk(group),
        g1sk: readyNowKey(stream),
        ...(readyPk === undefined ? {} : { rk: readyPk }),
        ttl: shardCursorTtl(now),
        ...(epochStart === undefined ? {} : { ke: epochStart }),
      };
      // Missing, or expired (TTL has not deleted it yet): either way absent, and replaced.
      const put = {
        TableName: this.table,
        Item: item,
        ConditionExpression: 'attribute_not_exists(pk) OR #t <= :ls',
        ExpressionAttributeNames: { '#t': 'ttl' },
        ExpressionAttributeValues: { ':ls': Math.floor(now / 1000) },
      };
      if (!unsought) {
        if (await conditional(() => this.doc.send(new PutCommand(put)))) return true;
        continue;
      }
      const created = await this.createUnsought(put, { TableName: this.table, Key: this.key(group, unsought.noticeStream), ...unsoughtSinceCondition(unsought.version) });
      if (created !== 'exists') return created === 'created';
    }
    return true;
  }

  /** Put a new shard cursor only while its notice cursor saw no seek (docs/design.md, Seek: racing a seek). */
  private async createUnsought(
    put: { TableName: string; Item: Record<string, unknown>; ConditionExpression: string; ExpressionAttributeNames?: Record<string, string>; ExpressionAttributeValues?: Record<string, unknown> },
    check: { TableName: string; Key: Record<string, unknown>; ConditionExpression: string; ExpressionAttributeValues?: Record<string, unknown> },
  ): Promise<'created' | 'exists' | 'sought'> {
    try {
      await this.doc.send(new TransactWriteCommand({ TransactItems: [{ Put: put }, { ConditionCheck: check }] }));
      return 'created';
    } catch (error) {
      const reasons = cancellationReasons(error);
      // A conflict on the notice cursor is a seek writing it: as if it had won.
      if (reasons?.[1] === 'ConditionalCheckFailed' || reasons?.[1] === 'TransactionConflict') return 'sought';
      // The cursor exists (or another receiver is creating it): raise it instead.
      if (reasons?.[0] === 'ConditionalCheckFailed' || reasons?.[0] === 'TransactionConflict' || isConditionalFailure(error)) return 'exists';
      throw translateDynamoError(error);
    }
  }

  /**
   * Seek of a FIFO namespace on one notice cursor (see {@link noticeSeekUpdate}): counts the seek,
   * records `floor` and, with `to`, moves it. False when the cursor does not exist.
   */
  async seekNotice(group: string, stream: string, to: { next: number; segmentStart: number } | undefined, floor: number): Promise<boolean> {
    return conditional(() =>
      this.doc.send(new UpdateCommand({ TableName: this.table, Key: this.key(group, stream), ...noticeSeekUpdate(to, floor) })),
    );
  }

  /**
   * The group's live shard cursors of a FIFO namespace, page by page (a strongly consistent Query of
   * `C#<group>` for sort keys starting `<namespace>/k:` (`/q:`: sequenced), only what a seek conditions on). Cursors past
   * their `ttl` at `now` are absent (docs/design.md, Idle shards expire) and left out: a seek does not
   * move them; the shard's next notice replaces them at the seek's position.
   */
  async *shardCursorPages(group: string, namespace: string, now: number, sequenced = false): AsyncGenerator<Array<{ stream: string; read: SeekRead }>> {
    // A sequenced topic's shard streams are `<namespace>/q:<key>` (streams.ts).
    const prefix = `${namespace}/${sequenced ? 'q' : 'k'}:`;
    for await (const page of this.itemPages(group, { projection: 'sk, nx, fl, fq, kn, #t', consistent: true, prefix })) {
      yield page
        .filter((item) => !cursorExpired({ expiresAtSeconds: item.ttl === undefined ? undefined : Number(item.ttl) }, now))
        .map((item) => ({ stream: String(item.sk), read: { nx: item.nx, fl: item.fl, ...(item.fq === undefined ? {} : { fq: item.fq }), ...(item.kn === undefined ? {} : { kn: item.kn }) } }));
    }
  }

  /**
   * Seek: moves a cursor to `next` (read position `segmentStart`) and ends
   * every lease it holds, pending commits included, in one write conditional
   * on what it read (see {@link seekMoveUpdate}; starting from `read` when the
   * caller has it, reading again after a lost race), and bumps the cursor's
   * seek epoch `se`. `dn` stays: a handle whose commit took effect still
   * answers `committed` until the message's replay commits, any other old
   * handle `ReceiptHandleExpired` (the epoch in tokens and completions keeps
   * them apart). Returns false when the cursor does not exist, has
   * expired at `now` (FIFO shard cursors: absent), or kept changing (`attempts` writes).
   */
  async moveTo(group: string, stream: string, next: number, segmentStart: number, now: number, read?: SeekRead, attempts = 8): Promise<boolean> {
    // Receives of this container read the cursor again (other containers' cached copies fail their
    // claims' `nx` or seek-epoch condition: docs/design.md, the cursor cache).
    this.cache.forget(group, stream);
    let seen = read;
    for (let attempt = 0; attempt < attempts; attempt++) {
      if (!seen) {
        const { Item } = await call(() =>
          this.doc.send(
            new GetCommand({ TableName: this.table, Key: this.key(group, stream), ConsistentRead: true, ProjectionExpression: 'nx, fl, fq, kn, #t', ExpressionAttributeNames: { '#t': 'ttl' } }),
          ),
        );
        if (!Item || cursorExpired({ expiresAtSeconds: Item.ttl === undefined ? undefined : Number(Item.ttl) }, now)) return false;
        seen = { nx: Item.nx, fl: Item.fl, ...(Item.fq === undefined ? {} : { fq: Item.fq }), ...(Item.kn === undefined ? {} : { kn: Item.kn }) };
      }
      const moved = await conditional(() =>
        this.doc.send(new UpdateCommand({ TableName: this.table, Key: this.key(group, stream), ...seekMoveUpdate(group, stream, seen!, next, segmentStart, now) })),
      );
      if (moved) {
        this.cache.forget(group, stream);
        return true;
      }
      seen = undefined;
      await new Promise((resolve) => setTimeout(resolve, Math.min(50, 2 ** attempt) * (0.5 + Math.random())));
    }
    return false;
  }

  /** Moves a lease-less cursor (notice streams) forward; false when someone else moved it first. */
  async advance(group: string, stream: string, expectNext: number, next: number, segmentStart: number): Promise<boolean> {
    return conditional(() =>
      this.doc.send(
        new UpdateCommand({ TableName: this.table, Key: this.key(group, stream), ...advanceUpdate(expectNext, next, segmentStart) }),
      ),
    );
  }
}
