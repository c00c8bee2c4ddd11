/**
 * The idle-month model: what one idle consumer costs on AWS for a 30-day
 * month at list prices, from what was counted while it idled for a measured
 * window on the local runtime (scaled linearly to the month).
 */
import { LAMBDA_MEMORY_MB, PRICES, RECEIVE_MEMORY_MB } from './pricing.js';

/** A 30-day month, seconds. */
export const MONTH_SECONDS = 30 * 24 * 3600;

/** What a window of idling counted. */
export interface IdleCounts {
  /** Length of the window (s). */
  seconds: number;
  dynamoCalls: number;
  /** Read units: reported plus the modelled minimum of empty reads. */
  rru: number;
  /** Write units: table, GSI and modelled failed conditional writes. */
  wru: number;
  /** Lambda invocations (requests the consumer made of the API). */
  lambdaRequests: number;
  /** Billed Lambda milliseconds (each request rounded up to 1 ms). */
  lambdaBilledMs: number;
  /** Bytes the idle consumer keeps in the table (each item + 100 B overhead), 0 when not measured. */
  storageBytes: number;
  /** SQS requests (an SDK consumer's doorbell long polls and rings), standard queue. */
  sqsRequests?: number;
}

/** One idle row: the counts scaled to a month and priced. */
export interface IdleMonth {
  lambdaRequests: number;
  lambdaGbSeconds: number;
  dynamoCalls: number;
  rru: number;
  wru: number;
  usd: { lambdaRequests: number; lambdaDuration: number; dynamoReads: number; dynamoWrites: number; storage: number; httpApi: number; sqs: number };
  /** Everything, with the function URL in front (no request fee). */
  usdPerMonth: number;
}

/**
 * Scales `counts` to {@link MONTH_SECONDS} and prices them with the receiving
 * function at `memoryMb` (arm64); `httpApi` adds API Gateway's request fee.
 */
export function idleMonth(counts: IdleCounts, memoryMb: number, httpApi = false): IdleMonth {
  const scale = counts.seconds > 0 ? MONTH_SECONDS / counts.seconds : 0;
  const lambdaRequests = counts.lambdaRequests * scale;
  const lambdaGbSeconds = (counts.lambdaBilledMs / 1000) * (memoryMb / 1024) * scale;
  const rru = counts.rru * scale;
  const wru = counts.wru * scale;
  const usd = {
    lambdaRequests: (lambdaRequests / 1e6) * PRICES.lambdaRequestsPerMillion,
    lambdaDuration: lambdaGbSeconds * PRICES.lambdaGbSecond,
    dynamoReads: (rru / 1e6) * PRICES.dynamoRruPerMillion,
    dynamoWrites: (wru / 1e6) * PRICES.dynamoWruPerMillion,
    storage: (counts.storageBytes / 1024 ** 3) * PRICES.dynamoStorageGbMonth,
    httpApi: httpApi ? (lambdaRequests / 1e6) * PRICES.httpApiPerMillion : 0,
    sqs: (((counts.sqsRequests ?? 0) * scale) / 1e6) * PRICES.sqsStandardPerMillion,
  };
  return {
    lambdaRequests,
    lambdaGbSeconds,
    dynamoCalls: counts.dynamoCalls * scale,
    rru,
    wru,
    usd,
    usdPerMonth: Object.values(usd).reduce((a, b) => a + b, 0),
  };
}

export { RECEIVE_MEMORY_MB } from './pricing.js';

export type IdleId = 'http-long-poll' | 'http-long-poll-fifo' | 'http-long-poll-fifo-wide' | 'http-long-poll-fifo-p256' | 'sdk-consumer' | 'push-group';
export type WakeId = 'push-group' | 'sdk-consumer';

/** Issue 15's targets, USD per month: an HTTP long poll's $5 whatever topic it waits on. */
export const IDLE_TARGETS: Record<IdleId, number> = { 'http-long-poll': 5, 'http-long-poll-fifo': 5, 'http-long-poll-fifo-wide': 5, 'http-long-poll-fifo-p256': 5, 'sdk-consumer': 0.1, 'push-group': 0.01 };
/** Issue 15's wake target: p99 (ms). */
export const WAKE_TARGET_P99_MS = 1000;

export interface IdleRow {
  id: IdleId;
  /** Modelled AWS cost of one idle consumer for a 30-day month, default deployment (function URLs: receives to `ReceiveUrl`, the `receive` function at 128 MB). */
  usdPerMonth: number;
  /** The same with the HTTP API in front (its receive route's function at 128 MB, plus the request fee). */
  usdPerMonthHttpApi: number;
  /** The default deployment when receives go to `ApiUrl` instead (no `receiveEndpoint`): the `api` function at 512 MB holds them. */
  usdPerMonthViaApi: number;
  targetUsd: number;
  /** What the window counted. */
  counted: IdleCounts;
  /** Per month: calls and units, and the USD parts of `usdPerMonth`. */
  perMonth: { lambdaRequests: number; lambdaGbSeconds: number; dynamoCalls: number; rru: number; wru: number; usd: Record<string, number> };
  /** DynamoDB calls of the window by command. */
  byCommand: Record<string, number>;
  note: string;
}

export interface WakeRow {
  id: WakeId;
  samples: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
  note: string;
}

export function idleRow(id: IdleId, counts: IdleCounts, byCommand: Record<string, number>, note: string): IdleRow {
  const month = idleMonth(counts, RECEIVE_MEMORY_MB);
  const httpApi = idleMonth(counts, RECEIVE_MEMORY_MB, true);
  const viaApi = idleMonth(counts, LAMBDA_MEMORY_MB);
  return {
    id,
    usdPerMonth: month.usdPerMonth,
    usdPerMonthHttpApi: httpApi.usdPerMonth,
    usdPerMonthViaApi: viaApi.usdPerMonth,
    targetUsd: IDLE_TARGETS[id],
    counted: counts,
    perMonth: { lambdaRequests: month.lambdaRequests, lambdaGbSeconds: month.lambdaGbSeconds, dynamoCalls: month.dynamoCalls, rru: month.rru, wru: month.wru, usd: month.usd },
    byCommand,
    note,
  };
}

