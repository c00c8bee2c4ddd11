/** What a client sees for the pending commit of pending-outputs-escaped-bodies.test.ts, over HTTP (found by an audit, 2026-12-04). */
import { randomBytes } from 'node:crypto';
import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lambdaContext } from '../../local/gateway.js';
import { testTable } from '../helpers/stores.js';

type Handler = (event: APIGatewayProxyEventV2, context: Context) => Promise<{ statusCode?: number; body?: string }>;
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
const call = async (method: string, rawPath: string, body?: unknown) => {
  const text = body === undefined ? undefined : JSON.stringify(body);
  const event = {
    version: '2.0', routeKey: '$default', rawPath, rawQueryString: '',
    headers: { host: 'x', ...(text !== undefined ? { 'content-type': 'application/json' } : {}) },
    requestContext: { accountId: '1', apiId: 'x', domainName: 'x', domainPrefix: 'x', http: { method, path: rawPath, protocol: 'HTTP/1.1', sourceIp: '203.0.113.7', userAgent: 't' }, requestId: 'r', routeKey: '$default', stage: '$default', time: '', timeEpoch: 0 },
    ...(text !== undefined ? { body: text } : {}), isBase64Encoded: false,
  } as unknown as APIGatewayProxyEventV2;
  const r = await handler(event, lambdaContext('api', 'req'));
  return { status: r.statusCode, body: r.body ? (JSON.parse(r.body) as Record<string, unknown>) : undefined, requestBytes: text ? Buffer.byteLength(text) : 0 };
};

describe('HTTP: a protected pending commit publishing a 256 KiB body of quotes', () => {
  it('answers 200 pending (not a 500), and the message can still be committed', async () => {
    expect((await call('PUT', '/v1/topics/in', { type: 'fifo' })).status).toBe(200);
    expect((await call('PUT', '/v1/topics/out', { type: 'fifo' })).status).toBe(200);
    expect((await call('PUT', '/v1/groups/p', { subscriptions: [{ topic: 'in' }], deliveryMode: 'protected' })).status).toBe(200);
    expect((await call('POST', '/v1/topics/in/messages/batch', { entries: [{ body: 'head', shardKey: 'a' }, { body: 'second', shardKey: 'a' }] })).status).toBe(200);
    const got = (await call('POST', '/v1/groups/p/receive', { maxMessages: 10 })).body?.messages as Array<{ receiptHandle: string }>;
    expect(got).toHaveLength(2);
    const commit = await call('POST', '/v1/groups/p/commit', { entries: [{ receiptHandle: got[1]!.receiptHandle, publish: [{ topic: 'out', shardKey: 's', body: '"'.repeat(256 * 1024) }] }] });
    console.log('request bytes', commit.requestBytes, 'status', commit.status, commit.body);
    expect(commit.status).toBe(200);
    expect(commit.body?.results).toEqual([{ receiptHandle: got[1]!.receiptHandle, status: 'pending' }]);
  });
});
