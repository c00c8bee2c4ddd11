/**
 * The AWS capacity model of the scale rows (docs/performance.md, "Scale: contention and the AWS ceiling").
 *
 * Every append to a stream reads its head and puts the next segment on the stream's one partition
 * key (`S#<stream>`); a writer that lost the race tries again. One row of the bench measures, per
 * stream key, the successful appends, the lost races (real ConditionalCheckFailed answers), the head
 * reads and the units read and written (failed attempts included). From those, per key k and per
 * message sent to the topic:
 *
 *   write bound   1,000 WCU/s ÷ (write units on k per message)
 *   read bound    3,000 RCU/s ÷ (read units on k per message)
 *   chain bound   (1,000 ms ÷ (chain calls × call ms)) ÷ (appends on k per message)
 *
 * and, for keys the messages choose (FIFO shards: the shard key says where), the topic's ceiling is
 * the smallest bound over those keys: the busiest key saturates first and the others cannot take its
 * share. (A FIFO topic's notice streams are chosen by the senders, as partitions: {@link fifoCeiling}.)
 * The first two are DynamoDB's
 * per-partition limits; the third is the append protocol's own: appends to one stream are a chain
 * in which each winner makes its calls one after the other (a head read, unless a head hint spared
 * it, then the put), so one key takes at most one append per `chain calls × call ms`. Lost races
 * enter the first two bounds through the units the losers consume, and the third through the
 * head reads they force.
 *
 * A sequenced FIFO shard (`S#<namespace>/q:<key>`, docs/design.md "A sequencer for hot FIFO
 * shards") has no append chain: a writer takes its numbers with one atomic update of the counter on
 * the stream's sentinel (`sk = '#'`, it cannot lose a race) and puts its segment at them, so no
 * winner waits for another's read-then-put. Its bound is the per-partition limits alone: write units
 * on `S#<stream>` with the counter updates (grants) counted there — they share the partition key —
 * and read units. Its lost races are segment puts that met a filler (a hole filled under a slow
 * writer): ≈ 0.
 *
 * A standard topic's sends choose their partition (sticky, least-contended appends,
 * lib/services/partition-picker.ts): a send that lost a race on a busy partition moves to another
 * one, so the shares are not fixed, and the topic saturates only when every partition its senders
 * use does. Its ceiling ({@link spreadCeiling}) is the SUM over the keys the row used of what each
 * key takes alone — its smallest bound at its measured costs per append (units, head reads, lost
 * races included) — times the row's messages per append. Partitions the row did not write count
 * nothing: the figure is what that many producers' spread reaches, not the topic's partition count.
 */

/** DynamoDB's write limit per partition (AWS developer guide, "warm throughput scenarios"). */
export const PARTITION_WCU_PER_SECOND = 1000;
/** DynamoDB's read limit per partition (same page). */
export const PARTITION_RCU_PER_SECOND = 3000;

/** What one row measured on one stream partition key. */
export interface KeyLoad {
  key: string;
  /** Segments written (successful appends). */
  appends: number;
  /** Append attempts whose segment or sentinel condition failed: another writer took the sequence number. */
  lostRaces: number;
  /** Strongly consistent head reads (Query, descending, Limit 1). */
  headReads: number;
  /** Write units on the key by the size rules, failed conditional writes included (a sequenced key: its counter updates too). */
  wcu: number;
  /** Read units on the key. */
  rcu: number;
  /** A sequenced key's counter updates (grants), one per segment write (their units are in `wcu`). */
  grants?: number;
  /** A sequenced key's filler puts that landed (their units are in `wcu`; not appends). */
  fillers?: number;
}

/** A sequenced FIFO topic's shard stream key (`S#<namespace>/q:<key>`): numbered by a counter, no append chain. */
export const isSequencedKey = (key: string): boolean => /^S#[^/]+\/q:/.test(key);

export type Bound = 'write units' | 'read units' | 'append chain' | 'write units on a sequenced shard' | 'read units on a sequenced shard';

/** The name of a key's bound in a ceiling: on a sequenced key, the units say so (it has no chain). */
const boundOf = (key: string, bound: Bound): Bound =>
  !isSequencedKey(key) ? bound : bound === 'write units' ? 'write units on a sequenced shard' : bound === 'read units' ? 'read units on a sequenced shard' : bound;

export interface Ceiling {
  msgPerSecond: number;
  limitedBy: Bound;
  /** The key whose bound is the smallest. */
  key: string;
}

/**
 * The three bounds of one key, in messages per second of the whole topic. A sequenced key's
 * `append chain` is Infinity: its appends are not a chain (the counter grants at once).
 */
export function keyBounds(load: KeyLoad, messages: number, callMs: number): Record<'write units' | 'read units' | 'append chain', number> {
  if (messages <= 0) throw new Error('keyBounds needs the number of messages the row sent');
  if (!(callMs > 0)) throw new Error('keyBounds needs a positive call time');
  const attempts = load.appends + load.lostRaces;
  const perMessage = (n: number) => n / messages;
  const bound = (limit: number, used: number) => (used > 0 ? limit / used : Number.POSITIVE_INFINITY);
  // The winner's own calls in sequence: the put, and the head read when it made one.
  const chainCalls = 1 + (attempts > 0 ? Math.min(1, load.headReads / attempts) : 1);
  return {
    'write units': bound(PARTITION_WCU_PER_SECOND, perMessage(load.wcu)),
    'read units': bound(PARTITION_RCU_PER_SECOND, perMessage(load.rcu)),
    'append chain': isSequencedKey(load.key) ? Number.POSITIVE_INFINITY : bound(1000 / (chainCalls * callMs), perMessage(load.appends)),
  };
}

/** The smallest bound over every key; undefined when nothing was sent or no key was written. */
export function awsCeiling(keys: KeyLoad[], messages: number, callMs: number): Ceiling | undefined {
  if (messages <= 0) return undefined;
  let best: Ceiling | undefined;
  for (const load of keys) {
    for (const [limitedBy, msgPerSecond] of Object.entries(keyBounds(load, messages, callMs)) as Array<[Bound, number]>) {
      if (Number.isFinite(msgPerSecond) && (best === undefined || msgPerSecond < best.msgPerSecond)) best = { msgPerSecond, limitedBy: boundOf(load.key, limitedBy), key: load.key };
    }
  }
  return best;
}

/**
 * The ceiling of a topic whose senders choose among its streams (standard partitions): the sum over
 * the keys that took appends of each key's own capacity, in messages per second of the topic. A
 * key's capacity is its smallest bound at the share it carried, scaled to the share it would carry
 * alone (`appends on k ÷ appends`), i.e. its appends per second at its limit times the messages per
 * append. `limitedBy` is the bound that limits the most keys; `key` says how many keys were summed.
 */
export function spreadCeiling(keys: KeyLoad[], messages: number, callMs: number): (Ceiling & { keys: number }) | undefined {
  if (messages <= 0) return undefined;
  const used = keys.filter((k) => k.appends > 0);
  const appends = used.reduce((n, k) => n + k.appends, 0);
  if (appends === 0) return undefined;
  let msgPerSecond = 0;
  const limiting = new Map<Bound, number>();
  for (const load of used) {
    const [limitedBy, bound] = (Object.entries(keyBounds(load, messages, callMs)) as Array<[Bound, number]>).reduce((a, b) => (b[1] < a[1] ? b : a));
    msgPerSecond += bound * (load.appends / appends);
    limiting.set(boundOf(load.key, limitedBy), (limiting.get(boundOf(load.key, limitedBy)) ?? 0) + 1);
  }
  const limitedBy = [...limiting].reduce((a, b) => (b[1] > a[1] ? b : a))[0];
  return { msgPerSecond, limitedBy, key: `${used.length} keys summed`, keys: used.length };
}

/** A FIFO namespace's notice stream key (`S#<namespace>/n:<b>`; a namespace holds no `/`), not a shard's (`S#<namespace>/k:<key>`, anything after `/k:`). */
export const isNoticeKey = (key: string): boolean => /^S#[^/]+\/n:(0|[1-9][0-9]*)$/.test(key);

/**
 * The ceiling of a FIFO topic: its shard keys are chosen by the messages (the hottest one's bound,
 * {@link awsCeiling}), its notice streams by the senders — a send's notices go to the notice stream
 * its container picked, sticky and moved after a lost race, as a standard topic's partitions — so
 * they add up as partitions do ({@link spreadCeiling}). The smaller of the two; `keys`: the notice
 * streams summed.
 */
export function fifoCeiling(keys: KeyLoad[], messages: number, callMs: number): (Ceiling & { keys: number }) | undefined {
  const shards = awsCeiling(keys.filter((k) => !isNoticeKey(k.key)), messages, callMs);
  const notices = spreadCeiling(keys.filter((k) => isNoticeKey(k.key)), messages, callMs);
  if (!notices) return shards && { ...shards, keys: 0 };
  if (!shards || notices.msgPerSecond < shards.msgPerSecond) return { ...notices, key: `${notices.keys} notice streams summed` };
  return { ...shards, keys: notices.keys };
}

/**
 * Lost races per successful append, over all keys of a row (0 when nothing was appended): failed
 * conditional segment (and sentinel) puts; on a sequenced key only segment puts that met a filler.
 */
export function lostRacesPerAppend(keys: KeyLoad[]): number {
  const appends = keys.reduce((n, k) => n + k.appends, 0);
  return appends > 0 ? keys.reduce((n, k) => n + k.lostRaces, 0) / appends : 0;
}

/*
 * ── The receive side (issue 19 item 3: consumers 1 → 64) ──
 *
 * A receive row counts, per capacity unit (key-units.ts), everything its receives and commits asked
 * of DynamoDB: write units (failed conditional writes included), read units, reads, and the claims
 * written on a cursor item and the ones that lost (ConditionalCheckFailed). What counts as one
 * partition (one set of per-partition limits):
 *
 * - a table partition key written at the end of an ordered key range (stream segments `S#…`) or
 *   read as one (`A#<topic>`): the whole key, as for appends;
 * - a GSI partition key (`gsi1 R#<group>`, the FIFO ready index): the whole key — its sort keys are
 *   lease expiry times and per-shard hashes rewritten as readiness changes;
 * - a cursor item (`C#<group> @ <stream>`), updated in place: the item. Adaptive capacity "isolates
 *   frequently accessed items" on partitions of their own
 *   (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/burst-adaptive-capacity.html);
 *   it takes minutes to do so, and a table with a local secondary index cannot split an item
 *   collection (the Sluice table has none: cdk/sluice-table.ts declares only the GSI).
 *
 * Per unit u and per message received (M messages in the row):
 *
 *   write bound   1,000 WCU/s ÷ (write units on u ÷ M)
 *   read bound    3,000 RCU/s ÷ (read units on u ÷ M)
 *   claim chain   (1,000 ms ÷ (chain calls × call ms)) ÷ (claims on u ÷ M)      cursor items with claims
 *   chain calls   1 + min(1, reads of u ÷ claim attempts on u)
 *
 * The claim chain is the receive protocol's own limit: a claim is conditional on the cursor state
 * it planned from (`nx`, and on FIFO shards `kn`, `size(fl)`, the index key), so the successful
 * claims of one cursor are a chain — each plans from what the previous one left (its read, unless
 * a cached cursor spared it) and then writes. Lost claims enter the write bound through the units
 * the losers are billed and the chain through the reads they force (a loser plans again from the
 * cursor its failed write returned and reads only when that is gone: learned cursors). Commits
 * of the same cursor are not in the chain (they do not read first) but make claims in flight lose,
 * which the lost claims measure. The ceiling is the smallest bound over every unit: consumers cannot
 * move a backlog off the key its producers put it on.
 */

export type ReceiveBound = 'write units' | 'read units' | 'claim chain';
export type ReceiveUnitKind = 'item' | 'index key' | 'table key';

/** What one receive row measured on one capacity unit. */
export interface UnitLoad {
  unit: string;
  kind: ReceiveUnitKind;
  wcu: number;
  rcu: number;
  /** Reads of the unit (any consistency). */
  reads: number;
  claims: number;
  lostClaims: number;
}

/** The bounds of one unit, in messages per second of the whole topic (Infinity: the unit does not limit). */
export function unitBounds(load: UnitLoad, messages: number, callMs: number): Record<ReceiveBound, number> & { chainCalls: number } {
  if (messages <= 0) throw new Error('unitBounds needs the number of messages the row received');
  if (!(callMs > 0)) throw new Error('unitBounds needs a positive call time');
  const perMessage = (n: number) => n / messages;
  const bound = (limit: number, used: number) => (used > 0 ? limit / used : Number.POSITIVE_INFINITY);
  const attempts = load.claims + load.lostClaims;
  const chainCalls = 1 + (attempts > 0 ? Math.min(1, load.reads / attempts) : 1);
  return {
    'write units': bound(PARTITION_WCU_PER_SECOND, perMessage(load.wcu)),
    'read units': bound(PARTITION_RCU_PER_SECOND, perMessage(load.rcu)),
    'claim chain': load.kind === 'item' ? bound(1000 / (chainCalls * callMs), perMessage(load.claims)) : Number.POSITIVE_INFINITY,
    chainCalls,
  };
}

export interface ReceiveCeiling {
  msgPerSecond: number;
  limitedBy: ReceiveBound;
  unit: string;
  kind: ReceiveUnitKind;
}

/** The smallest bound over every unit; undefined when nothing was received or no unit limits. */
export function receiveCeiling(loads: UnitLoad[], messages: number, callMs: number): ReceiveCeiling | undefined {
  if (messages <= 0) return undefined;
  let best: ReceiveCeiling | undefined;
  for (const load of loads) {
    const b = unitBounds(load, messages, callMs);
    for (const limitedBy of ['write units', 'read units', 'claim chain'] as const) {
      const msgPerSecond = b[limitedBy];
      if (Number.isFinite(msgPerSecond) && (best === undefined || msgPerSecond < best.msgPerSecond)) best = { msgPerSecond, limitedBy, unit: load.unit, kind: load.kind };
    }
  }
  return best;
}

/** A unit's smallest bound and which one. */
const smallestBound = (load: UnitLoad, messages: number, callMs: number): [ReceiveBound, number] => {
  const b = unitBounds(load, messages, callMs);
  return (['write units', 'read units', 'claim chain'] as const).map((k) => [k, b[k]] as [ReceiveBound, number]).reduce((a, x) => (x[1] < a[1] ? x : a));
};

/**
 * Streams summed as partitions are: each stream's smallest bound over its own units (`streamOf`
 * names a unit's stream) at the share of the row it carried (`weightOf`, over the streams' units),
 * times that share — what the stream takes alone —, added up over the streams with a share.
 * `limitedBy`: the bound that limits the most streams. Undefined when no stream has a share;
 * `streams` 0 when none of them has a finite bound.
 */
function streamsSummed(
  loads: UnitLoad[],
  messages: number,
  callMs: number,
  streamOf: (unit: string) => string | undefined,
  weightOf: (load: UnitLoad) => number,
): { msgPerSecond: number; limitedBy: ReceiveBound; kind: ReceiveUnitKind; streams: number } | undefined {
  const weights = new Map<string, number>();
  for (const l of loads) {
    const s = streamOf(l.unit);
    if (s !== undefined) weights.set(s, (weights.get(s) ?? 0) + weightOf(l));
  }
  const total = [...weights.values()].reduce((n, w) => n + w, 0);
  if (total === 0) return undefined;
  const smallest = new Map<string, { bound: number; limitedBy: ReceiveBound; kind: ReceiveUnitKind }>();
  for (const l of loads) {
    const s = streamOf(l.unit);
    if (s === undefined || (weights.get(s) ?? 0) === 0) continue;
    const [limitedBy, bound] = smallestBound(l, messages, callMs);
    if (!Number.isFinite(bound)) continue;
    const was = smallest.get(s);
    if (was === undefined || bound < was.bound) smallest.set(s, { bound, limitedBy, kind: l.kind });
  }
  let msgPerSecond = 0;
  const bounds = new Map<ReceiveBound, number>();
  const kinds = new Map<ReceiveUnitKind, number>();
  for (const [s, { bound, limitedBy, kind }] of smallest) {
    msgPerSecond += bound * ((weights.get(s) ?? 0) / total);
    bounds.set(limitedBy, (bounds.get(limitedBy) ?? 0) + 1);
    kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
  }
  const most = <T>(counts: Map<T, number>, none: T): T => (counts.size > 0 ? [...counts].reduce((x, y) => (y[1] > x[1] ? y : x))[0] : none);
  return { msgPerSecond, limitedBy: most(bounds, 'write units'), kind: most(kinds, 'item'), streams: smallest.size };
}

/**
 * The ceiling of a topic whose consumers choose the partition they claim from (standard topics: the
 * partition sampler; a partition that is busy or lost a claim is passed for another). As for sends
 * ({@link spreadCeiling}), the shares are not fixed: the topic saturates only when every partition
 * the consumers used does. Units that belong to one partition (`partitionOf` names it: its cursor
 * item, its `S#` key) are summed per partition — each partition's smallest bound at the share of
 * the claims it took, scaled to what it takes alone (× its share) — over the partitions that took
 * claims; units shared by all partitions (the topic's activity item, …) keep their own bound.
 * The ceiling is the smaller of the two.
 */
export function spreadReceiveCeiling(loads: UnitLoad[], messages: number, callMs: number, partitionOf: (unit: string) => string | undefined): (ReceiveCeiling & { partitions: number }) | undefined {
  if (messages <= 0) return undefined;
  const summed = streamsSummed(loads, messages, callMs, partitionOf, (l) => l.claims);
  if (summed === undefined) return undefined;
  const shared = receiveCeiling(
    loads.filter((l) => partitionOf(l.unit) === undefined),
    messages,
    callMs,
  );
  if (summed.streams === 0) return shared && { ...shared, partitions: 0 };
  const spread: ReceiveCeiling & { partitions: number } = {
    msgPerSecond: summed.msgPerSecond,
    limitedBy: summed.limitedBy,
    unit: `${summed.streams} partitions summed`,
    kind: 'item',
    partitions: summed.streams,
  };
  return shared !== undefined && shared.msgPerSecond < spread.msgPerSecond ? { ...shared, partitions: summed.streams } : spread;
}

/**
 * Where a unit of a FIFO topic over many shards stands in {@link fifoReceiveCeiling}: a ready-index
 * bucket key (`gsi1 R#<group>#<n>`), a unit of one notice stream (its `S#` key, its notice cursor
 * item), a unit of one shard stream (its cursor item, its `S#` key), or a unit every stream shares
 * (the group's home key `gsi1 R#<group>`, the topic's activity item, …).
 */
export type FifoUnitPlace = { kind: 'bucket' } | { kind: 'notice stream'; stream: string } | { kind: 'shard' } | { kind: 'shared' };

/**
 * The ceiling of a FIFO topic whose messages spread over many shard keys (the workload:
 * 10^6 mostly idle shards), on the receive side. The smallest of:
 *
 * 1. the ready-index buckets summed: a shard's bucket is a hash of its stream (fnv1a % buckets), so
 *    over many shards each bucket takes an even share of the index writes and the receives pick
 *    the buckets they read at random. Their units are added up and the per-key limits multiplied
 *    by the buckets the row touched: B × 1,000 WCU/s ÷ (Σ WCU ÷ M), B × 3,000 RCU/s ÷ (Σ RCU ÷ M).
 *    The hottest bucket of a row of a few hundred messages carries 1.5–2× the mean by sampling
 *    alone, which the hottest-unit model would read as the topic's limit;
 * 2. the notice streams summed as partitions are ({@link spreadReceiveCeiling}): senders pick the
 *    notice stream (sticky, moved after a lost race), so a stream's share follows the senders. A
 *    notice stream takes no claims: its share is that of the notice streams' units (WCU + RCU) it
 *    carried;
 * 3. every shared unit at its own bound ({@link receiveCeiling}).
 *
 * Units of one shard stream are left out: with 10^6 shard keys none carries a measurable share of
 * the topic, while the hottest of the row's sample (1,000 keys, a few hundred messages) carries
 * what chance gave it. One hot shard is the `fifo-hot` rows' case (hottest-unit model).
 * `buckets` and `noticeStreams`: how many were summed.
 */
export function fifoReceiveCeiling(
  loads: UnitLoad[],
  messages: number,
  callMs: number,
  placeOf: (unit: string) => FifoUnitPlace,
): (ReceiveCeiling & { buckets: number; noticeStreams: number }) | undefined {
  if (messages <= 0) return undefined;
  const candidates: ReceiveCeiling[] = [];
  const buckets = loads.filter((l) => placeOf(l.unit).kind === 'bucket' && l.wcu + l.rcu > 0);
  if (buckets.length > 0) {
    const sum = (pick: (l: UnitLoad) => number) => buckets.reduce((n, l) => n + pick(l), 0);
    const unit = `${buckets.length} ready-index buckets summed`;
    const all: UnitLoad = { unit, kind: 'index key', wcu: sum((l) => l.wcu), rcu: sum((l) => l.rcu), reads: sum((l) => l.reads), claims: 0, lostClaims: 0 };
    const [limitedBy, bound] = smallestBound(all, messages, callMs);
    candidates.push({ msgPerSecond: buckets.length * bound, limitedBy, unit, kind: 'index key' });
  }
  const noticeOf = (unit: string) => {
    const place = placeOf(unit);
    return place.kind === 'notice stream' ? place.stream : undefined;
  };
  const notices = streamsSummed(loads, messages, callMs, noticeOf, (l) => l.wcu + l.rcu);
  if (notices !== undefined && notices.streams > 0) {
    candidates.push({ msgPerSecond: notices.msgPerSecond, limitedBy: notices.limitedBy, unit: `${notices.streams} notice streams summed`, kind: notices.kind });
  }
  const shared = receiveCeiling(
    loads.filter((l) => placeOf(l.unit).kind === 'shared'),
    messages,
    callMs,
  );
  if (shared !== undefined) candidates.push(shared);
  if (candidates.length === 0) return undefined;
  const least = candidates.reduce((a, b) => (b.msgPerSecond < a.msgPerSecond ? b : a));
  return { ...least, buckets: buckets.length, noticeStreams: notices?.streams ?? 0 };
}
