/**
 * Public list prices used by the cost model (us-east-1, USD), and the model
 * itself: what one million messages cost on AWS given the units the benchmark
 * counted per message. Free tiers are ignored on every side.
 */

export const PRICES = {
  /** When these list prices were read; the run date is recorded separately. */
  asOf: '2025-06-01',
  region: 'us-east-1',
  currency: 'USD',
  /** DynamoDB on-demand, Standard table class (after the November 2024 cut). */
  dynamoWruPerMillion: 0.625,
  dynamoRruPerMillion: 0.125,
  /** Lambda, arm64 (Graviton), first tier. */
  lambdaGbSecond: 0.0000133334,
  lambdaRequestsPerMillion: 0.2,
  /** API Gateway HTTP API, first 300 million requests a month (metered per 512 KB). */
  httpApiPerMillion: 1.0,
  /** Lambda function URLs: no charge besides the function's requests and duration. */
  functionUrlPerMillion: 0,
  /** SQS requests (metered per 64 KiB chunk of payload). */
  sqsStandardPerMillion: 0.4,
  sqsFifoPerMillion: 0.5,
  /** EventBridge Scheduler invocations. */
  schedulerPerMillion: 1.0,
  /** DynamoDB storage, Standard table class (each item's bytes + 100 bytes of overhead). */
  dynamoStorageGbMonth: 0.25,
} as const;

/** The Lambda memory size of the deployed API functions (cdk/sluice-function.ts default): every route but `receive`. */
export const LAMBDA_MEMORY_MB = 512;

/**
 * The `receive` function's memory with either entry point (cdk/sluice-service.ts route overrides):
 * its own function URL (`ReceiveUrl`) in the default deployment, the receive route behind the HTTP API.
 */
export const RECEIVE_MEMORY_MB = 128;

/** The memory a route's requests are billed at: `receive` at {@link RECEIVE_MEMORY_MB}, the rest at {@link LAMBDA_MEMORY_MB}. */
export const routeMemoryMb = (route: string): number => (route === 'receive' ? RECEIVE_MEMORY_MB : LAMBDA_MEMORY_MB);

/** GB-seconds of API requests from their billed milliseconds per route, each route at its function's memory. */
export const apiGbSeconds = (billedMsByRoute: Record<string, number>): number =>
  Object.entries(billedMsByRoute).reduce((sum, [route, ms]) => sum + (ms / 1000) * (routeMemoryMb(route) / 1024), 0);

/** Memory of the functions push delivery runs (cdk/dispatcher.ts: the dispatcher 256 MB; push-worker the service default). */
export const DISPATCHER_MEMORY_MB = 256;
export const PUSH_WORKER_MEMORY_MB = 512;

export const PRICE_TABLE: Array<{ item: string; price: string; source: string }> = [
  { item: 'DynamoDB on-demand write request unit', price: `$${PRICES.dynamoWruPerMillion} per million WRU`, source: 'aws.amazon.com/dynamodb/pricing/on-demand' },
  { item: 'DynamoDB on-demand read request unit', price: `$${PRICES.dynamoRruPerMillion} per million RRU`, source: 'aws.amazon.com/dynamodb/pricing/on-demand' },
  { item: 'Lambda arm64 duration', price: `$${PRICES.lambdaGbSecond} per GB-second (receive ${RECEIVE_MEMORY_MB} MB, other routes ${LAMBDA_MEMORY_MB} MB)`, source: 'aws.amazon.com/lambda/pricing' },
  { item: 'Lambda requests', price: `$${PRICES.lambdaRequestsPerMillion} per million`, source: 'aws.amazon.com/lambda/pricing' },
  { item: 'API Gateway HTTP API requests (entryPoint httpApi)', price: `$${PRICES.httpApiPerMillion} per million (per 512 KB)`, source: 'aws.amazon.com/api-gateway/pricing' },
  { item: 'Lambda function URL requests (entryPoint functionUrl, the default)', price: 'no charge besides Lambda requests and duration', source: 'aws.amazon.com/lambda/pricing; docs.aws.amazon.com/lambda/latest/dg/urls-invocation.html' },
  { item: 'SQS standard requests', price: `$${PRICES.sqsStandardPerMillion} per million (per 64 KiB chunk)`, source: 'aws.amazon.com/sqs/pricing' },
  { item: 'SQS FIFO requests', price: `$${PRICES.sqsFifoPerMillion} per million (per 64 KiB chunk)`, source: 'aws.amazon.com/sqs/pricing' },
  { item: 'DynamoDB storage (Standard table class)', price: `$${PRICES.dynamoStorageGbMonth} per GB-month (item bytes + 100 B each)`, source: 'aws.amazon.com/dynamodb/pricing/on-demand' },
  { item: 'DynamoDB Streams reads by a Lambda trigger (the dispatcher), records its filters drop', price: 'no charge (only the invocations with matching records are billed, as Lambda requests and duration)', source: 'aws.amazon.com/dynamodb/pricing/on-demand; docs.aws.amazon.com/lambda/latest/dg/invocation-eventfiltering.html' },
  { item: 'EventBridge Scheduler invocations', price: `$${PRICES.schedulerPerMillion} per million`, source: 'aws.amazon.com/eventbridge/pricing' },
];

/** CloudWatch list prices (us-east-1): custom metrics, first 10,000 (per metric-month, prorated by the hour); logs ingested. */
export const CLOUDWATCH = { metricMonth: 0.3, logsPerGb: 0.5 } as const;

/**
 * What a deployment costs whatever its traffic, USD per month (43,200 one-minute ticks):
 * the group-metrics function's figures of docs/design.md, "Per-group metrics".
 */
export const MONTHLY = {
  /**
   * 4 custom metrics at $0.30, ~15 MB of EMF logs, 5–9 RRU a tick for the cursors and heads and
   * 4 RRU for the dead-letter counters (8 keys, eventually consistent): ≈ $1.26–1.28.
   */
  groupMetricsPerGroup: 1.27,
  /** The group listing and the function's 43,200 invocations at ~0.2 s, 512 MB. */
  groupMetricsShared: 0.07,
  /**
   * Per FIFO shard cursor a group has (each lives 15 days after its last claim or notice, idle or
   * not), while the group's cursors fit the one Query page its figures read whole
   * (lib/services/group-figures.ts `FIGURE_PAGES_MAX`): one consistent Query summed over item
   * sizes (1 RRU per 4 KB), at ≈ 250 bytes an idle shard's cursor: 43,200 × 250 ÷ 4,096 RRU a month.
   */
  groupMetricsPerShardCursor: ((43_200 * 250) / 4096) * (PRICES.dynamoRruPerMillion / 1e6),
  /** Past that page: the page itself (1 MB, 256 RRU consistent), read each tick and not used. */
  groupMetricsCursorPage: 43_200 * 256 * (PRICES.dynamoRruPerMillion / 1e6),
  /** Per shard with work, at any size: its oldest message's segment, for the oldest message's age (½ RRU, eventually consistent, ≤ 4 KB). */
  groupMetricsPerOldestSegment: 43_200 * 0.5 * (PRICES.dynamoRruPerMillion / 1e6),
  /** Per shard with work (on the ready index), past that page: its cursor in an eventually consistent BatchGetItem (½ RRU, ≤ 4 KB). */
  groupMetricsPerActiveCursor: 43_200 * 0.5 * (PRICES.dynamoRruPerMillion / 1e6),
  /** Past that page, per ready-index key read (the home key and a wide topic's 16–64 buckets): one Query, ½ RRU. */
  groupMetricsPerReadyKey: 43_200 * 0.5 * (PRICES.dynamoRruPerMillion / 1e6),
  /**
   * Per notice stream of a subscribed FIFO topic (4 by default, up to 256), at any size: the notices
   * past the group's notice cursor, for messages no receive has discovered (one eventually
   * consistent Query, ½ RRU when none wait). The notice cursors come in one consistent Query per
   * namespace: {@link groupMetricsNoticeCursorsRru}.
   */
  groupMetricsPerNoticeStream: 43_200 * 0.5 * (PRICES.dynamoRruPerMillion / 1e6),
} as const;

/** RRU of a namespace's notice cursors read in one consistent Query: ≈ 200 bytes each, 1 RRU per 4 KB, at least 1. */
export const groupMetricsNoticeCursorsRru = (noticeStreams: number): number => Math.max(1, Math.ceil((noticeStreams * 200) / 4096));

/** Bytes of the cursors the figures read whole (one Query page). */
const FIGURE_PAGE_BYTES = 1024 * 1024;

/**
 * What a FIFO group's shard cursors add to its per-minute figures, USD per month: every cursor
 * while they fit one Query page (≈ 4,000 idle ones), else that page, the ready-index keys and
 * the cursors of the shards with work; and at any size each shard with work's oldest segment and
 * each notice stream (docs/design.md, Per-group metrics, "Figures of a group over very many shards",
 * "Messages no receive has discovered").
 */
export function groupMetricsCursorReads(cursors: number, activeShards: number, readyBuckets: number, noticeStreams = 0): number {
  const segments = activeShards * MONTHLY.groupMetricsPerOldestSegment;
  // The notice streams, read for messages no receive has discovered (docs/design.md, Per-group metrics).
  const notices = noticeStreams === 0 ? 0 : noticeStreams * MONTHLY.groupMetricsPerNoticeStream + 43_200 * groupMetricsNoticeCursorsRru(noticeStreams) * (PRICES.dynamoRruPerMillion / 1e6);
  if (cursors * 250 <= FIGURE_PAGE_BYTES) return cursors * MONTHLY.groupMetricsPerShardCursor + segments + notices;
  return MONTHLY.groupMetricsCursorPage + activeShards * MONTHLY.groupMetricsPerActiveCursor + segments + (1 + readyBuckets) * MONTHLY.groupMetricsPerReadyKey + notices;
}

/**
 * Costs that only some messages or receives incur, which the per-message rows do not
 * exercise (docs/design.md: dead-letter copies, redrive): USD per million occurrences.
 */
export const CONDITIONAL = [
  {
    what: 'a dead letter: its GSI entry (the `D#` link of the dead-letter copy)',
    units: '+1 WRU',
    usdPerMillion: 1 * PRICES.dynamoWruPerMillion,
  },
  {
    what: "a dead letter: one of the group's 8 dead-letter counters, incremented in the dead-letter transaction (lib/adapters/dynamodb/dead-letter-counts.ts)",
    units: '+2 WRU (a transactional write of an item under 1 KB)',
    usdPerMillion: 2 * PRICES.dynamoWruPerMillion,
  },
  {
    what: "a receive while the group's redrive hint (`rd`) is live: the redrive stream read",
    units: '+½ RRU, +1 Query',
    usdPerMillion: 0.5 * PRICES.dynamoRruPerMillion,
  },
  {
    what: 'a minute in which an API container saw a topic lose an append race or answer 429: one EMF document of its contention metrics (docs/design.md, "Append contention metrics")',
    units: '~400 B of CloudWatch Logs at $0.50/GB',
    usdPerMillion: 1e6 * 400e-9 * CLOUDWATCH.logsPerGb,
  },
  {
    what: 'an hour in which a topic lost append races: its 3 contention metrics, billed by the hour they are sent',
    units: '3 custom metrics × $0.30 per metric-month ÷ 730 h',
    usdPerMillion: (1e6 * 3 * CLOUDWATCH.metricMonth) / 730,
  },
] as const;

/** Units per message that the model prices. */
export interface PerMessage {
  wru: number;
  rru: number;
  lambdaRequests: number;
  /** Lambda GB-seconds (billed duration × memory). */
  lambdaGbSeconds: number;
  apiRequests: number;
  schedulerInvocations: number;
  sqsRequests: number;
}

export interface CostBreakdown {
  dynamoWrites: number;
  dynamoReads: number;
  lambdaRequests: number;
  lambdaDuration: number;
  /** The HTTP API's request fee (entry point `httpApi`). */
  api: number;
  /** The function URL's request fee (entry point `functionUrl`): none. */
  functionUrl: number;
  scheduler: number;
  sqs: number;
  /** Everything with the HTTP API in front (`entryPoint: 'httpApi'`; the only total before the function URL). */
  total: number;
  /** Everything with the function URL in front (`entryPoint: 'functionUrl'`, the default deployment). */
  totalFunctionUrl: number;
}

/** USD per million messages, for both entry points: the same calls, with or without the HTTP API's fee. */
export function costPerMillion(u: PerMessage): CostBreakdown {
  const shared = {
    dynamoWrites: u.wru * PRICES.dynamoWruPerMillion,
    dynamoReads: u.rru * PRICES.dynamoRruPerMillion,
    lambdaRequests: u.lambdaRequests * PRICES.lambdaRequestsPerMillion,
    lambdaDuration: u.lambdaGbSeconds * PRICES.lambdaGbSecond * 1e6,
    scheduler: u.schedulerInvocations * PRICES.schedulerPerMillion,
    sqs: u.sqsRequests * PRICES.sqsStandardPerMillion,
  };
  const base = Object.values(shared).reduce((a, b) => a + b, 0);
  const api = u.apiRequests * PRICES.httpApiPerMillion;
  const functionUrl = u.apiRequests * PRICES.functionUrlPerMillion;
  return { ...shared, api, functionUrl, total: base + api, totalFunctionUrl: base + functionUrl };
}

/**
 * SQS for the same lifecycle: SendMessage, ReceiveMessage, DeleteMessage per
 * message (3 requests, each metered per started 64 KiB of payload); batched
 * by n, each of the three calls carries n messages (10 at most in SQS).
 */
export function sqsPerMillion(kind: 'standard' | 'fifo', bodyBytes: number, batch: number): number {
  const perRequest = kind === 'fifo' ? PRICES.sqsFifoPerMillion : PRICES.sqsStandardPerMillion;
  const n = Math.min(batch, 10);
  const chunks = Math.max(1, Math.ceil((bodyBytes * n) / (64 * 1024)));
  // Send and receive carry the bodies; delete carries receipt handles only (one chunk).
  const requestsPerMessage = (2 * chunks + 1) / n;
  return requestsPerMessage * perRequest;
}
