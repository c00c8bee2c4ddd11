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
  /** SQS requests (metered per 64 KiB chunk of payload). */
  sqsStandardPerMillion: 0.4,
  sqsFifoPerMillion: 0.5,
  /** EventBridge Scheduler invocations. */
  schedulerPerMillion: 1.0,
} as const;

/** The Lambda memory size of the deployed API functions (cdk/sluice-function.ts default; receive runs at 256 MB, so pricing it at 512 overstates it). */
export const LAMBDA_MEMORY_MB = 512;

export const PRICE_TABLE: Array<{ item: string; price: string; source: string }> = [
  { item: 'DynamoDB on-demand write request unit', price: `$${PRICES.dynamoWruPerMillion} per million WRU`, source: 'aws.amazon.com/dynamodb/pricing/on-demand' },
  { item: 'DynamoDB on-demand read request unit', price: `$${PRICES.dynamoRruPerMillion} per million RRU`, source: 'aws.amazon.com/dynamodb/pricing/on-demand' },
  { item: 'Lambda arm64 duration', price: `$${PRICES.lambdaGbSecond} per GB-second (${LAMBDA_MEMORY_MB} MB configured)`, source: 'aws.amazon.com/lambda/pricing' },
  { item: 'Lambda requests', price: `$${PRICES.lambdaRequestsPerMillion} per million`, source: 'aws.amazon.com/lambda/pricing' },
  { item: 'API Gateway HTTP API requests', price: `$${PRICES.httpApiPerMillion} per million (per 512 KB)`, source: 'aws.amazon.com/api-gateway/pricing' },
  { item: 'SQS standard requests', price: `$${PRICES.sqsStandardPerMillion} per million (per 64 KiB chunk)`, source: 'aws.amazon.com/sqs/pricing' },
  { item: 'SQS FIFO requests', price: `$${PRICES.sqsFifoPerMillion} per million (per 64 KiB chunk)`, source: 'aws.amazon.com/sqs/pricing' },
  { item: 'EventBridge Scheduler invocations', price: `$${PRICES.schedulerPerMillion} per million`, source: 'aws.amazon.com/eventbridge/pricing' },
];

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
  api: number;
  scheduler: number;
  sqs: number;
  total: number;
}

/** USD per million messages. */
export function costPerMillion(u: PerMessage): CostBreakdown {
  const c = {
    dynamoWrites: u.wru * PRICES.dynamoWruPerMillion,
    dynamoReads: u.rru * PRICES.dynamoRruPerMillion,
    lambdaRequests: u.lambdaRequests * PRICES.lambdaRequestsPerMillion,
    lambdaDuration: u.lambdaGbSeconds * PRICES.lambdaGbSecond * 1e6,
    api: u.apiRequests * PRICES.httpApiPerMillion,
    scheduler: u.schedulerInvocations * PRICES.schedulerPerMillion,
    sqs: u.sqsRequests * PRICES.sqsStandardPerMillion,
  };
  return { ...c, total: Object.values(c).reduce((a, b) => a + b, 0) };
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
