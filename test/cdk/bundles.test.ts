/**
 * Bundles every function for real (esbuild, as `cdk synth` does), copies each bundle out of
 * the repository so nothing resolves from node_modules, and loads it in a fresh Node process.
 * A few bundles are invoked against DynamoDB Local to prove the bundled AWS SDK works.
 */
import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import type { CfnFunction } from 'aws-cdk-lib/aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routes } from '../../functions/api/routes.js';
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

let outdir: string;
let bundlesDir: string;
let table: string;
let endpoint: string;
const bundles = new Map<string, string>();

beforeAll(async () => {
  ({ table, endpoint } = await testTable('cdk-bundles'));
  outdir = mkdtempSync(join(tmpdir(), 'sluice-cdk-'));
  bundlesDir = mkdtempSync(join(tmpdir(), 'sluice-bundles-'));
  const { app, stateless } = sluiceApp({ bundle: true, outdir });
  app.synth();
  const manifest = JSON.parse(readFileSync(join(outdir, `${stateless.artifactId}.assets.json`), 'utf8')) as {
    files: Record<string, { source: { path: string; packaging?: string } }>;
  };
  for (const [entry, fn] of stateless.service.functions) {
    const code = (fn.node.defaultChild as CfnFunction).code as CfnFunction.CodeProperty;
    const hash = stateless.resolve(code.s3Key).replace(/\.zip$/, '');
    const source = manifest.files[hash]?.source;
    if (!source) throw new Error(`no asset ${hash} for ${entry}`);
    expect(source.packaging).toBe('zip');
    const copy = join(bundlesDir, entry);
    cpSync(join(outdir, source.path), copy, { recursive: true });
    bundles.set(entry, copy);
  }
}, 180_000);

afterAll(() => {
  for (const dir of [outdir, bundlesDir]) if (dir) rmSync(dir, { recursive: true, force: true });
});

async function invoke(entry: string, event?: object): Promise<Invocation> {
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
      POWERTOOLS_SERVICE_NAME: 'sluice',
      POWERTOOLS_LOG_LEVEL: 'ERROR',
      NODE_OPTIONS: '--enable-source-maps',
      ...(event ? { INVOKE_EVENT: JSON.stringify(event) } : {}),
    },
    timeout: 30_000,
  });
  return JSON.parse(stdout) as Invocation;
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
  it('are one ESM file per function, with a source map, for every route', () => {
    expect([...bundles.keys()].sort()).toEqual(routes.map((r) => r.entry).sort());
    for (const dir of bundles.values()) {
      expect(existsSync(join(dir, 'index.mjs'))).toBe(true);
      expect(existsSync(join(dir, 'index.mjs.map'))).toBe(true);
      expect(readFileSync(join(dir, 'index.mjs'), 'utf8')).toMatch(/^import\{createRequire as \w+\}from"node:module";|^import { createRequire/);
    }
  });

  it.each(routes.map((r) => r.entry))('%s loads outside the repository and exports a handler', async (entry) => {
    expect(await invoke(entry)).toEqual({ loaded: true, result: null });
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
});
