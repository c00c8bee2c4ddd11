/**
 * The counter of a sequenced stream, and its holes (docs/design.md, "Sequenced FIFO topics").
 *
 * A sequenced stream's sentinel `S#<stream>`/`#` is its counter: `nx` the next number to grant,
 * `lg`/`lt` the first number and time of the latest grant, `ef` the first number of the current
 * epoch. A writer takes `[nx, nx + count)` with one unconditional-in-effect update (it cannot lose a
 * race) and puts its segment at the range's first number, write-once, carrying `ga` (its grant's
 * time), `pv`/`pt` (the grant below it, as the counter named it) and `ef`. A range granted and never
 * written is a hole; `settle` applies the gap rule (lib/domain/gaps.ts) for every reader.
 */
import { GetCommand, PutCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { gapState, type GrantedItem } from '../../domain/gaps.js';
import { Limits } from '../../domain/model.js';
import { call, conditionFailureImage } from './call.js';
import { isConditionalFailure } from './errors.js';
import { ThrottledError } from '../../domain/errors.js';
import { SENTINEL_SK, segmentSk, streamPk } from './keys.js';
import type { Head } from './stream-log.js';

/** A range of numbers the counter handed to one writer. */
export interface Grant {
  start: number;
  count: number;
  /** When it was granted (ms, this writer's clock). */
  at: number;
  /** The grant just below it (absent: this grant opened the epoch). */
  prev: { seq: number; at: number } | undefined;
  /** The first number of its epoch. */
  epoch: number;
  /** This grant opened a new epoch (the counter was absent or past its `ttl`). */
  opened: boolean;
}

/** A stored item of a sequenced stream as a reader sees it: its grant, and `ttl` (a filler next to it expires with it). */
export type GrantedStored = GrantedItem & { ttl: number | undefined; filler: boolean };

/** The attributes a segment of a sequenced stream carries (write-once, with its records). */
export const grantAttributes = (grant: Grant): Record<string, number> => ({
  ga: grant.at,
  ef: grant.epoch,
  ...(grant.prev ? { pv: grant.prev.seq, pt: grant.prev.at } : {}),
});

/** Bytes those attributes add to a segment item at most (names and numbers), for item budgets. */
export const GRANT_ATTRIBUTES_MAX_BYTES = 4 * (2 + 21);

/** What a stored item of a sequenced stream says of its grant; undefined for an item without one. */
export function grantedOf(item: Record<string, unknown>): GrantedStored | undefined {
  if (item.ga === undefined) return undefined;
  return {
    seq: Number(item.sk),
    grantedAt: Number(item.ga),
    prev: item.pv === undefined ? undefined : { seq: Number(item.pv), at: Number(item.pt) },
    epoch: Number(item.ef),
    ttl: item.ttl === undefined ? undefined : Number(item.ttl),
    filler: item.hf === 1,
  };
}

/**
 * How long a counter lives after its last grant (s): past the longest retention, so no stored
 * segment outlives the counter that numbered it, plus a minute. Once it has expired, the next grant
 * opens a new epoch above every number it ever handed out (docs/design.md).
 */
export const COUNTER_TTL_SECONDS = Limits.retentionMaxSeconds + 60;

/** A stored item seen by a reader of a sequenced stream, in key order. */
export interface SettleItem {
  seq: number;
  count: number;
  granted?: GrantedStored | undefined;
}

export class Sequencer {
  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly table: string,
  ) {}

  /**
   * Takes `count` numbers of `stream`: one update of its counter that cannot lose to another writer
   * (1 WRU). When the counter is absent or past its `ttl`, opens a new epoch above every number the
   * stream could have used (`now × 1000`, as a chained epoch, and above the old counter's `nx`).
   */
  async grant(stream: string, count: number, now: number): Promise<Grant> {
    const key = { pk: streamPk(stream), sk: SENTINEL_SK };
    const ttl = Math.ceil(now / 1000) + COUNTER_TTL_SECONDS;
    for (let attempt = 0; ; attempt++) {
      let old: Record<string, unknown> | undefined;
      try {
        const { Attributes } = await call(() => this.doc.send(
          new UpdateCommand({
            TableName: this.table,
            Key: key,
            // Every operand is the item before the update: `lg` takes the old `nx`.
            UpdateExpression: 'SET nx = nx + :n, lg = nx, lt = :now, #t = :ttl',
            ConditionExpression: 'attribute_exists(nx) AND #t > :nowS',
            ExpressionAttributeNames: { '#t': 'ttl' },
            ExpressionAttributeValues: { ':n': count, ':now': now, ':ttl': ttl, ':nowS': Math.floor(now / 1000) },
            ReturnValues: 'ALL_OLD',
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          }),
        ));
        const start = Number(Attributes?.nx);
        return {
          start,
          count,
          at: now,
          prev: Attributes?.lg === undefined ? undefined : { seq: Number(Attributes.lg), at: Number(Attributes.lt) },
          epoch: Number(Attributes?.ef),
          opened: false,
        };
      } catch (error) {
        if (!isConditionalFailure(error)) throw error;
        // (Unmarshalled already: the document client leaves a failed condition's image marshalled.)
        old = conditionFailureImage(error);
      }
      // No live counter: open an epoch, conditional on the counter as the failed update saw it.
      const base = Math.max(now * 1000, Number(old?.nx ?? 0), Number(old?.eb ?? 0) + 1);
      try {
        await call(() => this.doc.send(
          new UpdateCommand({
            TableName: this.table,
            Key: key,
            UpdateExpression: 'SET nx = :next, lg = :b, lt = :now, ef = :b, #t = :ttl',
            ConditionExpression: old === undefined ? 'attribute_not_exists(pk)' : old.ttl === undefined ? 'attribute_not_exists(#t)' : '#t = :oldTtl',
            ExpressionAttributeNames: { '#t': 'ttl' },
            ExpressionAttributeValues: {
              ':next': base + count,
              ':b': base,
              ':now': now,
              ':ttl': ttl,
              ...(old?.ttl === undefined ? {} : { ':oldTtl': old.ttl }),
            },
          }),
        ));
        return { start: base, count, at: now, prev: undefined, epoch: base, opened: true };
      } catch (error) {
        // Another writer opened it first (or it changed meanwhile): grant again, from it.
        if (!isConditionalFailure(error)) throw error;
        if (attempt >= 3) throw new ThrottledError('The message store is busy; retry the request.');
      }
    }
  }

  /**
   * The stream's head as a counter: `nx − 1` as a sentinel base (`StreamLog.nextAfter` answers
   * `nx`), or nothing when the stream has no counter yet. One consistent read (½–1 RRU).
   */
  async head(stream: string): Promise<Head> {
    const next = await this.counter(stream);
    return next === undefined ? { kind: 'none' } : { kind: 'sentinel', base: next.seq - 1 };
  }

  /**
   * The counter as the item a reader would meet at `nx` (the next number granted): its last grant is
   * the one just below it. Undefined when the stream has none. One consistent read.
   */
  async counter(stream: string): Promise<GrantedItem | undefined> {
    const { Item } = await call(() =>
      this.doc.send(
        new GetCommand({ TableName: this.table, Key: { pk: streamPk(stream), sk: SENTINEL_SK }, ConsistentRead: true, ProjectionExpression: 'nx, lg, lt, ef' }),
      ),
    );
    if (Item?.nx === undefined) return undefined;
    const at = Number(Item.lt);
    return { seq: Number(Item.nx), grantedAt: at, prev: { seq: Number(Item.lg), at }, epoch: Number(Item.ef) };
  }

  /**
   * Puts a filler over `[from, from + count)` (write-once, 1 WRU): the range's writer can no longer
   * put there. Answers the item that holds the key afterwards: the filler, or the writer's segment
   * that landed first (as stored, marshalled images unmarshalled).
   */
  async fill(stream: string, from: number, count: number, grantedAt: number, epoch: number, ttl: number | undefined, prev?: { seq: number; at: number }): Promise<Record<string, unknown>> {
    const item: Record<string, unknown> = {
      pk: streamPk(stream),
      sk: segmentSk(from),
      n: count,
      m: [],
      hf: 1,
      ga: grantedAt,
      ef: epoch,
      ...(prev ? { pv: prev.seq, pt: prev.at } : {}),
      ...(ttl === undefined ? {} : { ttl }),
    };
    try {
      await call(() =>
        this.doc.send(
          new PutCommand({ TableName: this.table, Item: item, ConditionExpression: 'attribute_not_exists(pk)', ReturnValuesOnConditionCheckFailure: 'ALL_OLD' }),
        ),
      );
      return item;
    } catch (error) {
      const image = conditionFailureImage(error);
      if (!image) throw error;
      return image;
    }
  }

  /**
   * A writer's own range, given up (its put failed, or may not have been sent): filled so that no
   * reader waits for it. A failure to fill is left to the readers (they fill after F).
   */
  async fillOwn(stream: string, grant: Grant): Promise<void> {
    try {
      // Expires as the counter would: once gone, the gap under the item above is old enough to pass.
      await this.fill(stream, grant.start, grant.count, grant.at, grant.epoch, Math.ceil(grant.at / 1000) + COUNTER_TTL_SECONDS, grant.prev);
    } catch {
      // The first reader that meets the hole fills it (gaps.ts).
    }
  }

  /**
   * The gap rule over a read of a sequenced stream from `from`: the items in key order, with the
   * holes below them filled (fillers inserted, as `parse` makes them) and cut at the first gap that
   * must be held. `heldUntil`: when a reader should look again (undefined: nothing held).
   */
  async settle<T extends SettleItem>(
    stream: string,
    from: number,
    items: readonly T[],
    now: number,
    parse: (item: Record<string, unknown>) => T,
  ): Promise<{ items: T[]; heldUntil: number | undefined }> {
    const out: T[] = [];
    const queue = [...items];
    let at = from;
    while (queue.length > 0) {
      const item = queue[0] as T;
      const end = item.seq + item.count;
      if (item.seq <= at || item.granted === undefined) {
        queue.shift();
        out.push(item);
        at = Math.max(at, end);
        continue;
      }
      const state = gapState(at, item.granted, now);
      if (state.kind === 'hold') return { items: out, heldUntil: state.until };
      if (state.kind === 'pass') {
        at = item.seq;
        continue;
      }
      // Fill the dead grant just below the item; the gap under it (if any) is decided next.
      const stored = await this.fill(stream, state.from, state.count, state.grantedAt, item.granted.epoch, item.granted.ttl);
      queue.unshift(parse(stored));
    }
    return { items: out, heldUntil: undefined };
  }
}
