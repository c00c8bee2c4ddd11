/**
 * The ready index of FIFO shard cursors (docs/design.md, Ready index): the
 * cursor's `g1pk` and `g1sk` on the sparse index `gsi1`. `g1pk` is the group's
 * home key `R#<group>`, or for a shard of a wide FIFO topic (more than 4 notice
 * streams) one of the group's B buckets (16–64, keys.ts `readyBucketCount`),
 * `R#<group>#<fnv1a(stream) % B>` (the cursor's `rk`), so that no one partition
 * key of the index takes every shard's writes (≤ 1,000 WCU/s per key on AWS).
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
import { call, queryPages } from './call.js';
import { cursorPk, readyAtKey, readyIndexPk, readyNowKey, readyNowKeyAt } from './keys.js';
import { HORIZON_MARGIN_MS, QUIET_READ_EVERY_MS, type ReadyHorizon } from './ready-horizon.js';
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

/** How {@link ReadyIndex.readyAcross} reads. */
export interface ReadyAcrossOptions {
  /** Random numbers in [0, 1): the buckets' order and each key's start point. */
  spread?: () => number;
  /** Read the home key with the first wave (default), or only with the second. */
  homeFirst?: boolean;
  /**
   * A short receive (no wait, no park): its second wave reads at most {@link SECOND_WAVE_SAMPLE}
   * buckets, the next ones of this container's rotation for the group (docs/design.md, "Short
   * receives sample the buckets"). Default false: every bucket.
   */
  sample?: boolean;
  /**
   * The shards the receive can claim (its topics: a receive narrowed by `topics` may share the
   * group's buckets with other topics' shards). Only these count as the first wave's offer; default: all.
   */
  wanted?: (stream: string) => boolean;
  /**
   * A waiting receive (a long-poll look, a parking receive): when this container's last thorough
   * read of the group found nothing due and the group's horizon says nothing was written since
   * (ready-horizon.ts), read the horizon instead of the keys (docs/design.md, Ready index, "The
   * horizon"). Default false: read the keys.
   */
  rest?: boolean;
}

/** Buckets the second wave of a short receive reads at most: a 16-bucket group's 14 others, all of them. */
export const SECOND_WAVE_SAMPLE = 14;
/** Groups whose rotation one container remembers; past this it starts again (from a random bucket). */
const ROTATIONS_KEPT = 1_000;
/** Groups whose last quiet read one container remembers; past this it forgets them all (their next look reads every key). */
const QUIET_GROUPS_KEPT = 1_000;

export class ReadyIndex {
  /** Per group and bucket count: where the next sampled second wave starts in its buckets. */
  private readonly rotations = new Map<string, number>();
  /** Per group and bucket count: when the last thorough read that found nothing due began (ms). */
  private readonly quiet = new Map<string, number>();

  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly table: string,
    /** The groups' horizons (ready-horizon.ts): what lets a waiting receive of a quiet group skip the keys. */
    private readonly horizon: Pick<ReadyHorizon, 'read'>,
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
   * The ready shards under the group's home key (up to `limit`) and under `buckets` (a group's 16–64
   * bucket keys when a receive asks for a wide topic), the buckets offering about twice what the
   * home key does — the home key's shards, a default topic's beside a wide one, keep about a third
   * of the candidates, and a backlog reads ≈ 3 × `limit` entries, not B + 1 ×. The buckets are read
   * in two waves (docs/design.md, Ready index, "Bucket reads in two waves"): {@link
   * FIRST_WAVE_BUCKETS} random buckets, up to `⌈2 × limit ÷ 2⌉` each; only when they offer fewer than
   * `limit` shards (the home key's do not count), the other buckets — a short receive's (`sample`)
   * at most {@link SECOND_WAVE_SAMPLE} of them —, up to `⌈2 × missing ÷ n⌉` each. The home key is read
   * with the first wave, or — `homeFirst` false: a receive that asks for wide topics only, whose
   * shards are all under buckets but for cursors of earlier versions — with a second wave of a
   * receive that is not short (`sample` false; a short receive's second wave leaves it out even
   * when it reads every bucket, B = 16), so that no key is read by every receive of the group
   * (docs/design.md, "No key every receive reads"). One
   * Query per key (two when a key has more than a page), each with its own spread; merged without
   * repeats (an entry moved from one key to another may show under both for a moment: the index is
   * eventually consistent). With `rest`, a group that was quiet at this container's last thorough
   * read and has had no entry written since (its horizon, ready-horizon.ts) is not read: nothing.
   */
  async readyAcross(group: string, buckets: readonly string[], now: number, limit: number, options: ReadyAcrossOptions = {}): Promise<string[]> {
    const { sample = false, rest = false } = options;
    const key = `${group}\u0000${buckets.length}`;
    const since = this.quiet.get(key);
    // Only buckets make it worth it: a group without reads its home key, ½ RRU, for the horizon's 1.
    if (rest && !sample && buckets.length > 0 && since !== undefined && now - since < QUIET_READ_EVERY_MS && (await this.horizon.read(group)) < since - HORIZON_MARGIN_MS) return [];
    const found = await this.readAcross(group, buckets, now, limit, options);
    if (this.quiet.size >= QUIET_GROUPS_KEPT && !this.quiet.has(key)) this.quiet.clear();
    // Only a thorough read (every key) that found nothing makes the group quiet; anything found ends it.
    if (found.length > 0) this.quiet.delete(key);
    else if (!sample) this.quiet.set(key, now);
    return found;
  }

  private async readAcross(group: string, buckets: readonly string[], now: number, limit: number, options: ReadyAcrossOptions): Promise<string[]> {
    const { spread = Math.random, homeFirst = true, sample = false, wanted = () => true } = options;
    // The first FIRST_WAVE_BUCKETS of a random order are the first wave.
    const order = shuffle(buckets, spread);
    const bucketReads = (pks: readonly string[], want: number) => {
      const perBucket = pks.length > 0 ? Math.max(1, Math.ceil((2 * want) / pks.length)) : 0;
      return pks.map((pk) => this.readyUnder(pk, group, now, perBucket, spread()));
    };
    const home = () => this.readyUnder(readyIndexPk(group), group, now, limit, spread());
    const nothing = Promise.resolve<string[]>([]);
    const first = order.slice(0, FIRST_WAVE_BUCKETS);
    const [homeEarly, ...firstWave] = await Promise.all([homeFirst ? home() : nothing, ...bucketReads(first, limit)]);
    // Only the buckets' offer of wanted shards decides: neither a busy default topic's shards under
    // the home key nor another topic's in the buckets may keep this receive's buckets unread.
    const fromBuckets = new Set(firstWave.flat());
    const offered = [...fromBuckets].filter(wanted).length;
    const rest = order.slice(FIRST_WAVE_BUCKETS);
    if (offered >= limit || (rest.length === 0 && homeFirst)) return [...new Set([...(homeEarly ?? []), ...fromBuckets])];
    const second = sample && rest.length > SECOND_WAVE_SAMPLE ? this.nextInRotation(group, buckets, new Set(first), spread) : rest;
    // The home key left out of the first wave comes with a thorough second wave only: a short
    // receive's is a sample too, and one key read by most sparse receives is what `homeFirst` avoids.
    const [homeLate, ...secondWave] = await Promise.all([homeFirst || sample ? nothing : home(), ...bucketReads(second, limit - offered)]);
    return [...new Set([...(homeEarly ?? []), ...(homeLate ?? []), ...fromBuckets, ...secondWave.flat()])];
  }

  /**
   * The next {@link SECOND_WAVE_SAMPLE} buckets of the group's rotation in this container (in their
   * own order, wrapping; those of the first wave left out): every bucket is in one of any
   * ⌈B ÷ SECOND_WAVE_SAMPLE⌉ sampled second waves in a row (5 for 64 buckets). A group met for the
   * first time starts at a random bucket, so containers do not all start at the same one.
   */
  private nextInRotation(group: string, buckets: readonly string[], firstWave: ReadonlySet<string>, spread: () => number): string[] {
    // Per group and bucket count: receives of one group narrowed to topics of other widths read
    // other counts, and must not move each other's rotation.
    const key = `${group}\u0000${buckets.length}`;
    const start = this.rotations.get(key) ?? Math.floor(spread() * buckets.length);
    if (this.rotations.size >= ROTATIONS_KEPT && !this.rotations.has(key)) this.rotations.clear();
    this.rotations.set(key, (start + SECOND_WAVE_SAMPLE) % buckets.length);
    return Array.from({ length: SECOND_WAVE_SAMPLE }, (_, i) => buckets[(start + i) % buckets.length] as string).filter((pk) => !firstWave.has(pk));
  }

  /**
   * Every FIFO shard of `group` on the ready index under `pks` (its home key and bucket keys),
   * ready now or waiting for a lease to expire: the shards with work or leases, which a group's
   * figures read instead of every cursor once the group has many (docs/design.md, Per-group
   * metrics). Eventually consistent; every page of every key (O(active shards)); an entry moved
   * between keys a moment ago may show twice or not at all.
   */
  async entries(group: string, pks: readonly string[]): Promise<string[]> {
    const streams = new Set<string>();
    await Promise.all(
      pks.map(async (pk) => {
        const input = { TableName: this.table, IndexName: GSI1, KeyConditionExpression: 'g1pk = :pk', ExpressionAttributeValues: { ':pk': pk } };
        for await (const items of queryPages(this.doc, input)) {
          for (const item of items) if (String(item.pk) === cursorPk(group)) streams.add(String(item.sk));
        }
      }),
    );
    return [...streams];
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
            // One more than asked: a key holding exactly `limit` entries is then told from one holding
            // more (at its Limit DynamoDB answers a LastEvaluatedKey either way) and read once.
            Limit: limit + 1,
          }),
        ),
      );
    const first = await page();
    let items = (first.Items ?? []).slice(0, limit);
    if ((first.Items?.length ?? 0) > limit) {
      const from = await page(spreadStart(spread));
      const seen = new Set<string>();
      items = [...(from.Items ?? []), ...items].filter((item) => !seen.has(String(item.sk)) && seen.add(String(item.sk)) !== undefined);
      items = items.slice(0, limit);
    }
    return items.filter((item) => String(item.pk) === cursorPk(group)).map((item) => String(item.sk));
  }
}
