/**
 * The receive rows of the scale phase (issue 19 item 3, the consumer side): 1 → 64 consumers drain
 * a prefilled backlog of one topic, per topic type and receive batch, with the AWS-like round trip
 * (round-trip.ts) on every DynamoDB call. Each consumer receives `maxMessages` (no wait) and commits
 * what it got, either in one `/commit` call per receive or carried by its next receive (what the
 * SDK Consumer does by default). Every capacity unit the row's receives and commits touched is
 * counted (meter.ts, key-units.ts) and the capacity model (capacity-model.ts, `receiveCeiling`)
 * gives the AWS ceiling. A row whose backlog came near empty is marked `ranDry`: its figures are
 * not those of consumers that always find work. The steady rows (fifo-many-p256-steady) have no
 * backlog: a paced producer sends while their consumers receive ({@link steadyRun}).
 */
import { messageBody, type Api } from './http.js';
import { isNoticeStream, isShardStream } from '../lib/domain/streams.js';
import { fifoReceiveCeiling, receiveCeiling, spreadReceiveCeiling, unitBounds, type FifoUnitPlace, type ReceiveBound, type ReceiveUnitKind, type UnitLoad } from './capacity-model.js';
import { ITEM_SEPARATOR, unitKind } from './key-units.js';
import { GROUP_PK, TOPIC_PK } from '../lib/adapters/dynamodb/keys.js';
import type { Snapshot } from './meter.js';
import type { RoundTrip } from './round-trip.js';
import { sleep } from './stats.js';
import { PRODUCER_CLIENTS, dynamoTotals, measured, warmClients, type Ctx } from './workloads.js';

/**
 * standard-p64 / -p256: 64 / 256 partitions (the p256 rows add the profile's `wideConsumers`, as the
 * producer rows add `wideProducers`: one unbatched consumer claims from one partition at a time, so
 * only as many consumers as partitions show what the partitions take); fifo-many-p256: shard keys
 * drawn from many, 256 notice streams; fifo-many-p256-steady: the same topic with no backlog, a
 * paced producer sending while the consumers receive (a topic whose consumers keep up; see
 * {@link runProducer}); fifo-hot: one shard key.
 */
export type ReceiveTopic = 'standard-p64' | 'standard-p256' | 'fifo-many-p256' | 'fifo-many-p256-steady' | 'fifo-hot';
export const RECEIVE_TOPICS: ReceiveTopic[] = ['standard-p64', 'standard-p256', 'fifo-many-p256', 'fifo-many-p256-steady', 'fifo-hot'];
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
  /**
   * Seconds of each fifo-many-p256-steady row, per receive batch (its commits: `call` only; a batch
   * not listed: `seconds`). Longer than `seconds`: a steady row receives only what its producer
   * sends, and its unbatched rows should count several hundred messages.
   */
  steadySeconds: Record<number, number>;
  /**
   * A backlog row counts at least this many messages: it runs on past `seconds` until its consumers
   * received them, for at most `maxSeconds` in all. A short row of a slow configuration (one
   * unbatched consumer of a 1,000-shard backlog: 30 messages in 4 s) measures mostly the start of a
   * drain — the receives that first discover the backlog's shards (6.7 raises a message) — and its
   * per-message figures are those of the start, not of a consumer draining the backlog.
   */
  minMessages: number;
  /**
   * … and at least this many batches' worth (`batch` × this): a batched row of one hot shard under 64
   * consumers counts one grant a batch, and 200 messages were 20 grants, whose failed grants and
   * cursor sizes moved the row's ceiling between 560 and 1,500 msg/s from run to run (2026-12-05).
   */
  minBatches: number;
  maxSeconds: number;
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
  /**
   * Read units a second on the catalog's items (topic, group) per consumer: what each container's
   * catalog cache reads, once per cache period, whatever the messages. Left out of the ceiling (a
   * rate per container, not per message): one item takes 3,000 RCU/s, so this many per consumer
   * allows 3,000 ÷ it consumers. Absent in older results.
   */
  catalogRcuPerConsumerSecond?: number;
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
  /** Range claims that took effect (docs/design.md, Range claims): no chain, their units counted; absent in older results. */
  grants?: number;
  /** FIFO shard raises written on their own (a notice's shard not claimed by the receive that read it): the discovery of a backlog's shards. */
  raises: number;
  /** Raises per message received (0 without messages): many on a backlog's discovery, at most about 1 on a steady topic (the rest absorbed into claims). */
  raisesPerMessage: number;
  /** Messages a steady row's producer sent while the row ran (under its own tag: not in the row's units); 0 on backlog rows. */
  sent: number;
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
  return topic === 'fifo-many-p256' || topic === 'fifo-many-p256-steady';
}
/** Rows fed by a paced producer while they run, not by a prefilled backlog. */
export const isSteady = (topic: ReceiveTopic): boolean => topic === 'fifo-many-p256-steady';

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

/**
 * A catalog item's unit (the `TOPIC` or `GROUP` partition key: every topic's or group's item): a
 * container reads it when its catalog cache (5 s) has no live copy, so its reads follow containers
 * and time, not messages (docs/performance.md, "A container per client").
 */
export const isCatalogUnit = (unit: string): boolean => unit === TOPIC_PK || unit === GROUP_PK;

/**
 * A group's ready-index horizon (`I#<group>`, ready-horizon.ts): written at most once a minute per
 * container and group and read by waiting receives of a quiet group only, so its units follow
 * containers and time, not messages (at 1,000 WCU/s, ≈ 60,000 containers of one group).
 */
export const isHorizonUnit = (unit: string): boolean => unit.startsWith('I#');

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
  run: { messages: number; committed: number; receives: number; emptyReceives: number; backlogBefore: number; ranDry: boolean; errors: Record<string, number>; sent?: number },
  awsCallMs: number,
): ReceiveRow {
  const all = unitLoads(counted, tag);
  // The model's units: per message. The catalog's items are read per container and cache period, a
  // group's horizon written per container and minute.
  const loads = all.filter((l) => !isCatalogUnit(l.unit) && !isHorizonUnit(l.unit));
  const catalogRcu = all.filter((l) => isCatalogUnit(l.unit)).reduce((n, l) => n + l.rcu, 0);
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
  const grants = Object.entries(counted.keys ?? {})
    .filter(([k]) => k.startsWith(`${tag}|`))
    .reduce((n, [, c]) => n + (c.grants ?? 0), 0);
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
    wcuPerMessage: m > 0 ? all.reduce((n, l) => n + l.wcu, 0) / m : 0,
    rcuPerMessage: m > 0 ? all.reduce((n, l) => n + l.rcu, 0) / m : 0,
    awsCeilingMsgPerSecond: ceiling?.msgPerSecond ?? 0,
    model: spread ? 'sum over partitions used' : summed ? 'buckets and notice streams summed' : 'hottest unit',
    hottestUnitCeilingMsgPerSecond: hottest?.msgPerSecond ?? 0,
    sharedUnitsCeilingMsgPerSecond: shared?.msgPerSecond ?? 0,
    sharedUnit: shared ? `${shared.limitedBy} on ${shared.unit}` : '',
    catalogRcuPerConsumerSecond: seconds > 0 && base.consumers > 0 ? catalogRcu / seconds / base.consumers : 0,
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
    grants,
    raises,
    raisesPerMessage: m > 0 ? raises / m : 0,
    sent: run.sent ?? 0,
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
 * What a steady row's producer and consumers share: messages sent and not yet received
 * (`waiting`, raised by what a send landed, lowered by what a receive got), the most the producer
 * keeps waiting (`window`), and `done` once the consumers stopped.
 */
export interface Flow {
  waiting: number;
  window: number;
  done: boolean;
}

/**
 * Where a row's consumers get their messages: a backlog prefilled before the row (they stop when it
 * is within one round of every consumer's batch of empty), or a steady row's producer (they stop
 * when nothing was received for `quietMs`: the producer stalled). Either stop marks the row `ranDry`.
 */
type Supply = { backlog: number; minMessages?: number; maxSeconds?: number } | { flow: Flow; quietMs: number };

/**
 * Consumers receive back to back until the deadline, or until their supply runs dry (then
 * `ranDry`). `call`: each receive's messages are committed by one `/commit`; `carried`: by the
 * consumer's next receive (`commit`), the last ones by a `/commit`.
 */
async function runConsumers(ctx: Ctx, group: string, batch: number, consumers: number, seconds: number, commits: CommitWay, supply: Supply, tag: string) {
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
  const start = performance.now();
  const deadline = start + seconds * 1000;
  // A backlog row with a floor on its messages runs on past its seconds until it has them (at most `maxSeconds`).
  const floor = 'backlog' in supply ? (supply.minMessages ?? 0) : 0;
  const hardDeadline = 'backlog' in supply && supply.maxSeconds !== undefined ? start + Math.max(seconds, supply.maxSeconds) * 1000 : deadline;
  const running = () => {
    const now = performance.now();
    return now < deadline || (messages < floor && now < hardDeadline);
  };
  let lastReceived = performance.now();
  const dry = () => ('backlog' in supply ? supply.backlog - messages < consumers * batch : performance.now() - lastReceived > supply.quietMs);
  // Receives in flight. A steady row's consumer starts one only while more messages wait than the
  // receives in flight ask for: this machine's producer is slower than its consumers, and a receive
  // sure to find nothing says nothing of a topic at its AWS ceiling (there, messages always wait).
  // Its empty receives are then those that missed waiting messages (notices not sampled, claims lost).
  let receiving = 0;
  const idle = () => 'flow' in supply && supply.flow.waiting <= receiving * batch;
  const commit = async (api: Api, handles: string[]) => {
    if (handles.length === 0) return;
    const r = await api
      .request<{ results: Array<{ status?: string; error?: unknown }> }>('POST', `/v1/groups/${group}/commit`, { entries: handles.map((receiptHandle) => ({ receiptHandle })) }, tag)
      .catch(() => undefined);
    if (r === undefined || r.status >= 300) fail(`commit ${r?.status ?? 'failed'}`);
    else countCommits(r.body.results);
  };
  await Promise.all(
    Array.from({ length: consumers }, async (_, c) => {
      const api = ctx.client(c);
      let carried: string[] = [];
      for (let i = 0; running() && i < 1_000_000; i++) {
        if (dry()) {
          ranDry = true;
          break;
        }
        if (idle()) {
          await sleep(3);
          continue;
        }
        const body = { maxMessages: batch, waitSeconds: 0, visibilityTimeoutSeconds: 300, ...(carried.length > 0 ? { commit: carried } : {}) };
        receiving++;
        const reply = await api
          .request<Received>('POST', `/v1/groups/${group}/receive`, body, tag)
          .catch(() => undefined)
          .finally(() => receiving--);
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
        lastReceived = performance.now();
        if ('flow' in supply) supply.flow.waiting -= handles.length;
        if (commits === 'carried') carried = handles;
        else await commit(api, handles);
      }
      await commit(api, carried);
    }),
  );
  return { messages, committed, receives, emptyReceives, ranDry, errors };
}

/** `count` distinct random shard keys of the warmed `k0` … `k<shardKeys − 1>`. */
function randomShardKeys(count: number, shardKeys: number): string[] {
  const keys = new Set<string>();
  while (keys.size < Math.min(count, shardKeys)) keys.add(`k${Math.floor(Math.random() * shardKeys)}`);
  return [...keys];
}

/**
 * Producer loops of a steady row: ⌈consumers ÷ 8⌉, at most 4. Few: one container's
 * concurrent sends spread their notices over as many notice streams (its picker passes a stream
 * with an append of its own in flight), and a receive of a 256-stream topic samples 8 of them,
 * leading with those that gave it messages; more loops than the consumers need scatter a trickle of
 * notices that receives then miss (a quick run with 2 loops for 1 consumer: 48 of 58 receives empty).
 */
export const steadyProducers = (consumers: number): number => Math.min(4, Math.max(1, Math.ceil(consumers / 8)));

/**
 * Messages a steady row's producer sends a call, whatever the receive batch: a busy producer batches
 * its sends (the SDK's send batcher does), and one process's unbatched sends could not feed 16–64
 * unbatched consumers here (a first run: 341–390 messages in 25 s, half their receives empty).
 */
export const STEADY_SEND_BATCH = 10;

/**
 * A steady row's producer: `loops` senders, each sending {@link STEADY_SEND_BATCH} messages (or the
 * receive batch, if larger) to distinct random warmed shard keys at a time, one `/messages/batch`
 * call (each shard's segment holds one message; the notices of a send are one segment), while fewer
 * than `flow.window` landed messages wait, sleeping 3 ms when the window is full (sends in flight
 * are not counted: a message a consumer cannot see yet is not work for it, so the window overshoots
 * by at most one send per loop). Under its own tag: its units are not the row's. Stops once
 * `stop()` says so; `fillOnly`: also once the window is full (a row's first fill).
 */
async function runProducer(ctx: Ctx, name: string, batch: number, loops: number, shardKeys: number, flow: Flow, stop: () => boolean, tag: string, fillOnly = false) {
  let sent = 0;
  const errors: Record<string, number> = {};
  const perSend = Math.min(Math.max(batch, STEADY_SEND_BATCH), shardKeys);
  const loop = async (l: number) => {
    const api = ctx.client(PRODUCER_CLIENTS + l);
    while (!stop()) {
      if (flow.waiting + perSend > flow.window && (flow.waiting > 0 || fillOnly)) {
        if (fillOnly) return;
        await sleep(3);
        continue;
      }
      const entries = randomShardKeys(perSend, shardKeys).map((shardKey) => ({ body: messageBody(ctx.bodyBytes), shardKey }));
      const reply = await api.request<{ results: Array<{ error?: unknown }> }>('POST', `/v1/topics/${name}/messages/batch`, { entries }, tag).catch(() => undefined);
      const landed = reply === undefined || reply.status >= 300 ? 0 : reply.body.results.filter((r) => r.error === undefined).length;
      sent += landed;
      flow.waiting += landed;
      if (landed < entries.length) {
        const what = `send ${reply?.status ?? 'failed'}${landed > 0 ? ' (some entries)' : ''}`;
        errors[what] = (errors[what] ?? 0) + 1;
        await sleep(20);
      }
    }
  };
  await Promise.all(Array.from({ length: loops }, (_, l) => loop(l)));
  return { sent, errors };
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
  return drain(ctx, group, shardKeys);
}

/**
 * Each consumer's client receives one message and commits it (round trip off, tag `rx-warmup`):
 * its container's catalog and cursor caches are warm when the row starts (workloads.ts,
 * `warmClients`). Returns the messages received (out of the row's backlog).
 */
async function warmConsumers(ctx: Ctx, group: string, consumers: number): Promise<number> {
  const got = await warmClients(ctx, 0, consumers, async (api) => {
    const reply = await api.request<Received>('POST', `/v1/groups/${group}/receive`, { maxMessages: 1, waitSeconds: 0 }, 'rx-warmup');
    const handles = reply.status < 300 ? reply.body.messages.map((m) => m.receiptHandle) : [];
    if (handles.length > 0) await api.request('POST', `/v1/groups/${group}/commit`, { entries: handles.map((receiptHandle) => ({ receiptHandle })) }, 'rx-warmup');
    return handles.length;
  });
  return got.reduce((a, b) => a + b, 0);
}

/**
 * Receives of 100 and their commits (tag `rx-warmup`; run with the round trip off) until `count`
 * messages came back or 66 rounds past the minimum (two rotations of the notice-stream sample).
 * Returns the messages drained.
 */
async function drain(ctx: Ctx, group: string, count: number): Promise<number> {
  let drained = 0;
  // A receive reads 8 of the 256 notice streams (design.md, which notice streams a receive reads): an
  // empty one does not mean the others are; a rotation takes at most 33 looks.
  for (let rounds = 0; drained < count && rounds < Math.ceil(count / 100) + 66; rounds++) {
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
export function backlogTarget(expectedRate: number, seconds: number, consumers: number, batch: number, maxBacklog: number, minMessages = 0): number {
  return Math.min(maxBacklog, Math.max(500, minMessages + 2 * consumers * batch, Math.ceil(2 * seconds * expectedRate) + 2 * consumers * batch));
}

/** A steady row stops as ran dry when its consumers received nothing for this long (its producer stalled). */
const STEADY_QUIET_MS = 5000;

/**
 * One steady row: what the last row left waiting is drained and the window (two rounds of every
 * consumer's batch) filled by the producer alone (round trip off, as a backlog is; a leftover's
 * notices sit on streams this row's producer does not use, which its consumers would find only by
 * the sample's rotation), then the consumers and the producer (tag `scale-producer:<id>`) run
 * together with the round trip on, the producer keeping the window about full.
 */
async function steadyRun(ctx: Ctx, roundTrip: RoundTrip, name: string, group: string, batch: number, consumers: number, flow: Flow, profile: ReceiveProfile, id: string, tag: string) {
  const seconds = profile.steadySeconds[batch] ?? profile.seconds;
  flow.window = 2 * consumers * batch;
  flow.done = false;
  if (flow.waiting > 0) {
    const left = flow.waiting;
    flow.waiting -= await drain(ctx, group, left);
    if (flow.waiting > 0) ctx.log(`scale ${id}: ${flow.waiting} of the last row's ${left} messages left waiting not found by 66 receives of 100`);
  }
  const fillBy = performance.now() + 60_000;
  await runProducer(ctx, name, batch, steadyProducers(consumers), profile.shardKeys, flow, () => performance.now() > fillBy, 'rx-prefill', true);
  flow.waiting -= await warmConsumers(ctx, group, consumers);
  const deadline = performance.now() + seconds * 1000;
  const backlogBefore = flow.waiting;
  roundTrip.enabled = true;
  const { result, window } = await measured(ctx, () =>
    Promise.all([
      runConsumers(ctx, group, batch, consumers, seconds, 'call', { flow, quietMs: STEADY_QUIET_MS }, tag).finally(() => {
        flow.done = true;
      }),
      runProducer(ctx, name, batch, steadyProducers(consumers), profile.shardKeys, flow, () => flow.done || performance.now() > deadline, `scale-producer:${id}`),
    ]),
  ).finally(() => {
    roundTrip.enabled = false;
  });
  const [consumed, produced] = result;
  return { result: { ...consumed, backlogBefore, sent: produced.sent, errors: { ...consumed.errors, ...produced.errors } }, window };
}

/** Creates a row set's topic and its group (FIFO: `concurrent`; visibility 300 s), and opens a fifo-many topic's shard cursors; returns the group. */
async function setUpTopic(ctx: Ctx, topic: ReceiveTopic, name: string, shardKeys: number): Promise<string> {
  const group = `${name}-g`;
  await ctx.api.put(`/v1/topics/${name}`, { type: isStandard(topic) ? 'standard' : 'fifo', partitions: partitionsOf(topic) });
  await ctx.api.put(`/v1/groups/${group}`, { subscriptions: [{ topic: name }], ...(isStandard(topic) ? {} : { deliveryMode: 'concurrent' }), visibilityTimeoutSeconds: 300 });
  if (isManyShards(topic)) {
    const drained = await openShardCursors(ctx, name, group, shardKeys).catch((error: unknown) => {
      ctx.log(`scale rx ${name}: opening shard cursors FAILED: ${error instanceof Error ? error.message : String(error)}`);
      return 0;
    });
    ctx.log(`scale rx ${name}: shard cursors opened (${drained} of ${shardKeys} warm-up messages drained)`);
  }
  return group;
}

/**
 * The rows of a steady topic: one topic and group for all of them (one warm-up; what a row leaves
 * waiting, at most its window, is the next row's start), per receive batch and consumer count,
 * `call` commits ({@link steadyRun}).
 */
async function steadyRows(ctx: Ctx, roundTrip: RoundTrip, profile: ReceiveProfile, topic: ReceiveTopic, onRow: (row: ReceiveRow) => void): Promise<ReceiveRow[]> {
  const rows: ReceiveRow[] = [];
  const name = `scale-rx-${topic}`;
  const group = await setUpTopic(ctx, topic, name, profile.shardKeys);
  const flow: Flow = { waiting: 0, window: 0, done: false };
  for (const batch of profile.batches) {
    for (const consumers of consumersOf(topic, profile)) {
      const id = `rx ${topic} ×${batch} c${consumers}`;
      const tag = `scale:${id}`;
      try {
        const { result, window } = await steadyRun(ctx, roundTrip, name, group, batch, consumers, flow, profile, id, tag);
        const row = receiveRow({ id, topic, batch, consumers, commits: 'call' }, window.counted, tag, window.seconds, result, roundTrip.meanMs);
        rows.push(row);
        onRow(row);
      } catch (error) {
        ctx.log(`scale ${id} FAILED: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
  }
  return rows;
}

/**
 * Every (topic, batch, commit way, consumers) row, on one fresh topic and group per (topic, batch,
 * commit way). Before each row the backlog is topped up (round trip off); the round trip is on only
 * while the consumers run. A steady topic's rows have no backlog: a producer sends while they run
 * ({@link steadyRows}).
 */
export async function receiveRows(ctx: Ctx, roundTrip: RoundTrip, profile: ReceiveProfile, onRow: (row: ReceiveRow) => void, only: readonly ReceiveTopic[] = RECEIVE_TOPICS): Promise<ReceiveRow[]> {
  const rows: ReceiveRow[] = [];
  for (const topic of RECEIVE_TOPICS.filter((t) => only.includes(t))) {
    if (isSteady(topic)) {
      rows.push(...(await steadyRows(ctx, roundTrip, profile, topic, onRow)));
      continue;
    }
    for (const batch of profile.batches) {
      for (const commits of ['call', 'carried'] as const) {
        if (commits === 'carried' && !profile.carriedBatches.includes(batch)) continue;
        const name = `scale-rx-${topic}-b${batch}-${commits}`;
        const group = await setUpTopic(ctx, topic, name, profile.shardKeys);
        let waiting = 0;
        let lastRate: number | undefined;
        let lastConsumers = 1;
        for (const consumers of consumersOf(topic, profile)) {
          const id = `rx ${topic} ×${batch}${commits === 'carried' ? ' carried' : ''} c${consumers}`;
          const tag = `scale:${id}`;
          // A consumer does at most ~1 receive per 4 calls of 7.5 ms: the first row's guess; later rows scale the last rate.
          const expected = lastRate === undefined ? consumers * batch * 30 : lastRate * Math.min(4, consumers / lastConsumers);
          const minMessages = Math.max(profile.minMessages, profile.minBatches * batch);
          const target = backlogTarget(expected, profile.seconds, consumers, batch, profile.maxBacklog, minMessages);
          try {
            if (waiting < target) waiting += await prefill(ctx, name, topic, target - waiting, profile.shardKeys, batch);
            waiting -= await warmConsumers(ctx, group, consumers);
            const backlogBefore = waiting;
            roundTrip.enabled = true;
            const { result, window } = await measured(ctx, () => runConsumers(ctx, group, batch, consumers, profile.seconds, commits, { backlog: backlogBefore, minMessages, maxSeconds: profile.maxSeconds }, tag)).finally(() => {
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
