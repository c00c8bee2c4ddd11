/**
 * The function-URL entry point (functions/api/function-url.ts) on DynamoDB Local, driven by
 * events of the shape Lambda documents for function URLs (payload format 2.0, `routeKey`
 * `$default`, no `pathParameters`, the IAM caller under `requestContext.authorizer.iam`):
 * https://docs.aws.amazon.com/lambda/latest/dg/urls-invocation.html (request payload) and
 * aws/aws-lambda-go events/testdata/lambda-urls-request.json.
 */
import { randomBytes } from 'node:crypto';
import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lambdaContext } from '../../local/gateway.js';
import { testTable } from '../helpers/stores.js';

type Handler = (event: APIGatewayProxyEventV2, context: Context) => Promise<{ statusCode?: number; headers?: Record<string, unknown>; body?: string }>;

const saved = { ...process.env };
let handler: Handler;
let receiveHandler: Handler;

beforeAll(async () => {
  const { table, endpoint } = await testTable('fnurl');
  Object.assign(process.env, {
    SLUICE_TABLE_NAME: table,
    DYNAMODB_ENDPOINT: endpoint,
    AWS_REGION: 'us-east-1',
    SLUICE_SECRETS_KEY: randomBytes(32).toString('base64'),
  });
  ({ handler } = (await import('../../functions/api/function-url.js')) as { handler: Handler });
  ({ handler: receiveHandler } = (await import('../../functions/api/receive-url.js')) as { handler: Handler });
});
afterAll(() => {
  process.env = saved;
});

const HOST = 'abcdefghijklmnopqrstuvwxyz012345.lambda-url.us-east-1.on.aws';

/** A function-URL request event as Lambda delivers it (the fields of the documented sample). */
function urlEvent(method: string, rawPath: string, options: { query?: string; body?: unknown; contentType?: string; base64?: boolean } = {}): APIGatewayProxyEventV2 {
  const text = options.body === undefined ? undefined : typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
  const query = options.query ?? '';
  const event = {
    version: '2.0',
    routeKey: '$default',
    rawPath,
    rawQueryString: query,
    headers: {
      host: HOST,
      'x-amzn-tls-version': 'TLSv1.3',
      'x-forwarded-proto': 'https',
      'x-forwarded-port': '443',
      'x-forwarded-for': '203.0.113.7',
      'x-amz-date': '20261201T064000Z',
      'x-amzn-trace-id': 'Root=1-674c0000-000000000000000000000000',
      accept: 'application/json',
      'user-agent': 'sluice-client/test',
      ...(text !== undefined ? { 'content-type': options.contentType ?? 'application/json' } : {}),
    },
    ...(query ? { queryStringParameters: Object.fromEntries(new URLSearchParams(query)) } : {}),
    requestContext: {
      accountId: '123456789012',
      apiId: 'abcdefghijklmnopqrstuvwxyz012345',
      authorizer: {
        iam: {
          accessKey: 'AKIAIOSFODNN7EXAMPLE',
          accountId: '111122223333',
          callerId: 'AIDACKCEVSQ6C2EXAMPLE',
          cognitoIdentity: null,
          principalOrgId: null,
          userArn: 'arn:aws:iam::111122223333:user/queue-worker',
          userId: 'AIDACKCEVSQ6C2EXAMPLE',
        },
      },
      domainName: HOST,
      domainPrefix: 'abcdefghijklmnopqrstuvwxyz012345',
      http: { method, path: rawPath, protocol: 'HTTP/1.1', sourceIp: '203.0.113.7', userAgent: 'sluice-client/test' },
      requestId: 'c1d2e3f4-0000-4000-8000-000000000000',
      routeKey: '$default',
      stage: '$default',
      time: '01/Dec/2026:06:40:00 +0000',
      timeEpoch: 1_795_935_600_000,
    },
    ...(text !== undefined ? { body: options.base64 ? Buffer.from(text).toString('base64') : text } : {}),
    isBase64Encoded: options.base64 ?? false,
  };
  return event as unknown as APIGatewayProxyEventV2;
}

async function call(method: string, path: string, options: Parameters<typeof urlEvent>[2] = {}) {
  const result = await handler(urlEvent(method, path, options), lambdaContext('api', 'req'));
  return { status: result.statusCode, headers: result.headers ?? {}, body: result.body ? (JSON.parse(result.body) as Record<string, unknown>) : undefined };
}

describe('function-URL entry point', () => {
  it('has a handler for exactly the entries of the route table (one bundle serves them all)', async () => {
    const { routeHandlers } = await import('../../functions/api/route-handlers.js');
    const { routes } = await import('../../functions/api/routes.js');
    expect(Object.keys(routeHandlers).sort()).toEqual(routes.map((r) => r.entry).sort());
  });

  it('serves a whole lifecycle: topic, group, send, look-up by key, receive, commit', async () => {
    expect((await call('PUT', '/v1/topics/orders', { body: { type: 'standard' } })).status).toBe(200);
    expect((await call('PUT', '/v1/groups/billing', { body: { subscriptions: [{ topic: 'orders' }] } })).status).toBe(200);
    const sent = await call('POST', '/v1/topics/orders/messages', { body: { body: 'hello', keys: ['order-1'] } });
    expect(sent.status).toBe(201);
    const messageId = sent.body?.messageId as string;
    expect(sent.headers.location).toBe(`/v1/topics/orders/messages/${encodeURIComponent(messageId)}`);

    const byKey = await call('GET', '/v1/topics/orders/messages', { query: 'key=order-1' });
    expect(byKey.status).toBe(200);
    expect((byKey.body?.messages as Array<{ messageId: string }>).map((m) => m.messageId)).toEqual([messageId]);

    const received = await call('POST', '/v1/groups/billing/receive', { body: { maxMessages: 10, waitSeconds: 0 } });
    expect(received.status).toBe(200);
    const messages = received.body?.messages as Array<{ messageId: string; body: string; receiptHandle: string }>;
    expect(messages.map((m) => [m.messageId, m.body])).toEqual([[messageId, 'hello']]);

    const committed = await call('POST', '/v1/groups/billing/commit', { body: { entries: [{ receiptHandle: messages[0]!.receiptHandle }] } });
    expect(committed.status).toBe(200);
    expect(committed.body?.results).toEqual([{ receiptHandle: messages[0]!.receiptHandle, status: 'committed' }]);

    const group = await call('GET', '/v1/groups/billing');
    expect(group.status).toBe(200);
    expect(group.body).toMatchObject({ name: 'billing' });
  });

  it('decodes percent-encoded path parameters, as the HTTP API does', async () => {
    const sent = await call('POST', '/v1/topics/orders/messages', { body: { body: 'x' } });
    const messageId = sent.body?.messageId as string;
    const got = await call('GET', `/v1/topics/orders/messages/${encodeURIComponent(messageId)}`);
    expect(got.status).toBe(200);
    expect(got.body?.messageId).toBe(messageId);
    const missing = await call('GET', '/v1/topics/no%2Dsuch/messages/x');
    expect(missing.status).toBe(404);
  });

  it('answers an unknown path 404, a wrong method 405 with Allow, bad percent-encoding 400, as problem+json', async () => {
    const unknown = await call('GET', '/v2/topics');
    expect(unknown).toMatchObject({ status: 404, headers: { 'content-type': 'application/problem+json' }, body: { code: 'NotFound' } });
    const wrong = await call('PATCH', '/v1/groups/billing/receive', { body: {} });
    expect(wrong).toMatchObject({ status: 405, headers: { allow: 'POST' }, body: { code: 'MethodNotAllowed' } });
    const bad = await call('GET', '/v1/topics/%E0%A4%A');
    expect(bad).toMatchObject({ status: 400, body: { code: 'InvalidArgument' } });
  });

  it('refuses a body Lambda passed base64-encoded because it is not JSON (415), and changes nothing', async () => {
    const refused = await call('POST', '/v1/topics/orders/messages', { body: 'plain', contentType: 'text/plain', base64: true });
    expect(refused).toMatchObject({ status: 415, body: { code: 'UnsupportedMediaType' } });
    const before = await call('GET', '/v1/topics/orders');
    const receivedAfter = await call('POST', '/v1/groups/billing/receive', { body: { maxMessages: 10, waitSeconds: 0 } });
    expect(before.status).toBe(200);
    expect((receivedAfter.body?.messages as Array<{ body: string }>).map((m) => m.body)).toEqual(['x']);
  });

  it('answers GET /health and serves the OpenAPI document', async () => {
    expect(await call('GET', '/health')).toMatchObject({ status: 200, body: { status: 'ok' } });
    const doc = await call('GET', '/v1/openapi.json');
    expect(doc.status).toBe(200);
    expect(doc.body?.openapi).toMatch(/^3\.1/);
  });
});

describe("the receive function's own function URL (functions/api/receive-url.ts)", () => {
  async function callReceive(method: string, path: string, options: Parameters<typeof urlEvent>[2] = {}) {
    const result = await receiveHandler(urlEvent(method, path, options), lambdaContext('receive', 'req'));
    return { status: result.statusCode, headers: result.headers ?? {}, body: result.body ? (JSON.parse(result.body) as Record<string, unknown>) : undefined };
  }

  it('receives and carries commits as the api function does, on the same table', async () => {
    expect((await call('PUT', '/v1/topics/small', { body: { type: 'standard' } })).status).toBe(200);
    expect((await call('PUT', '/v1/groups/small-g', { body: { subscriptions: [{ topic: 'small' }] } })).status).toBe(200);
    const sent = await call('POST', '/v1/topics/small/messages', { body: { body: 'via receive-url' } });
    expect(sent.status).toBe(201);
    const first = await callReceive('POST', '/v1/groups/small-g/receive', { body: { maxMessages: 10, waitSeconds: 0 } });
    expect(first.status).toBe(200);
    const messages = first.body?.messages as Array<{ messageId: string; body: string; receiptHandle: string }>;
    expect(messages.map((m) => [m.messageId, m.body])).toEqual([[sent.body?.messageId, 'via receive-url']]);
    const second = await callReceive('POST', '/v1/groups/small-g/receive', { body: { maxMessages: 10, waitSeconds: 0, commit: [messages[0]!.receiptHandle] } });
    expect(second).toMatchObject({ status: 200, body: { messages: [], commitResults: [{ receiptHandle: messages[0]!.receiptHandle, status: 'committed' }] } });
  });

  it('answers every other route 404, another method on the receive path 405, bad input 400, as problem+json', async () => {
    expect(await callReceive('GET', '/v1/topics')).toMatchObject({ status: 404, headers: { 'content-type': 'application/problem+json' }, body: { code: 'NotFound' } });
    expect(await callReceive('POST', '/v1/topics/small/messages', { body: { body: 'no' } })).toMatchObject({ status: 404, body: { code: 'NotFound' } });
    expect(await callReceive('GET', '/v1/groups/small-g/receive')).toMatchObject({ status: 405, headers: { allow: 'POST' }, body: { code: 'MethodNotAllowed' } });
    expect(await callReceive('POST', '/v1/groups/small-g/receive', { body: { maxMessages: 0 } })).toMatchObject({ status: 400, body: { code: 'InvalidArgument' } });
    // Nothing was sent through it: the topic still has no message for the group.
    const after = await call('POST', '/v1/groups/small-g/receive', { body: { maxMessages: 10, waitSeconds: 0 } });
    expect(after.body?.messages).toEqual([]);
  });
});
