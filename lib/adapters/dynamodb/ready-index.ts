/**
 * The ready index of FIFO shard cursors (docs/design.md, Ready index): the
 * cursor's `g1pk` and `g1sk` on the sparse index `gsi1`. `g1pk` is the group's
 * home key `R#<group>`, or for a shard of a wide FIFO topic (more than 4 notice
 * streams) one of the group's 16 buckets, `R#<group>#<fnv1a(stream) % 16>` (the
 * cursor's `rk`), so that no one partition key of the index takes every shard's
 * writes (≤ 1,000 WCU/s per key on AWS).
 *
 * A shard waiting for a lease to expire is indexed at that time (13-digit
 * ms); a shard with work now at a key of its own, `#<FNV-1a of the stream,
 * 8 hex>`, that sorts before every time and never changes while the shard
 * stays ready, so claims and commits on a busy shard leave its index entry
 * alone (an index key change costs 2 WRU more). The hash spreads ready shards
 * so that {@link ReadyIndex.ready} can start reading at a random point.
 * An idle shard has no entry. Keys: keys.ts.
 */
import { QueryCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { CursorState } from '../../domain/cursor.js';
import { shuffle } from '../../domain/shuffle.js';
import { call } from './call.js';
import { cursorPk, readyAtKey, readyIndexPk, readyNowKey, readyNowKeyAt } from './keys.js';
import { GSI1 } from './table.js';

/** The index key for a ready time (undefined: idle): the shard's own "ready now" key for any time not after `now`. */
export const readyKey = (stream: string, at: number | undefined, now: number): string | undefined =>
  at === undefined ? undefined : at <= now ? readyNowKey(stream) : readyAtKey(at);

/** A change of a shard's ready-index key, from the key read to the new one (undefined: off the index). */
export interface ReadyKeyChange {
  from: string | undefined;
  to: string | undefined;
}

/**
 * The ready-index change a claim makes (undefined: none). A shard ready now keeps whatever
 * "ready" key it has (its own ready-now key, or a time already passed); otherwise the key
 * changes only when the time differs.
 */
export const readyKeyChange = (stream: string, cursor: CursorState, readyAt: number | undefined, now: number): ReadyKeyChange | undefined => {
  const from = cursor.readyKey;
  const stillReady = readyAt !== undefined && readyAt <= now && cursor.readyAt !== undefined && cursor.readyAt <= now;
  const to = readyKey(stream, readyAt, now);
  return stillReady || to === from ? undefined : { from, to };
};

/** Buckets read with the home key before the others (readyAcross). */
export const FIRST_WAVE_BUCKETS = 2;

/** Where a spread read starts: the "ready now" key at `spread` ∈ [0, 1) of the hash space. */
const spreadStart = (spread: number): string => readyNowKeyAt(Math.floor(Math.min(Math.max(spread, 0), 1 - 2 ** -32) * 2 ** 32));

export class ReadyIndex {
  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly table: string,
  ) {}

  /**
   * Up to `limit` FIFO shard cursors of `group` under its home key that are ready (`readyAt <=
   * now`; wide topics' shards: {@link readyAcross}). Eventually consistent. A ready shard keeps its key while it stays ready, so the first page alone would
   * serve the same shards again and again: when there are more than a page, reading also starts
   * at a random point (`spread`, in [0, 1)) of the "ready now" keys, wrapping to the first page.
   */
  async ready(group: string, now: number, limit: number, spread = Math.random()): Promise<string[]> {
    return this.readyUnder(readyIndexPk(group), group, now, limit, spread);
  }

  /**
   * The ready shards under the group's home key (up to `limit`) and under `buckets` (a group's 16
   * bucket keys when a receive asks for a wide topic), the buckets offering about twice what the
   * home key does — the home key's shards, a default topic's beside a wide one, keep about a third
   * of the candidates, and a backlog reads ≈ 3 × `limit` entries, not 17 ×. The buckets are read in
   * two waves (docs/design.md, Ready index, "Bucket reads in two waves"): with the home key,
   * {@link FIRST_WAVE_BUCKETS} random buckets, up to `⌈2 × limit ÷ 2⌉` each; only when they offer
   * fewer than `limit` shards, the other buckets, up to `⌈2 × missing ÷ 14⌉` each. One Query per
   * key (two when a key has more than a page), each with its own spread; merged without repeats
   * (an entry moved from one key to another may show under both for a moment: the index is
   * eventually consistent). A backlog then costs 3 keys' reads a receive, not 17; an idle or sparse
   * index costs the 17 as before, in two round trips instead of one.
   */
  async readyAcross(group: string, buckets: readonly string[], now: number, limit: number, spread: () => number = Math.random): Promise<string[]> {
    // The buckets in a random order: the first FIRST_WAVE_BUCKETS are read with the home key; the
    // rest only when those did not offer `limit` shards.
    const order = shuffle(buckets, spread);
    const bucketReads = (pks: readonly string[], want: number) => {
      const perBucket = pks.length > 0 ? Math.max(1, Math.ceil((2 * want) / pks.length)) : 0;
      return pks.map((pk) => this.readyUnder(pk, group, now, perBucket, spread()));
    };
    const first = order.slice(0, FIRST_WAVE_BUCKETS);
    const [home, ...firstWave] = await Promise.all([this.readyUnder(readyIndexPk(group), group, now, limit, spread()), ...bucketReads(first, limit)]);
    const fromBuckets = new Set(firstWave.flat());
    const rest = order.slice(FIRST_WAVE_BUCKETS);
    const secondWave = fromBuckets.size >= limit || rest.length === 0 ? [] : await Promise.all(bucketReads(rest, limit - fromBuckets.size));
    return [...new Set([...(home ?? []), ...fromBuckets, ...secondWave.flat()])];
  }

  private async readyUnder(pk: string, group: string, now: number, limit: number, spread: number): Promise<string[]> {
    const page = (from?: string) =>
      call(() =>
        this.doc.send(
          new QueryCommand({
            TableName: this.table,
            IndexName: GSI1,
            KeyConditionExpression: `g1pk = :pk AND g1sk ${from === undefined ? '<= :now' : 'BETWEEN :from AND :now'}`,
            ExpressionAttributeValues: { ':pk': pk, ':now': readyAtKey(now), ...(from === undefined ? {} : { ':from': from }) },
            Limit: limit,
          }),
        ),
      );
    const first = await page();
    let items = first.Items ?? [];
    if (first.LastEvaluatedKey !== undefined) {
      const from = await page(spreadStart(spread));
      const seen = new Set<string>();
      items = [...(from.Items ?? []), ...items].filter((item) => !seen.has(String(item.sk)) && seen.add(String(item.sk)) !== undefined);
      items = items.slice(0, limit);
    }
    return items.filter((item) => String(item.pk) === cursorPk(group)).map((item) => String(item.sk));
  }
}
