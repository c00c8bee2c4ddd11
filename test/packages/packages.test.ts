/**
 * The published packages as a user gets them (issue 18): built and packed from this
 * repository, installed from the tarballs into a folder outside it, where nothing resolves
 * from this repository's node_modules (test/helpers/package-sandbox.ts). Against the local
 * runtime, started as the other e2e tests start it:
 *
 * (a) an ESM script sends, receives and commits with `SluiceClient` from @sluice/client,
 *     and TypeScript checks a user's files against the installed declarations;
 * (b) `npx sluice --help` and a CLI round trip, from @sluice/cli;
 * (c) a CDK app synthesizes `SluiceService` from @sluice/cdk with non-default props and the
 *     functions' prebuilt code: its template equals the one this repository's sources
 *     synthesize (the code assets aside), and every function's bundle loads.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dynamoEndpoint } from '../helpers/dynamo-endpoint.js';
import { SluiceService, type SluiceServiceProps } from '../../cdk/index.js';
import { SluiceClient } from '../../lib/client/index.js';
import type { LocalRuntime } from '../../local/runtime.js';
import { TOKEN, startRuntime } from '../helpers/local.js';
import { createSandbox, root, run, tested, userEnv, type Sandbox } from '../helpers/package-sandbox.js';

/** Non-default props, as plain JSON so the user's app and this test pass the same ones (14 = RetentionDays.TWO_WEEKS). */
const serviceProps = { namePrefix: 'pkgtest', memorySize: 1024, checkConcurrency: 5, pushConcurrency: 7, logRetention: 14 } as const satisfies SluiceServiceProps;

const clientScript = `
import { SluiceClient } from '@sluice/client';

const sluice = new SluiceClient({ endpoint: process.env.SLUICE_ENDPOINT, token: process.env.SLUICE_API_TOKEN });
await sluice.putTopic('pkg-orders', { type: 'standard' });
await sluice.putGroup('pkg-billing', { subscriptions: [{ topic: 'pkg-orders' }] });
const sent = await sluice.send('pkg-orders', { body: 'hello from @sluice/client', keys: ['pkg-1'] });
const messages = await sluice.receive('pkg-billing', { maxMessages: 10, waitSeconds: 5 });
const { results } = await sluice.commit('pkg-billing', messages.map((m) => m.receiptHandle));
console.log(JSON.stringify({
  resolvedFrom: import.meta.resolve('@sluice/client'),
  sent,
  received: messages.map(({ messageId, body }) => ({ messageId, body })),
  committed: results,
}));
`;

/** A user's TypeScript against the SDK's declarations (checked with skipLibCheck off). */
const clientTypes = `
import { SluiceApiError, SluiceClient, createCheckerHandler, type Delivered, type SendInput, type Topic } from '@sluice/client';

export async function roundTrip(client: SluiceClient): Promise<string[]> {
  const input: SendInput = { body: new Uint8Array([1, 2]), shardKey: 'c1', keys: ['k'] };
  await client.send('orders', input);
  const messages: Delivered[] = await client.receive('billing', { maxMessages: 10 });
  const topic: Topic = await client.putTopic('orders', { type: 'fifo' });
  return [...messages.map((m) => m.receiptHandle), topic.name];
}
export const notFound = (error: unknown) => error instanceof SluiceApiError && error.code === 'TopicNotFound';
export const checker = createCheckerHandler({ secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', check: () => 'commit' });
// @ts-expect-error the API has no 'lifo' topics: the declared types are the server's, not any
export const wrongType: Parameters<SluiceClient['putTopic']>[1] = { type: 'lifo' };
// @ts-expect-error a delivered message's body is a string
export const wrongBody: Delivered['body'] = 42;
`;

/** A user's CDK code against the construct's declarations. */
const cdkTypes = `
import { App, Stack } from 'aws-cdk-lib';
import { SluiceService, type SluiceServiceProps } from '@sluice/cdk';

const props: SluiceServiceProps = { namePrefix: 'typed', memorySize: 1024 };
export const url: string = new SluiceService(new Stack(new App(), 'Typed'), 'Queue', props).url;
// @ts-expect-error memorySize is a number of MB: the declared props are real, not any
export const wrongMemory: SluiceServiceProps = { memorySize: '1024' };
`;

const cdkApp = `
import { App, Stack } from 'aws-cdk-lib';
import { SluiceService } from '@sluice/cdk';

const app = new App({ outdir: 'cdk.out' });
const service = new SluiceService(new Stack(app, 'UserStack'), 'Queue', ${JSON.stringify(serviceProps)});
app.synth();
console.log(JSON.stringify({ resolvedFrom: import.meta.resolve('@sluice/cdk'), functions: [...service.functions.keys()] }));
`;

/** Imports every function's bundle, as Lambda would, and calls the health handler once. */
const bundleLoader = `
import { pathToFileURL } from 'node:url';
const loaded = {};
for (const [name, dir] of Object.entries(JSON.parse(process.env.BUNDLES))) {
  const mod = await import(pathToFileURL(dir + '/index.mjs').href);
  loaded[name] = typeof mod.handler;
}
// Behind the HTTP API each route has its function; behind the function URL (the default) one \`api\`
// function serves every path, and Lambda hands it the route key \`$default\`.
const bundles = JSON.parse(process.env.BUNDLES);
const routeKey = bundles.health ? 'GET /health' : '$default';
const health = await import(pathToFileURL((bundles.health ?? bundles.api) + '/index.mjs').href);
const answer = await health.handler(
  { version: '2.0', routeKey, rawPath: '/health', rawQueryString: '', headers: {}, isBase64Encoded: false,
    requestContext: { http: { method: 'GET', path: '/health', protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 'test' }, requestId: 'r1', routeKey, stage: '$default', timeEpoch: 0 } },
  { functionName: 'health', awsRequestId: 'r1', getRemainingTimeInMillis: () => 15000, callbackWaitsForEmptyEventLoop: false },
);
console.log(JSON.stringify({ loaded, health: { statusCode: answer.statusCode, body: answer.body } }));
`;

type Resource = { Type: string; Properties?: Record<string, any>; Metadata?: unknown };
type CfnTemplate = { Resources: Record<string, Resource> };

/** The template without what depends on where the code came from: asset keys and asset metadata. */
function withoutCodeAssets(template: CfnTemplate): CfnTemplate {
  const resources = Object.entries(template.Resources).map(([id, { Metadata: _metadata, ...resource }]) => {
    if (resource.Type !== 'AWS::Lambda::Function') return [id, resource];
    return [id, { ...resource, Properties: { ...resource.Properties, Code: { ...resource.Properties?.Code, S3Key: '<code asset>' } } }];
  });
  return { ...template, Resources: Object.fromEntries(resources) };
}

const functionsOf = (template: CfnTemplate) => Object.entries(template.Resources).filter(([, r]) => r.Type === 'AWS::Lambda::Function');

let sandbox: Sandbox;
let runtime: LocalRuntime;
let client: SluiceClient;
const seconds: Record<string, number> = {};

const inSandbox = (command: string, args: string[], timeoutMs = 120_000, env: Record<string, string> = {}) =>
  run(command, args, { cwd: sandbox.dir, env: userEnv({ SLUICE_ENDPOINT: runtime.url, SLUICE_API_TOKEN: TOKEN, ...env }), timeoutMs });
const sluice = (...args: string[]) => inSandbox('npx', ['sluice', ...args], 60_000);

beforeAll(async () => {
  runtime = await startRuntime();
  client = new SluiceClient({ endpoint: runtime.url, token: TOKEN });
  sandbox = await createSandbox([tested('aws-cdk-lib'), tested('constructs'), tested('@types/node')]);
  Object.assign(seconds, sandbox.seconds);
  for (const [file, text] of Object.entries({
    'client.mjs': clientScript,
    'client-types.ts': clientTypes,
    'cdk-types.ts': cdkTypes,
    'app.mjs': cdkApp,
    'load-bundles.mjs': bundleLoader,
  })) {
    writeFileSync(join(sandbox.dir, file), text);
  }
}, 15 * 60_000);

afterAll(async () => {
  sandbox?.remove();
  await runtime?.stop();
  const sizes = sandbox?.tarballs.map((t) => `${t.name} ${(t.size / 1024).toFixed(1)} KiB packed, ${(t.unpackedSize / 1024).toFixed(1)} KiB unpacked, ${t.entryCount} files`);
  console.log(`package test: ${Object.entries(seconds).map(([step, s]) => `${step} ${s.toFixed(1)} s`).join(', ')}\n${sizes?.join('\n')}`);
});

describe('@sluice/client', () => {
  it('(a) an ESM script sends, receives and commits with SluiceClient, loaded from the installed package', async () => {
    const result = await inSandbox(process.execPath, ['client.mjs'], 60_000);
    seconds.client = result.ms / 1000;
    expect(result.code, result.stderr).toBe(0);
    const out = JSON.parse(result.stdout) as {
      resolvedFrom: string;
      sent: { messageId: string; state: string };
      received: Array<{ messageId: string; body: string }>;
      committed: Array<{ status?: string }>;
    };
    expect(out.resolvedFrom).toBe(pathToFileURL(join(sandbox.dir, 'node_modules/@sluice/client/dist/index.js')).href);
    expect(out.sent.state).toBe('deliverable');
    expect(out.received).toEqual([{ messageId: out.sent.messageId, body: 'hello from @sluice/client' }]);
    expect(out.committed).toEqual([expect.objectContaining({ status: 'committed' })]);
    const detail = await client.getMessage('pkg-orders', out.sent.messageId);
    expect(detail.groups).toEqual([expect.objectContaining({ group: 'pkg-billing', state: 'committed' })]);
  }, 120_000);

  it('type-checks a user’s TypeScript against the installed declarations (SDK without skipLibCheck, construct with it)', async () => {
    // The compiler is this repository's; what it checks resolves from the sandbox only.
    const tsc = join(root, 'node_modules/typescript/bin/tsc');
    const flags = ['--noEmit', '--strict', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--target', 'es2022', '--types', 'node'];
    const [sdk, construct] = await Promise.all([
      inSandbox(process.execPath, [tsc, ...flags, '--skipLibCheck', 'false', 'client-types.ts'], 180_000),
      inSandbox(process.execPath, [tsc, ...flags, '--skipLibCheck', 'true', 'cdk-types.ts'], 180_000),
    ]);
    seconds.typecheck = Math.max(sdk.ms, construct.ms) / 1000;
    expect(sdk.stdout + sdk.stderr).toBe('');
    expect(sdk.code).toBe(0);
    expect(construct.stdout + construct.stderr).toBe('');
    expect(construct.code).toBe(0);
  }, 240_000);
});

describe('@sluice/cli', () => {
  it('(b) npx sluice --help, then a topic, a group, a send, a receive and a commit', async () => {
    expect(existsSync(join(sandbox.dir, 'node_modules/.bin/sluice'))).toBe(true);
    const help = await sluice('--help');
    expect(help.code, help.stderr).toBe(0);
    expect(help.stdout).toMatch(/^Usage: sluice \[options\] \[command\]/m);

    const started = performance.now();
    expect((await sluice('topics', 'put', 'pkg-cli')).code).toBe(0);
    expect((await sluice('groups', 'put', 'pkg-cli-group', '--subscribe', 'pkg-cli')).code).toBe(0);
    const sent = await sluice('--json', 'send', 'pkg-cli', 'hello from @sluice/cli', '--key', 'pkg-cli-1');
    expect(sent.code, sent.stderr).toBe(0);
    const { messageId } = JSON.parse(sent.stdout) as { messageId: string };
    const received = await sluice('--json', 'receive', 'pkg-cli-group', '--max', '10', '--wait', '5');
    expect(received.code, received.stderr).toBe(0);
    const { messages } = JSON.parse(received.stdout) as { messages: Array<{ messageId: string; body: string; receiptHandle: string }> };
    expect(messages.map(({ messageId: id, body }) => ({ id, body }))).toEqual([{ id: messageId, body: 'hello from @sluice/cli' }]);
    const committed = await sluice('commit', 'pkg-cli-group', messages[0]?.receiptHandle ?? '');
    expect(committed.code, committed.stderr).toBe(0);
    seconds.cli = (performance.now() - started) / 1000;

    const detail = await client.getMessage('pkg-cli', messageId);
    expect(detail.groups).toEqual([expect.objectContaining({ group: 'pkg-cli-group', state: 'committed' })]);
  }, 180_000);
});

describe('@sluice/cdk', () => {
  let template: CfnTemplate;
  let bundles: Record<string, string>;

  it('(c) synthesizes SluiceService with non-default props, without esbuild: the template this repository synthesizes', async () => {
    expect(existsSync(join(sandbox.dir, 'node_modules/esbuild'))).toBe(false);
    const synthesis = inSandbox(process.execPath, ['app.mjs'], 300_000);
    // Meanwhile, the same service from this repository's sources (its code bundled at synth time, skipped here).
    const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
    const stack = new Stack(app, 'UserStack');
    const service = new SluiceService(stack, 'Queue', serviceProps);
    const expected = Template.fromStack(stack).toJSON() as CfnTemplate;

    const synth = await synthesis;
    seconds.synth = synth.ms / 1000;
    expect(synth.code, synth.stderr).toBe(0);
    const out = JSON.parse(synth.stdout) as { resolvedFrom: string; functions: string[] };
    expect(out.resolvedFrom).toBe(pathToFileURL(join(sandbox.dir, 'node_modules/@sluice/cdk/dist/index.js')).href);
    template = JSON.parse(readFileSync(join(sandbox.dir, 'cdk.out/UserStack.template.json'), 'utf8')) as CfnTemplate;

    const functions = functionsOf(template);
    expect(functions).toHaveLength(service.functions.size);
    expect(out.functions.sort()).toEqual([...service.functions.keys()].sort());
    for (const [, fn] of functions) {
      expect(fn.Properties).toMatchObject({ Runtime: 'nodejs22.x', Architectures: ['arm64'], Handler: 'index.handler', MemorySize: 1024 });
      expect(fn.Properties?.FunctionName).toMatch(/^pkgtest-/);
    }
    // The check worker's and the push worker's queues: each mapping bounded by its prop.
    const workers = Object.values(template.Resources).filter((r) => r.Type === 'AWS::Lambda::EventSourceMapping' && r.Properties?.ScalingConfig);
    expect(workers.map((r) => (r.Properties?.ScalingConfig as { MaximumConcurrency: number }).MaximumConcurrency).sort()).toEqual([5, 7]);
    const logGroups = Object.values(template.Resources).filter((r) => r.Type === 'AWS::Logs::LogGroup');
    expect(new Set(logGroups.map((r) => r.Properties?.RetentionInDays))).toEqual(new Set([14]));

    // Everything but the code assets is what the sources make: functions, handlers, environment, grants.
    expect(withoutCodeAssets(template)).toEqual(withoutCodeAssets(expected));
  }, 360_000);

  it('ships every function prebuilt: each asset is an ESM bundle with its source map, and each loads and exports a handler', async () => {
    expect(template, 'the synthesis above failed').toBeDefined();
    const assets = JSON.parse(readFileSync(join(sandbox.dir, 'cdk.out/UserStack.assets.json'), 'utf8')) as {
      files: Record<string, { source: { path: string; packaging?: string } }>;
    };
    bundles = {};
    for (const [, fn] of functionsOf(template)) {
      const name = String(fn.Properties?.FunctionName).replace(/^pkgtest-/, '');
      const hash = String(fn.Properties?.Code?.S3Key).replace(/\.zip$/, '');
      const source = assets.files[hash]?.source;
      expect(source?.packaging, name).toBe('zip');
      const dir = join(sandbox.dir, 'cdk.out', source?.path ?? '');
      expect(existsSync(join(dir, 'index.mjs')), name).toBe(true);
      expect(existsSync(join(dir, 'index.mjs.map')), name).toBe(true);
      bundles[name] = dir;
    }
    const loaded = await inSandbox(process.execPath, ['load-bundles.mjs'], 180_000, {
      BUNDLES: JSON.stringify(bundles),
      SLUICE_TABLE_NAME: 'pkg-bundles',
      DYNAMODB_ENDPOINT: dynamoEndpoint(),
      AWS_REGION: 'us-east-1',
      POWERTOOLS_LOG_LEVEL: 'ERROR',
    });
    seconds.bundles = loaded.ms / 1000;
    expect(loaded.code, loaded.stderr).toBe(0);
    const out = JSON.parse(loaded.stdout) as { loaded: Record<string, string>; health: { statusCode: number; body: string } };
    expect(out.loaded).toEqual(Object.fromEntries(Object.keys(bundles).map((name) => [name, 'function'])));
    expect(out.health).toEqual({ statusCode: 200, body: JSON.stringify({ status: 'ok' }) });
  }, 240_000);
});
