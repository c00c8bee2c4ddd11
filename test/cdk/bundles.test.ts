/**
 * Bundles every function for real (esbuild, as `cdk synth` does), copies each bundle out of
 * the repository so nothing resolves from node_modules, and loads it in a fresh Node process.
 * A few bundles are invoked against DynamoDB Local to prove the bundled AWS SDK works; the
 * background handlers run there with the local timers (no AWS endpoints to reach).
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import type { CfnFunction } from 'aws-cdk-lib/aws-lambda';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routes } from '../../functions/api/routes.js';
import { createDynamoClients } from '../../lib/adapters/dynamodb/client.js';
import { activityKey } from '../../lib/adapters/dynamodb/topic-activity.js';
import { testTable } from '../helpers/stores.js';
import { sluiceApp } from './synth.js';

const run = promisify(execFile);

/** Imports the bundle, then optionally calls its handler with one event, like the Lambda runtime. */
const loader = `
const mod = await import(process.env.BUNDLE_URL);
if (typeof mod.handler !== 'function') throw new Error('the bundle exports no handler function');
const event = process.env.INVOKE_EVENT ? JSON.parse(process.env.INVOKE_EVENT) : undefined;
const context = { functionName: 'test', awsRequestId: 'req-1', getRemainingTimeInMillis: () => 15_000, callbackWaitsForEmptyEventLoop: false };
const result = event ? await mod.handler(event, context) : null;
process.stdout.write(JSON.stringify({ loaded: true, result }));
`;

interface Invocation {
  loaded: boolean;
  result: { statusCode: number; headers?: Record<string, string>; body?: string } | null;
}

/** The functions besides the API routes. */
const backgroundFunctions = ['timer-minute', 'timer-release', 'timer-sweep', 'check-sweep', 'check-worker', 'push-worker', 'group-metrics', 'dispatcher'];

const sqsEvent = (...bodies: string[]) => ({
  Records: bodies.map((body, i) => ({
    messageId: `m${i}`,
    receiptHandle: `r${i}`,
    body,
    attributes: {},
    messageAttributes: {},
    md5OfBody: '',
    eventSource: 'aws:sqs',
    eventSourceARN: 'arn:aws:sqs:us-east-1:123456789012:q',
    awsRegion: 'us-east-1',
  })),
});

let outdir: string;
let bundlesDir: string;
let table: string;
let endpoint: string;
const bundles = new Map<string, string>();
const secretsKey = randomBytes(32).toString('base64');

beforeAll(async () => {
  ({ table, endpoint } = await testTable('cdk-bundles'));
  outdir = mkdtempSync(join(tmpdir(), 'sluice-cdk-'));
  bundlesDir = mkdtempSync(join(tmpdir(), 'sluice-bundles-'));
  // Both entry points: the HTTP API's per-route functions, and the function URL's one `api` function.
  // One cloud assembly folder for both, read after each synthesis: the functions both have (the
  // background ones) are then bundled once, as CDK's asset cache does within one app (its key
  // includes the folder); each synthesis still stages and lists every function's asset.
  for (const entryPoint of ['httpApi', 'functionUrl'] as const) {
    const out = outdir;
    const { app, stateless } = sluiceApp({ bundle: true, outdir: out, entryPoint });
    app.synth();
    const manifest = JSON.parse(readFileSync(join(out, `${stateless.artifactId}.assets.json`), 'utf8')) as {
      files: Record<string, { source: { path: string; packaging?: string } }>;
    };
    for (const [name, fn] of stateless.service.functions) {
      // Both entry points have a `receive` function: the route's own handler, or receive alone behind a function URL.
      const entry = fn.handlerModule === 'api/receive-url' ? 'receive-url' : name;
      if (bundles.has(entry)) continue;
      const code = (fn.node.defaultChild as CfnFunction).code as CfnFunction.CodeProperty;
      const hash = stateless.resolve(code.s3Key).replace(/\.zip$/, '');
      const source = manifest.files[hash]?.source;
      if (!source) throw new Error(`no asset ${hash} for ${entry}`);
      expect(source.packaging).toBe('zip');
      const copy = join(bundlesDir, entry);
      cpSync(join(out, source.path), copy, { recursive: true });
      bundles.set(entry, copy);
    }
  }
  // esbuild runs once per function (40 for the HTTP API, 2 more for the function URL), through npx: a minute or more on a busy machine.
}, 900_000);

afterAll(() => {
  for (const dir of [outdir, bundlesDir]) if (dir) rmSync(dir, { recursive: true, force: true });
});

async function invoke(entry: string, event?: object): Promise<Invocation> {
  return (await invokeAny(entry, event)) as Invocation;
}

async function invokeAny(entry: string, event?: object): Promise<{ loaded: boolean; result: unknown }> {
  const dir = bundles.get(entry);
  if (!dir) throw new Error(`no bundle for ${entry}`);
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', loader], {
    cwd: dir,
    // Only what the Lambda configuration sets, plus DynamoDB Local: no developer credentials.
    env: {
      PATH: process.env.PATH ?? '',
      BUNDLE_URL: pathToFileURL(join(dir, 'index.mjs')).href,
      SLUICE_TABLE_NAME: table,
      DYNAMODB_ENDPOINT: endpoint,
      AWS_REGION: 'us-east-1',
      // What the one KMS key is to a deployment: every process opens the message-id key that the
      // first writer sealed (each process would draw its own local key otherwise).
      SLUICE_SECRETS_KEY: secretsKey,
      POWERTOOLS_SERVICE_NAME: 'sluice',
      POWERTOOLS_LOG_LEVEL: 'ERROR',
      NODE_OPTIONS: '--enable-source-maps',
      ...(event ? { INVOKE_EVENT: JSON.stringify(event) } : {}),
    },
    timeout: 30_000,
  });
  return JSON.parse(stdout) as { loaded: boolean; result: unknown };
}

const httpEvent = (method: string, path: string, routeKey: string, extra: { pathParameters?: Record<string, string>; body?: unknown } = {}) => ({
  version: '2.0',
  routeKey,
  rawPath: path,
  rawQueryString: '',
  headers: { 'content-type': 'application/json' },
  requestContext: {
    accountId: '123456789012',
    apiId: 'api',
    domainName: 'api.example',
    domainPrefix: 'api',
    http: { method, path, protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 'vitest' },
    requestId: 'req-1',
    routeKey,
    stage: '$default',
    time: '30/Nov/2026:12:00:00 +0000',
    timeEpoch: 0,
  },
  isBase64Encoded: false,
  ...(extra.pathParameters ? { pathParameters: extra.pathParameters } : {}),
  ...(extra.body !== undefined ? { body: JSON.stringify(extra.body) } : {}),
});

describe('Lambda bundles', () => {
  it('are one ESM file per function, with a source map, for every route, background and function-URL function', () => {
    expect([...bundles.keys()].sort()).toEqual([...routes.map((r) => r.entry), ...backgroundFunctions, 'api', 'receive-url'].sort());
    for (const dir of bundles.values()) {
      expect(existsSync(join(dir, 'index.mjs'))).toBe(true);
      expect(existsSync(join(dir, 'index.mjs.map'))).toBe(true);
      expect(readFileSync(join(dir, 'index.mjs'), 'utf8')).toMatch(/^import\{createRequire as \w+\}from"node:module";|^import { createRequire/);
    }
  });

  it.each([...routes.map((r) => r.entry), ...backgroundFunctions, 'api', 'receive-url'])('%s loads outside the repository and exports a handler', async (entry) => {
    expect(await invoke(entry)).toEqual({ loaded: true, result: null });
  });

  it('run the background handlers: sweeps, a minute schedule input, delay and check queue batches', async () => {
    expect(await invokeAny('timer-sweep', {})).toEqual({ loaded: true, result: { released: 0 } });
    expect(await invokeAny('check-sweep', {})).toEqual({ loaded: true, result: { dispatched: 0 } });
    expect(await invokeAny('group-metrics', {})).toEqual({ loaded: true, result: { groups: 0 } });
    const minute = Math.floor(Date.now() / 60_000) + 30;
    expect(await invokeAny('timer-minute', { kind: 'minute', minute })).toEqual({ loaded: true, result: { minute } });
    // A due wake-up with nothing to release succeeds; a malformed record alone is reported failed.
    const past = Math.floor(Date.now() / 60_000) - 1;
    const release = await invokeAny('timer-release', sqsEvent(JSON.stringify({ kind: 'release', minute: past, second: past * 60 + 1 }), '{"kind":"nope"}'));
    expect(release).toEqual({ loaded: true, result: { batchItemFailures: [{ itemIdentifier: 'm1' }] } });
    const check = await invokeAny('check-worker', sqsEvent(JSON.stringify({ transactionId: 't01KNOTATRANSACTION0000000' }), 'not json'));
    expect(check).toEqual({ loaded: true, result: { batchItemFailures: [{ itemIdentifier: 'm1' }] } });
  });

  it('run the dispatcher on a stream event: a flagged segment moves its topic activity', async () => {
    const image = { pk: { S: 'S#t:bundled-wake/p:0' }, sk: { S: '0000000000000001' }, n: { N: '1' }, m: { L: [{ M: { t: { S: 'bundled-wake' } } }] }, w: { N: '1' } };
    const event = { Records: [{ eventName: 'INSERT', eventSource: 'aws:dynamodb', dynamodb: { Keys: { pk: image.pk, sk: image.sk }, NewImage: image, SequenceNumber: '1', StreamViewType: 'NEW_IMAGE' } }] };
    expect(await invokeAny('dispatcher', event)).toEqual({ loaded: true, result: { batchItemFailures: [] } });
    const { doc } = createDynamoClients({ endpoint });
    const { Item } = await doc.send(new GetCommand({ TableName: table, Key: activityKey('bundled-wake'), ConsistentRead: true }));
    expect(Item?.at).toBeGreaterThan(Date.now() - 60_000);
  });

  it('answer requests: health, openapi, and a topic written then read through DynamoDB', async () => {
    const health = await invoke('health', httpEvent('GET', '/health', 'GET /health'));
    expect(health.result).toMatchObject({ statusCode: 200 });
    expect(JSON.parse(health.result?.body ?? '')).toEqual({ status: 'ok' });

    const openapi = await invoke('openapi', httpEvent('GET', '/v1/openapi.json', 'GET /v1/openapi.json'));
    expect(openapi.result?.statusCode).toBe(200);
    expect(JSON.parse(openapi.result?.body ?? '{}')).toMatchObject({ openapi: expect.stringMatching(/^3\.1/) });

    const topic = 'bundled';
    const put = await invoke(
      'put-topic',
      httpEvent('PUT', `/v1/topics/${topic}`, 'PUT /v1/topics/{topic}', { pathParameters: { topic }, body: { type: 'standard' } }),
    );
    expect(put.result?.statusCode).toBe(200);

    const list = await invoke('list-topics', httpEvent('GET', '/v1/topics', 'GET /v1/topics'));
    expect(list.result?.statusCode).toBe(200);
    expect(list.result?.body).toContain(`"${topic}"`);

    const get = await invoke('get-topic', httpEvent('GET', `/v1/topics/${topic}`, 'GET /v1/topics/{topic}', { pathParameters: { topic } }));
    expect(get.result?.statusCode).toBe(200);
    expect(JSON.parse(get.result?.body ?? '{}')).toMatchObject({ name: topic });
  });

  it('answer function-URL events through the one api bundle: routeKey $default, the route found from rawPath', async () => {
    const urlEvent = (method: string, path: string, body?: unknown) => ({
      ...httpEvent(method, path, '$default', body === undefined ? {} : { body }),
      requestContext: { ...httpEvent(method, path, '$default').requestContext, domainName: 'abc.lambda-url.us-east-1.on.aws', domainPrefix: 'abc', stage: '$default' },
    });
    const topic = 'bundled-url';
    const put = await invoke('api', urlEvent('PUT', `/v1/topics/${topic}`, { type: 'standard' }));
    expect(put.result?.statusCode).toBe(200);
    const get = await invoke('api', urlEvent('GET', `/v1/topics/${topic}`));
    expect(get.result?.statusCode).toBe(200);
    expect(JSON.parse(get.result?.body ?? '{}')).toMatchObject({ name: topic });
    const missing = await invoke('api', urlEvent('GET', '/v1/nothing'));
    expect(missing.result).toMatchObject({ statusCode: 404, headers: { 'content-type': 'application/problem+json' } });

    // The receive function's own URL: receive runs (an empty group answers no messages), every other route is 404.
    const group = 'bundled-url-g';
    expect((await invoke('api', urlEvent('PUT', `/v1/groups/${group}`, { subscriptions: [{ topic }] }))).result?.statusCode).toBe(200);
    const received = await invoke('receive-url', urlEvent('POST', `/v1/groups/${group}/receive`, { maxMessages: 1 }));
    expect(received.result?.statusCode).toBe(200);
    expect(JSON.parse(received.result?.body ?? '{}')).toEqual({ messages: [] });
    const other = await invoke('receive-url', urlEvent('GET', `/v1/topics/${topic}`));
    expect(other.result).toMatchObject({ statusCode: 404, headers: { 'content-type': 'application/problem+json' } });
  });
});
