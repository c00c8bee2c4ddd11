/**
 * The scale rows (issue 19, item 3): producers 1 → 64 sending as fast as they can to one topic, per
 * topic type and batch size, with an AWS-like round trip injected on every DynamoDB call
 * (round-trip.ts). Each row reports the lost races per append and the DynamoDB requests per message
 * it measured, and the AWS ceiling the capacity model (capacity-model.ts) derives from them.
 */
import { messageBody } from './http.js';
import { awsCeiling, fifoCeiling, lostRacesPerAppend, spreadCeiling, type Bound, type KeyLoad } from './capacity-model.js';
import type { Snapshot } from './meter.js';
import type { RoundTrip } from './round-trip.js';
import { sleep } from './stats.js';
import { PRODUCER_CLIENTS, dynamoTotals, measured, warmClients, type Ctx } from './workloads.js';

/**
 * standard: 4 partitions (-p16, -p64, -p256: 16, 64 and 256, the most a topic takes); fifo-many: a
 * shard key drawn from many per message, 4 notice streams (the default); fifo-many-p256: the same
 * on a FIFO topic with 256 notice streams (its partitions); fifo-hot: every message on one shard;
 * fifo-hot-seq: the same on a sequenced FIFO topic (`sequenced: true`: its shard stream `…/q:hot`
 * takes its numbers from a counter, no append chain).
 */
export type ScaleTopic = 'standard' | 'standard-p16' | 'standard-p64' | 'standard-p256' | 'fifo-many' | 'fifo-many-p256' | 'fifo-hot' | 'fifo-hot-seq';
export const SCALE_TOPICS: ScaleTopic[] = ['standard', 'standard-p16', 'standard-p64', 'standard-p256', 'fifo-many', 'fifo-many-p256', 'fifo-hot', 'fifo-hot-seq'];
const isStandard = (topic: ScaleTopic) => topic.startsWith('standard');
/** Every message of the topic's rows on one shard key. */
const isHot = (topic: ScaleTopic) => topic === 'fifo-hot' || topic === 'fifo-hot-seq';
/** The topic is created `sequenced: true` (FIFO only). */
export const isSequencedTopic = (topic: ScaleTopic) => topic === 'fifo-hot-seq';
/** Partitions of a scale topic (a FIFO topic's: its notice streams). */
const partitionsOf = (topic: ScaleTopic) => (topic === 'standard-p256' || topic === 'fifo-many-p256' ? 256 : topic === 'standard-p64' ? 64 : topic === 'standard-p16' ? 16 : 4);
/**
 * Producer counts of a topic's rows: the profile's, and for a topic with more partitions (a FIFO
 * topic's: notice streams) than the profile's most producers, the profile's `wideProducers` up to
 * its partitions too (so the rows can use them: with sticky appends one producer, a container of
 * its own, writes one partition at a time). Not on one hot shard: its own stream is the limit.
 */
export function producersOf(topic: ScaleTopic, profile: Pick<ScaleProfile, 'producers' | 'wideProducers'>): number[] {
  const partitions = isHot(topic) ? 0 : partitionsOf(topic);
  const wide = profile.wideProducers.filter((n) => n <= partitions && !profile.producers.includes(n));
  return [...profile.producers, ...wide].sort((a, b) => a - b);
}

export interface ScaleRow {
  id: string;
  topic: ScaleTopic;
  batch: number;
  producers: number;
  /** Lost append races (ConditionalCheckFailed on a segment or sentinel) per successful append. */
  lostRacesPerAppend: number;
  /** DynamoDB calls per message accepted. */
  requestsPerMessage: number;
  /** Write units per message accepted over every call of the row (table and GSI, failed conditional writes modelled). Absent in older results. */
  wcuPerMessage?: number;
  /**
   * The capacity model's ceiling for this topic on AWS (messages/s), from this row's measurements:
   * standard topics (senders choose their partition) the sum over the keys used of each key's own
   * capacity; FIFO topics the smaller of the hottest shard key's bound at its share (the shard key
   * chooses) and the sum over the notice streams used (the senders choose: capacity-model.ts `fifoCeiling`).
   */
  awsCeilingMsgPerSecond: number;
  /** How the ceiling was formed. */
  model: 'sum over partitions used' | 'hottest shard, notices summed';
  /** Stream keys that took appends in the row. */
  keysUsed: number;
  /** The hottest key's bound at its measured share (the FIFO model), for comparison on standard rows. */
  hottestKeyCeilingMsgPerSecond: number;
  /** Which bound set the ceiling (standard: the bound limiting most keys), and on which stream key. */
  limitedBy: Bound | 'nothing measured';
  hottestKey: string;
  seconds: number;
  /** Messages accepted, and per second here (DynamoDB Local + the injected round trip; not an AWS figure). */
  messages: number;
  localMsgPerSecond: number;
  appends: number;
  lostRaces: number;
  /** Sequenced keys: counter updates (grants) and filler puts that landed (absent in older results). */
  grants?: number;
  fillers?: number;
  /** Sends answered 429 Throttled (a stream contended for the whole 2 s append budget), and other failures by status. */
  throttled: number;
  /** The 429s by their problem's detail (which limit answered: a stream contended for its budget, a slow store…); absent in older results. */
  throttledBy?: Record<string, number>;
  errors: Record<string, number>;
  /** Mean DynamoDB call time seen by the handlers, injected round trip included. */
  msPerCall: number;
}

/** Stream keys a row's tag touched, as the capacity model's input. */
export function keyLoads(counted: Snapshot, tag: string): KeyLoad[] {
  return Object.entries(counted.streams)
    .filter(([k]) => k.startsWith(`${tag}|`))
    .map(([k, c]) => ({ key: k.slice(tag.length + 1), ...c }));
}

/** One row's figures from its window; `awsCallMs` is the call time the model assumes on AWS. */
export function scaleRow(
  base: Pick<ScaleRow, 'id' | 'topic' | 'batch' | 'producers'>,
  counted: Snapshot,
  tag: string,
  seconds: number,
  messages: number,
  failures: { throttled: number; throttledBy?: Record<string, number>; errors: Record<string, number> },
  awsCallMs: number,
): ScaleRow {
  const keys = keyLoads(counted, tag);
  const d = dynamoTotals(counted, (t) => t === tag);
  const ms = Object.entries(counted.dynamo)
    .filter(([k]) => k.startsWith(`${tag}|`))
    .reduce((n, [, c]) => n + c.ms, 0);
  const hottest = awsCeiling(keys, messages, awsCallMs);
  const spread = isStandard(base.topic) ? spreadCeiling(keys, messages, awsCallMs) : undefined;
  const ceiling = spread ?? fifoCeiling(keys, messages, awsCallMs);
  return {
    ...base,
    lostRacesPerAppend: lostRacesPerAppend(keys),
    requestsPerMessage: messages > 0 ? d.requests / messages : 0,
    wcuPerMessage: messages > 0 ? (d.wruTable + d.wruGsi + d.wruFailedModel) / messages : 0,
    awsCeilingMsgPerSecond: ceiling?.msgPerSecond ?? 0,
    model: spread ? 'sum over partitions used' : 'hottest shard, notices summed',
    keysUsed: keys.filter((k) => k.appends > 0).length,
    hottestKeyCeilingMsgPerSecond: hottest?.msgPerSecond ?? 0,
    limitedBy: ceiling?.limitedBy ?? 'nothing measured',
    hottestKey: ceiling?.key ?? '',
    seconds,
    messages,
    localMsgPerSecond: seconds > 0 ? messages / seconds : 0,
    appends: keys.reduce((n, k) => n + k.appends, 0),
    lostRaces: keys.reduce((n, k) => n + k.lostRaces, 0),
    grants: keys.reduce((n, k) => n + (k.grants ?? 0), 0),
    fillers: keys.reduce((n, k) => n + (k.fillers ?? 0), 0),
    throttled: failures.throttled,
    ...(failures.throttledBy && Object.keys(failures.throttledBy).length > 0 ? { throttledBy: failures.throttledBy } : {}),
    errors: failures.errors,
    msPerCall: d.requests > 0 ? ms / d.requests : 0,
  };
}

export interface ScaleProfile {
  producers: number[];
  /** More producers, for the rows of topics with at least that many partitions. */
  wideProducers: number[];
  batches: number[];
  seconds: number;
  /** Shard keys of the fifo-many topic (each opened before the rows). */
  shardKeys: number;
  /**
   * The fifo-many-p256 rows' own shard keys and duration. The FIFO model takes the hottest shard key
   * at its share of the row's messages: over few keys and few messages the busiest carries several
   * times its share by chance, which the model then reads as the topic's limit. More keys and a
   * longer row estimate the shares of the issue's workload (10^6 mostly idle shards) instead of the
   * sample's. (Notice streams are summed as partitions: senders pick them, capacity-model.ts.)
   */
  wideFifo: { shardKeys: number; seconds: number };
}

/** Shard keys and seconds of one topic's rows. */
export const rowShape = (topic: ScaleTopic, profile: Pick<ScaleProfile, 'seconds' | 'shardKeys' | 'wideFifo'>) =>
  topic === 'fifo-many-p256' ? profile.wideFifo : { shardKeys: profile.shardKeys, seconds: profile.seconds };

const HOT_SHARD = 'hot';

function entryOf(ctx: Ctx, topic: ScaleTopic, shardKeys: number) {
  const body = messageBody(ctx.bodyBytes);
  if (isStandard(topic)) return { body };
  return { body, shardKey: isHot(topic) ? HOT_SHARD : `k${Math.floor(Math.random() * shardKeys)}` };
}

/** Opens every stream the rows of one topic will write (a stream's first append is a one-time transaction). */
async function openStreams(ctx: Ctx, name: string, topic: ScaleTopic, shardKeys: number) {
  if (isStandard(topic)) {
    // Concurrent sends of one process spread over partitions without an append in flight: all at
    // once up to 64; a wider topic in waves of 64 (256 at once overwhelm a loaded DynamoDB Local),
    // which open most of its partitions. A failed warm-up send only leaves a stream to open in the row.
    const count = Math.max(16, partitionsOf(topic));
    for (let i = 0; i < count; i += 64) {
      await Promise.all(
        Array.from({ length: Math.min(64, count - i) }, () => ctx.api.request('POST', `/v1/topics/${name}/messages`, { body: messageBody(ctx.bodyBytes) }, 'warmup').catch(() => undefined)),
      );
    }
    return;
  }
  const keys = isHot(topic) ? [HOT_SHARD] : Array.from({ length: shardKeys }, (_, i) => `k${i}`);
  for (let i = 0; i < keys.length; i += 100) {
    const entries = keys.slice(i, i + 100).map((shardKey) => ({ body: messageBody(ctx.bodyBytes), shardKey }));
    await ctx.api.must('POST', `/v1/topics/${name}/messages/batch`, { entries }, 'warmup');
  }
}

/** Producers send back to back until the deadline; a 429 is counted and the producer waits 20–50 ms, as a client would. */
async function runRow(ctx: Ctx, name: string, topic: ScaleTopic, batch: number, producers: number, seconds: number, shardKeys: number, tag: string) {
  let messages = 0;
  let throttled = 0;
  const throttledBy: Record<string, number> = {};
  const throttle = (detail: unknown) => {
    throttled++;
    const key = typeof detail === 'string' ? detail : 'no detail';
    throttledBy[key] = (throttledBy[key] ?? 0) + 1;
  };
  const errors: Record<string, number> = {};
  const fail = (what: string) => (errors[what] = (errors[what] ?? 0) + 1);
  const deadline = performance.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: producers }, async (_, p) => {
      const api = ctx.client(PRODUCER_CLIENTS + p);
      for (let i = 0; performance.now() < deadline && i < 100_000; i++) {
        const reply = await (batch === 1
          ? api.request('POST', `/v1/topics/${name}/messages`, entryOf(ctx, topic, shardKeys), tag)
          : api.request('POST', `/v1/topics/${name}/messages/batch`, { entries: Array.from({ length: batch }, () => entryOf(ctx, topic, shardKeys)) }, tag)
        ).catch((error: unknown) => {
          // A request that did not answer within the client's 30 s (a loaded machine): counted, the row goes on.
          fail(error instanceof Error ? error.name : 'request failed');
          return undefined;
        });
        if (reply === undefined) continue;
        if (reply.status === 429) {
          throttle((reply.body as { detail?: unknown } | undefined)?.detail);
          await sleep(20 + Math.random() * 30);
          continue;
        }
        if (reply.status >= 300) {
          fail(String(reply.status));
          await sleep(5);
          continue;
        }
        if (batch === 1) {
          messages++;
          continue;
        }
        for (const r of (reply.body as { results: Array<{ error?: { status?: number; code?: string; detail?: string } }> }).results) {
          if (r.error === undefined) messages++;
          else if (r.error.status === 429 || r.error.code === 'Throttled') throttle(r.error.detail);
          else fail(`entry ${r.error.status ?? '?'} ${r.error.code ?? ''}`.trim());
        }
      }
    }),
  );
  return { messages, throttled, throttledBy, errors };
}

/**
 * Every (topic type, batch size, producer count) row, on one fresh topic per (type, batch) whose
 * streams are opened first. The round trip is injected only while a row runs.
 */
export async function scaleRows(ctx: Ctx, roundTrip: RoundTrip, profile: ScaleProfile, onRow: (row: ScaleRow) => void, only: readonly ScaleTopic[] = SCALE_TOPICS): Promise<ScaleRow[]> {
  const rows: ScaleRow[] = [];
  for (const topic of SCALE_TOPICS.filter((t) => only.includes(t))) {
    for (const batch of profile.batches) {
      const name = `scale-${topic}-b${batch}`;
      await ctx.api.put(`/v1/topics/${name}`, { type: isStandard(topic) ? 'standard' : 'fifo', partitions: partitionsOf(topic), ...(isSequencedTopic(topic) ? { sequenced: true } : {}) });
      const shape = rowShape(topic, profile);
      await openStreams(ctx, name, topic, shape.shardKeys);
      for (const producers of producersOf(topic, profile)) {
        const id = `${topic} ×${batch} p${producers}`;
        const tag = `scale:${id}`;
        try {
          await warmClients(ctx, PRODUCER_CLIENTS, producers, (api) => api.request('POST', `/v1/topics/${name}/messages`, entryOf(ctx, topic, shape.shardKeys), 'warmup'));
          roundTrip.enabled = true;
          const { result, window } = await measured(ctx, () => runRow(ctx, name, topic, batch, producers, shape.seconds, shape.shardKeys, tag));
          const row = scaleRow({ id, topic, batch, producers }, window.counted, tag, window.seconds, result.messages, result, roundTrip.meanMs);
          rows.push(row);
          onRow(row);
        } catch (error) {
          // One row failing (DynamoDB Local overwhelmed) leaves it out; the rest of the run and its results stay.
          ctx.log(`scale ${id} FAILED: ${error instanceof Error ? error.message : String(error)}`);
        } finally {
          roundTrip.enabled = false;
        }
      }
    }
  }
  return rows;
}
