/**
 * Found by an audit (2026-12-04): the 6 MB synchronous Lambda response payload counts the handler's whole
 * result as JSON — `{statusCode, headers, body}` with the answer's JSON as an escaped string —
 * not the answer's JSON. Receive budgets only the latter (5 MB), so message bodies with
 * characters JSON escapes (quotes in a JSON body) grow past 6 MB in the Lambda payload.
 */
import { randomBytes } from 'node:crypto';
import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lambdaContext } from '../../local/gateway.js';
import { testTable } from '../helpers/stores.js';

type Handler = (event: APIGatewayProxyEventV2, context: Context) => Promise<{ statusCode?: number; headers?: Record<string, unknown>; body?: string }>;

/** Lambda refuses a synchronous response above this (6 MB; "Response payload size exceeded maximum allowed payload size (6291556 bytes)"). */
const LAMBDA_SYNC_RESPONSE_MAX = 6_291_556;

const saved = { ...process.env };
let handler: Handler;

beforeAll(async () => {
  const { table, endpoint } = await testTable('fnurl');
  Object.assign(process.env, { SLUICE_TABLE_NAME: table, DYNAMODB_ENDPOINT: endpoint, AWS_REGION: 'us-east-1', SLUICE_SECRETS_KEY: randomBytes(32).toString('base64') });
  ({ handler } = (await import('../../functions/api/function-url.js')) as { handler: Handler });
});
afterAll(() => {
  process.env = saved;
});

function urlEvent(method: string, rawPath: string, body?: unknown): APIGatewayProxyEventV2 {
  const text = body === undefined ? undefined : JSON.stringify(body);
  return {
    version: '2.0', routeKey: '$default', rawPath, rawQueryString: '',
    headers: { host: 'x.lambda-url.us-east-1.on.aws', ...(text !== undefined ? { 'content-type': 'application/json' } : {}) },
    requestContext: {
      accountId: '123456789012', apiId: 'x', domainName: 'x.lambda-url.us-east-1.on.aws', domainPrefix: 'x',
      http: { method, path: rawPath, protocol: 'HTTP/1.1', sourceIp: '203.0.113.7', userAgent: 't' },
      requestId: 'r', routeKey: '$default', stage: '$default', time: '01/Dec/2026:06:40:00 +0000', timeEpoch: 1_795_935_600_000,
    },
    ...(text !== undefined ? { body: text } : {}),
    isBase64Encoded: false,
  } as unknown as APIGatewayProxyEventV2;
}

const call = (method: string, path: string, body?: unknown) => handler(urlEvent(method, path, body), lambdaContext('api', 'req'));

/** An ordinary JSON document as a message body (~49 KB): an order with its lines. */
const orderBody = (n: number) => JSON.stringify({ order: `o-${n}`, lines: Array.from({ length: 1000 }, (_, i) => ({ sku: `sku-${i}`, qty: i % 7, note: 'gift' })) });

describe('receive: the Lambda response payload (not only the answer JSON) stays ≤ 6 MB', () => {
  it('100 messages whose bodies are JSON documents: the handler result serialized as Lambda returns it is ≤ 6 MB', async () => {
    expect((await call('PUT', '/v1/topics/orders', { type: 'standard' })).statusCode).toBe(200);
    expect((await call('PUT', '/v1/groups/billing', { subscriptions: [{ topic: 'orders' }] })).statusCode).toBe(200);
    for (let i = 0; i < 100; i += 10) {
      const sent = await call('POST', '/v1/topics/orders/messages/batch', { entries: Array.from({ length: 10 }, (_, j) => ({ body: orderBody(i + j) })) });
      expect(sent.statusCode).toBe(200);
    }
    const result = await call('POST', '/v1/groups/billing/receive', { maxMessages: 100, waitSeconds: 0 });
    expect(result.statusCode).toBe(200);
    const answerBytes = Buffer.byteLength(result.body ?? '', 'utf8');
    const payloadBytes = Buffer.byteLength(JSON.stringify(result), 'utf8');
    const leased = (JSON.parse(result.body ?? '{}') as { messages: unknown[] }).messages.length;
    console.log({ leased, answerBytes, payloadBytes });
    expect(answerBytes).toBeLessThanOrEqual(5_000_000); // what the budget checks: holds
    // What Lambda checks: the leased messages would never reach the caller (502, leases expire, deliveryCount grows).
    expect(payloadBytes).toBeLessThanOrEqual(LAMBDA_SYNC_RESPONSE_MAX);
  });
});

describe('messages by key: the Lambda response payload stays ≤ 6 MB', () => {
  it('100 messages with one key whose bodies are JSON documents: a page serialized as Lambda returns it is ≤ 6 MB', async () => {
    expect((await call('PUT', '/v1/topics/bykey', { type: 'standard' })).statusCode).toBe(200);
    for (let i = 0; i < 100; i += 10) {
      const sent = await call('POST', '/v1/topics/bykey/messages/batch', { entries: Array.from({ length: 10 }, (_, j) => ({ body: orderBody(i + j), keys: ['customer-7'] })) });
      expect(sent.statusCode).toBe(200);
    }
    const event = urlEvent('GET', '/v1/topics/bykey/messages');
    Object.assign(event, { rawQueryString: 'key=customer-7&limit=100', queryStringParameters: { key: 'customer-7', limit: '100' } });
    const result = await handler(event, lambdaContext('api', 'req'));
    expect(result.statusCode).toBe(200);
    const payloadBytes = Buffer.byteLength(JSON.stringify(result), 'utf8');
    console.log({ page: (JSON.parse(result.body ?? '{}') as { messages: unknown[] }).messages.length, answerBytes: Buffer.byteLength(result.body ?? ''), payloadBytes });
    expect(payloadBytes).toBeLessThanOrEqual(LAMBDA_SYNC_RESPONSE_MAX);
  });
});
