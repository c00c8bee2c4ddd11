/**
 * The receive rows of the scale phase (issue 19 item 3, the consumer side): 1 → 64 consumers drain
 * a prefilled backlog of one topic, per topic type and receive batch, with the AWS-like round trip
 * (round-trip.ts) on every DynamoDB call. Each consumer receives `maxMessages` (no wait) and commits
 * what it got, either in one `/commit` call per receive or carried by its next receive (what the
 * SDK Consumer does by default). Every capacity unit the row's receives and commits touched is
 * counted (meter.ts, key-units.ts) and the capacity model (capacity-model.ts, `receiveCeiling`)
 * gives the AWS ceiling. A row whose backlog came near empty is marked `ranDry`: its figures are
 * not those of consumers that always find work.
 */
import { messageBody } from './http.js';
import { isNoticeStream, isShardStream } from '../lib/domain/streams.js';
import { fifoReceiveCeiling, receiveCeiling, spreadReceiveCeiling, unitBounds, type FifoUnitPlace, type ReceiveBound, type ReceiveUnitKind, type UnitLoad } from './capacity-model.js';
import { ITEM_SEPARATOR, unitKind } from './key-units.js';
import type { Snapshot } from './meter.js';
import type { RoundTrip } from './round-trip.js';
import { sleep } from './stats.js';
import { dynamoTotals, measured, type Ctx } from './workloads.js';

/**
 * standard-p64 / -p256: 64 / 256 partitions (the p256 rows add the profile's `wideConsumers`, as the
 * producer rows add `wideProducers`: one unbatched consumer claims from one partition at a time, so
 * only as many consumers as partitions show what the partitions take); fifo-many-p256: shard keys
 * drawn from many, 256 notice streams; fifo-hot: one shard key.
 */
export type ReceiveTopic = 'standard-p64' | 'standard-p256' | 'fifo-many-p256' | 'fifo-hot';
export const RECEIVE_TOPICS: ReceiveTopic[] = ['standard-p64', 'standard-p256', 'fifo-many-p256', 'fifo-hot'];
export type CommitWay = 'call' | 'carried';

export interface ReceiveProfile {
  consumers: number[];
  /** More consumers, for the rows of standard-p256 (up to its partitions). */
  wideConsumers: number[];
  batches: number[];
  /** Ways of committing per batch: `call` (one /commit per receive) always; `carried` for the batches listed. */
  carriedBatches: number[];
  seconds: number;
  /** Shard keys of the fifo-many-p256 backlog. */
  shardKeys: number;
  /** Most messages a row's backlog is filled to (a bound on the prefill's time). */
  maxBacklog: number;
}

export interface UnitFigure {
  unit: string;
  kind: ReceiveUnitKind;
  wcuPerMessage: number;
  rcuPerMessage: number;
  claimsPerMessage: number;
  lostClaims: number;
  chainCalls: number;
  /** This unit's smallest bound (msg/s) and which. */
  bound: number;
  limitedBy: ReceiveBound;
}

export interface ReceiveRow {
  id: string;
  topic: ReceiveTopic;
  batch: number;
  consumers: number;
  commits: CommitWay;
  /** Lost claim races (ConditionalCheckFailed on a receive's cursor claim) per message received, and per successful claim. */
  lostClaimsPerMessage: number;
  lostClaimsPerClaim: number;
  /** DynamoDB calls of the row's receives and commits per message received. */
  requestsPerMessage: number;
  /** Write and read units per message received, over every unit. */
  wcuPerMessage: number;
  rcuPerMessage: number;
  /**
   * The capacity model's ceiling on AWS (msg/s). fifo-hot (one shard key): the smallest bound over
   * every unit the row touched (*hottest unit*). fifo-many (many shard keys): the ready-index
   * buckets summed, the notice streams summed, or a shared unit's bound, the smallest of the three,
   * shard streams' own units left out (*buckets and notice streams summed*, capacity-model.ts
   * `fifoReceiveCeiling`). Standard (consumers choose the partition): the sum over the partitions
   * that took claims of what each takes alone, or a shared unit's bound when smaller (*sum over
   * partitions used*).
   */
  awsCeilingMsgPerSecond: number;
  model: 'hottest unit' | 'sum over partitions used' | 'buckets and notice streams summed';
  /** The hottest unit's bound at its measured share (the FIFO model), for comparison on standard rows. */
  /** The smallest bound over the units shared by every stream of the row (see {@link isStreamUnit}), and which one; 0 / '' when none bound. */
  sharedUnitsCeilingMsgPerSecond: number;
  sharedUnit: string;
  hottestUnitCeilingMsgPerSecond: number;
  limitedBy: ReceiveBound | 'nothing measured';
  hottestKey: string;
  hottestKeyKind: ReceiveUnitKind | '';
  /** The units with the smallest bounds (up to 5). */
  topUnits: UnitFigure[];
  unitsTouched: number;
  seconds: number;
  /** Messages received (committed: `committed`), and per second here (DynamoDB Local + the injected round trip; not an AWS figure). */
  messages: number;
  committed: number;
  localMsgPerSecond: number;
  receives: number;
  /** Receives that answered no message (FIFO: a shard at its 100 leases in flight, or nothing claimable where the receive looked). */
  emptyReceives: number;
  /** Messages waiting when the row started; `ranDry`: the backlog came within one round of receives of empty (the row is not valid). */
  backlogBefore: number;
  ranDry: boolean;
  claims: number;
  lostClaims: number;
  /** FIFO shard raises written on their own (a notice's shard not claimed by the receive that read it): the discovery of a backlog's shards. */
  raises: number;
  /** Raises per message received (0 without messages): many on a backlog's discovery, at most about 1 on a steady topic (the rest absorbed into claims). */
  raisesPerMessage: number;
  errors: Record<string, number>;
  msPerCall: number;
}

const partitionsOf = (topic: ReceiveTopic) => (topic === 'standard-p64' ? 64 : topic === 'standard-p256' || isManyShards(topic) ? 256 : 4);
/** Consumer counts of a topic's rows: the profile's, and for standard-p256 its wide ones too. */
export const consumersOf = (topic: ReceiveTopic, profile: Pick<ReceiveProfile, 'consumers' | 'wideConsumers'>): number[] =>
  [...profile.consumers, ...(topic === 'standard-p256' ? profile.wideConsumers.filter((n) => n <= partitionsOf(topic) && !profile.consumers.includes(n)) : [])].sort((a, b) => a - b);
const isStandard = (topic: ReceiveTopic) => topic.startsWith('standard');
/** A FIFO topic whose messages spread over many shard keys (its ceiling: {@link fifoUnitPlace}, capacity-model.ts `fifoReceiveCeiling`). */
function isManyShards(topic: ReceiveTopic): boolean {
  return topic === 'fifo-many-p256';
}

/** The stream a unit names: a cursor item's (`C#<group> @ <stream>`) or an `S#<stream>` key's; undefined for any other unit. */
const streamOfUnit = (unit: string): string | undefined =>
  unit.includes(ITEM_SEPARATOR) ? unit.slice(unit.indexOf(ITEM_SEPARATOR) + ITEM_SEPARATOR.length) : unit.startsWith('S#') ? unit.slice(2) : undefined;

/** The partition stream a unit belongs to (its cursor item, its `S#` key), for standard topics' spread model; undefined for shared units. */
export function partitionOfUnit(unit: string): string | undefined {
  const stream = streamOfUnit(unit);
  return stream !== undefined && /\/p:\d+$/.test(stream) ? stream : undefined;
}

/**
 * Whether a unit belongs to one stream of messages — a partition's or a FIFO shard's cursor item or
 * `S#` key — rather than being shared by all of them (notice cursors and streams, ready-index keys,
 * the topic's activity item). The shared units' bound is reported apart: on FIFO rows over many
 * shards the hottest shard's share in a row of a few hundred messages is the sample's, not the
 * workload's (10^6 mostly idle shard keys), while the shared units carry every message.
 */
export function isStreamUnit(unit: string): boolean {
  const stream = streamOfUnit(unit);
  return stream !== undefined && (/\/p:\d+$/.test(stream) || isShardStream(stream));
}

/** A ready-index bucket key of a wide FIFO topic's group (`gsi1 R#<group>#<n>`; group names hold no `#`). */
const BUCKET_UNIT = /^gsi1 R#[^#]+#\d+$/;

/**
 * Where a unit of a FIFO topic over many shards stands in its ceiling (capacity-model.ts
 * `fifoReceiveCeiling`): a ready-index bucket; a notice stream's `S#` key or notice cursor item
 * (`<namespace>/n:<b>`), by stream; a shard stream's own unit ({@link isStreamUnit}); or shared
 * (the group's home key `gsi1 R#<group>`, the topic's activity item, a Query of the group's cursors).
 */
export function fifoUnitPlace(unit: string): FifoUnitPlace {
  if (BUCKET_UNIT.test(unit)) return { kind: 'bucket' };
  const stream = streamOfUnit(unit);
  if (stream !== undefined && isNoticeStream(stream)) return { kind: 'notice stream', stream };
  return isStreamUnit(unit) ? { kind: 'shard' } : { kind: 'shared' };
}

/** The capacity units a row's tag touched, as the model's input. */
export function unitLoads(counted: Snapshot, tag: string): UnitLoad[] {
  return Object.entries(counted.keys ?? {})
    .filter(([k]) => k.startsWith(`${tag}|`))
    .map(([k, c]) => {
      const unit = k.slice(tag.length + 1);
      return { unit, kind: unitKind(unit), wcu: c.wcu, rcu: c.rcu, reads: c.reads, claims: c.claims, lostClaims: c.lostClaims };
    });
}

/** One row's figures from its window. */
export function receiveRow(
  base: Pick<ReceiveRow, 'id' | 'topic' | 'batch' | 'consumers' | 'commits'>,
  counted: Snapshot,
  tag: string,
  seconds: number,
  run: { messages: number; committed: number; receives: number; emptyReceives: number; backlogBefore: number; ranDry: boolean; errors: Record<string, number> },
  awsCallMs: number,
): ReceiveRow {
  const loads = unitLoads(counted, tag);
  const m = run.messages;
  const d = dynamoTotals(counted, (t) => t === tag);
  const ms = Object.entries(counted.dynamo)
    .filter(([k]) => k.startsWith(`${tag}|`))
    .reduce((n, [, c]) => n + c.ms, 0);
  const hottest = receiveCeiling(loads, m, awsCallMs);
  const spread = isStandard(base.topic) ? spreadReceiveCeiling(loads, m, awsCallMs, partitionOfUnit) : undefined;
  // Over many shard keys the shards' own units are left out (10^6 mostly idle keys in the issue's
  // workload; one hot shard is the fifo-hot rows'), and the buckets and notice streams summed.
  const summed = isManyShards(base.topic) ? fifoReceiveCeiling(loads, m, awsCallMs, fifoUnitPlace) : undefined;
  const ceiling = spread ?? summed ?? hottest;
  const shared = receiveCeiling(loads.filter((l) => !isStreamUnit(l.unit)), m, awsCallMs);
  const claims = loads.reduce((n, l) => n + l.claims, 0);
  const lostClaims = loads.reduce((n, l) => n + l.lostClaims, 0);
  const raises = Object.entries(counted.keys ?? {})
    .filter(([k]) => k.startsWith(`${tag}|`))
    .reduce((n, [, c]) => n + c.raises, 0);
  const figures: UnitFigure[] =
    m > 0
      ? loads.map((l) => {
          const b = unitBounds(l, m, awsCallMs);
          const [limitedBy, bound] = (['write units', 'read units', 'claim chain'] as const).map((k) => [k, b[k]] as const).reduce((a, x) => (x[1] < a[1] ? x : a));
          return { unit: l.unit, kind: l.kind, wcuPerMessage: l.wcu / m, rcuPerMessage: l.rcu / m, claimsPerMessage: l.claims / m, lostClaims: l.lostClaims, chainCalls: b.chainCalls, bound, limitedBy };
        })
      : [];
  return {
    ...base,
    lostClaimsPerMessage: m > 0 ? lostClaims / m : 0,
    lostClaimsPerClaim: claims > 0 ? lostClaims / claims : 0,
    requestsPerMessage: m > 0 ? d.requests / m : 0,
    wcuPerMessage: m > 0 ? loads.reduce((n, l) => n + l.wcu, 0) / m : 0,
    rcuPerMessage: m > 0 ? loads.reduce((n, l) => n + l.rcu, 0) / m : 0,
    awsCeilingMsgPerSecond: ceiling?.msgPerSecond ?? 0,
    model: spread ? 'sum over partitions used' : summed ? 'buckets and notice streams summed' : 'hottest unit',
    hottestUnitCeilingMsgPerSecond: hottest?.msgPerSecond ?? 0,
    sharedUnitsCeilingMsgPerSecond: shared?.msgPerSecond ?? 0,
    sharedUnit: shared ? `${shared.limitedBy} on ${shared.unit}` : '',
    limitedBy: ceiling?.limitedBy ?? 'nothing measured',
    hottestKey: ceiling?.unit ?? '',
    hottestKeyKind: ceiling?.kind ?? '',
    topUnits: figures
      .filter((f) => Number.isFinite(f.bound))
      .sort((a, b) => a.bound - b.bound)
      .slice(0, 5),
    unitsTouched: loads.length,
    seconds,
    messages: m,
    committed: run.committed,
    localMsgPerSecond: seconds > 0 ? m / seconds : 0,
    receives: run.receives,
    emptyReceives: run.emptyReceives,
    backlogBefore: run.backlogBefore,
    ranDry: run.ranDry,
    claims,
    lostClaims,
    raises,
    raisesPerMessage: m > 0 ? raises / m : 0,
    errors: run.errors,
    msPerCall: d.requests > 0 ? ms / d.requests : 0,
  };
}

const HOT_SHARD = 'hot';

interface Received {
  messages: Array<{ receiptHandle: string }>;
  commitResults?: Array<{ status?: string; error?: unknown }>;
}

/**
 * Sends `count` messages in sends of `batch` (the row's receive batch: a segment holds what one send
 * put on one stream, and a receive reads whole segments, so the backlog's segments are those of
 * producers sending as the consumers receive), 16 requests at a time (fifo-hot: 2), round trip off.
 */
async function prefill(ctx: Ctx, name: string, topic: ReceiveTopic, count: number, shardKeys: number, batch: number): Promise<number> {
  let sent = 0;
  let next = 0;
  const entry = () => (isStandard(topic) ? { body: messageBody(ctx.bodyBytes) } : { body: messageBody(ctx.bodyBytes), shardKey: topic === 'fifo-hot' ? HOT_SHARD : `k${Math.floor(Math.random() * shardKeys)}` });
  await Promise.all(
    // One hot shard's appends are one chain: more senders only lose races.
    Array.from({ length: topic === 'fifo-hot' ? 2 : 16 }, async () => {
      for (let failures = 0; next < count && failures < 20; ) {
        const n = Math.min(batch, count - next);
        next += n;
        const reply = await ctx.api
          .request<{ results: Array<{ error?: unknown }> }>('POST', `/v1/topics/${name}/messages/batch`, { entries: Array.from({ length: n }, entry) }, 'rx-prefill')
          .catch(() => undefined);
        const ok = reply !== undefined && reply.status < 300 ? reply.body.results.filter((r) => r.error === undefined).length : 0;
        sent += ok;
        if (ok < n) {
          // What did not land is sent again (a 429 on a contended shard, a slow DynamoDB Local).
          failures++;
          next -= n - ok;
          await sleep(20);
        }
      }
    }),
  );
  return sent;
}

/**
 * Consumers receive back to back until the deadline, or until the backlog is within one round of
 * every consumer's batch of empty (then `ranDry`). `call`: each receive's messages are committed by
 * one `/commit`; `carried`: by the consumer's next receive (`commit`), the last ones by a `/commit`.
 */
async function runConsumers(ctx: Ctx, group: string, batch: number, consumers: number, seconds: number, commits: CommitWay, backlog: number, tag: string) {
  let messages = 0;
  let committed = 0;
  let receives = 0;
  let emptyReceives = 0;
  let ranDry = false;
  const errors: Record<string, number> = {};
  const fail = (what: string) => (errors[what] = (errors[what] ?? 0) + 1);
  const countCommits = (results: Array<{ status?: string; error?: unknown }> | undefined) => {
    for (const r of results ?? []) {
      if (r.status === 'committed' || r.status === 'pending') committed++;
      else fail(`commit ${JSON.stringify(r.error).slice(0, 60)}`);
    }
  };
  const deadline = performance.now() + seconds * 1000;
  const commit = async (handles: string[]) => {
    if (handles.length === 0) return;
    const r = await ctx.api
      .request<{ results: Array<{ status?: string; error?: unknown }> }>('POST', `/v1/groups/${group}/commit`, { entries: handles.map((receiptHandle) => ({ receiptHandle })) }, tag)
      .catch(() => undefined);
    if (r === undefined || r.status >= 300) fail(`commit ${r?.status ?? 'failed'}`);
    else countCommits(r.body.results);
  };
  await Promise.all(
    Array.from({ length: consumers }, async () => {
      let carried: string[] = [];
      for (let i = 0; performance.now() < deadline && i < 100_000; i++) {
        if (backlog - messages < consumers * batch) {
          ranDry = true;
          break;
        }
        const body = { maxMessages: batch, waitSeconds: 0, visibilityTimeoutSeconds: 300, ...(carried.length > 0 ? { commit: carried } : {}) };
        const reply = await ctx.api.request<Received>('POST', `/v1/groups/${group}/receive`, body, tag).catch(() => undefined);
        receives++;
        if (reply === undefined || reply.status >= 300) {
          fail(`receive ${reply?.status ?? 'failed'}`);
          await sleep(20);
          continue;
        }
        if (carried.length > 0) countCommits(reply.body.commitResults);
        carried = [];
        const handles = reply.body.messages.map((m) => m.receiptHandle);
        messages += handles.length;
        if (handles.length === 0) {
          emptyReceives++;
          continue;
        }
        if (commits === 'carried') carried = handles;
        else await commit(handles);
      }
      await commit(carried);
    }),
  );
  return { messages, committed, receives, emptyReceives, ranDry, errors };
}

/**
 * Opens the group's shard cursors of a fifo-many topic before its rows, as the producer rows open
 * their streams: one message per shard key, then drained (round trip off) by receives of 100. A
 * group's first notice of a shard creates its cursor (a one-time transaction);
 * without this the first rows would count every shard's creation against the few messages they
 * receive. Drains until every message came back or 66 rounds past the minimum (two rotations of
 * the notice-stream sample). Returns the messages drained (they are not part of any row's backlog).
 */
async function openShardCursors(ctx: Ctx, name: string, group: string, shardKeys: number): Promise<number> {
  for (let i = 0; i < shardKeys; i += 100) {
    const entries = Array.from({ length: Math.min(100, shardKeys - i) }, (_, j) => ({ body: messageBody(ctx.bodyBytes), shardKey: `k${i + j}` }));
    await ctx.api.must('POST', `/v1/topics/${name}/messages/batch`, { entries }, 'rx-warmup');
  }
  let drained = 0;
  // A receive reads 8 of the 256 notice streams (design.md, which notice streams a receive reads): an
  // empty one does not mean the others are; a rotation takes at most 33 looks.
  for (let rounds = 0; drained < shardKeys && rounds < Math.ceil(shardKeys / 100) + 66; rounds++) {
    const got = await ctx.api.must<Received>('POST', `/v1/groups/${group}/receive`, { maxMessages: 100, waitSeconds: 0 }, 'rx-warmup');
    const handles = got.body.messages.map((m) => m.receiptHandle);
    if (handles.length === 0) continue;
    drained += handles.length;
    await ctx.api.must('POST', `/v1/groups/${group}/commit`, { entries: handles.map((receiptHandle) => ({ receiptHandle })) }, 'rx-warmup');
  }
  return drained;
}

/**
 * The backlog a row needs: 2 × its seconds at the rate expected (the last rate × consumer ratio, at
 * most 4×), plus two rounds of every consumer's batch (a row stops as ran dry one round before
 * empty), at least 500, at most `maxBacklog`.
 */
export function backlogTarget(expectedRate: number, seconds: number, consumers: number, batch: number, maxBacklog: number): number {
  return Math.min(maxBacklog, Math.max(500, Math.ceil(2 * seconds * expectedRate) + 2 * consumers * batch));
}

/**
 * Every (topic, batch, commit way, consumers) row, on one fresh topic and group per (topic, batch,
 * commit way). Before each row the backlog is topped up (round trip off); the round trip is on only
 * while the consumers run.
 */
export async function receiveRows(ctx: Ctx, roundTrip: RoundTrip, profile: ReceiveProfile, onRow: (row: ReceiveRow) => void, only: readonly ReceiveTopic[] = RECEIVE_TOPICS): Promise<ReceiveRow[]> {
  const rows: ReceiveRow[] = [];
  for (const topic of RECEIVE_TOPICS.filter((t) => only.includes(t))) {
    for (const batch of profile.batches) {
      for (const commits of ['call', 'carried'] as const) {
        if (commits === 'carried' && !profile.carriedBatches.includes(batch)) continue;
        const name = `scale-rx-${topic}-b${batch}-${commits}`;
        const group = `${name}-g`;
        await ctx.api.put(`/v1/topics/${name}`, { type: isStandard(topic) ? 'standard' : 'fifo', partitions: partitionsOf(topic) });
        await ctx.api.put(`/v1/groups/${group}`, { subscriptions: [{ topic: name }], ...(isStandard(topic) ? {} : { deliveryMode: 'concurrent' }), visibilityTimeoutSeconds: 300 });
        if (topic === 'fifo-many-p256') {
          const drained = await openShardCursors(ctx, name, group, profile.shardKeys).catch((error: unknown) => {
            ctx.log(`scale rx ${name}: opening shard cursors FAILED: ${error instanceof Error ? error.message : String(error)}`);
            return 0;
          });
          ctx.log(`scale rx ${name}: shard cursors opened (${drained} of ${profile.shardKeys} warm-up messages drained)`);
        }
        let waiting = 0;
        let lastRate: number | undefined;
        let lastConsumers = 1;
        for (const consumers of consumersOf(topic, profile)) {
          const id = `rx ${topic} ×${batch}${commits === 'carried' ? ' carried' : ''} c${consumers}`;
          const tag = `scale:${id}`;
          // A consumer does at most ~1 receive per 4 calls of 7.5 ms: the first row's guess; later rows scale the last rate.
          const expected = lastRate === undefined ? consumers * batch * 30 : lastRate * Math.min(4, consumers / lastConsumers);
          const target = backlogTarget(expected, profile.seconds, consumers, batch, profile.maxBacklog);
          try {
            if (waiting < target) waiting += await prefill(ctx, name, topic, target - waiting, profile.shardKeys, batch);
            const backlogBefore = waiting;
            roundTrip.enabled = true;
            const { result, window } = await measured(ctx, () => runConsumers(ctx, group, batch, consumers, profile.seconds, commits, backlogBefore, tag)).finally(() => {
              roundTrip.enabled = false;
            });
            // Messages received but not committed stay leased for 300 s: out of the backlog either way.
            waiting -= result.messages;
            const row = receiveRow({ id, topic, batch, consumers, commits }, window.counted, tag, window.seconds, { ...result, backlogBefore }, roundTrip.meanMs);
            lastRate = Math.max(lastRate ?? 0, row.localMsgPerSecond);
            lastConsumers = consumers;
            rows.push(row);
            onRow(row);
          } catch (error) {
            ctx.log(`scale ${id} FAILED: ${error instanceof Error ? error.message : String(error)}`);
          }
        }
      }
    }
  }
  return rows;
}
