/**
 * Security (issue 9): authentication on every route, method and odd path but
 * /health; SSRF attempts on checker URLs (private IPv4/IPv6 ranges, names that
 * resolve to them, redirects); and no secret or bearer token in the logs of a
 * runtime process that creates producer groups, rotates secrets and checks back.
 */
import { randomBytes } from 'node:crypto';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { hostname } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dynamoEndpoint } from '../helpers/dynamo-endpoint.js';
import { routes } from '../../functions/api/routes.js';
import { HttpWebhookClient } from '../../lib/adapters/http/webhook-client.js';
import { addressProblem, checkerUrlProblem } from '../../lib/domain/ssrf.js';
import type { LocalRuntime } from '../../local/runtime.js';
import { startChecker } from '../helpers/checker.js';
import { startRuntime, TOKEN } from '../helpers/local.js';
import { spawnRuntime } from '../helpers/process.js';
import { tableName } from '../helpers/stores.js';
import { Http, sleep } from './support.js';

let runtime: LocalRuntime;
const figures: Record<string, number> = {};

beforeAll(async () => {
  runtime = await startRuntime({ checkbackEverySeconds: 1 });
});
afterAll(async () => {
  console.log(`security: ${JSON.stringify(figures)}`);
  await runtime?.stop();
});

/** A request with the path sent exactly as written (fetch would normalise `..` and friends). */
function rawRequest(method: string, path: string, headers: Record<string, string | string[]> = {}, body?: string) {
  const { hostname: host, port } = new URL(runtime.url);
  return new Promise<{ status: number; headers: Record<string, unknown>; body: string }>((resolve, reject) => {
    const req = httpRequest({ host, port, method, path, headers: { ...headers, ...(body ? { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) } : {}) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.setTimeout(10_000, () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end(body);
  });
}

describe('authentication on every route, method and path but /health', () => {
  const wrongCredentials: Array<Record<string, string | string[]>> = [
    {},
    { authorization: '' },
    { authorization: 'Bearer' },
    { authorization: 'Bearer ' },
    { authorization: 'Bearer wrong-token' },
    { authorization: `Bearer ${TOKEN}x` },
    { authorization: `Bearer ${TOKEN.slice(0, -1)}` },
    { authorization: `Bearer  ${TOKEN}` },
    { authorization: `${TOKEN}` },
    { authorization: `Basic ${Buffer.from(`user:${TOKEN}`).toString('base64')}` },
    { authorization: `Bearer ${TOKEN.toUpperCase()}` },
    { 'x-api-key': TOKEN },
    { cookie: `token=${TOKEN}` },
  ];
  const methods = ['GET', 'PUT', 'POST', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD'];
  const paths = [
    ...routes.filter((r) => r.auth).map((r) => r.path.replace(/\{\w+\}/g, 'does-not-exist')),
    ...routes.filter((r) => r.auth).map((r) => r.path.replace(/\{\w+\}/g, 'orders')),
    '/',
    '/v1',
    '/v1/',
    '/v1/topics/',
    '//v1/topics',
    '//%23%7B%3Ax/batch', // '//' then something that is not a valid host
    '//v1/..',
    '//[bad/v1/topics',
    '/V1/TOPICS',
    '/v1/topics/../groups',
    '/health/../v1/topics',
    '/health/',
    '/health/x',
    '/health%2F..%2Fv1%2Ftopics',
    '/%2e%2e/v1/topics',
    '/v1/topics;x',
    '/v1/topics%00',
    '/v1/topics/a%2Fb',
    '/v1/nothing',
    '/v1/openapi.json',
    '/v1/topics?limit=1',
    `/${'x'.repeat(5000)}`,
    '*',
  ];

  it('answers 401 problem+json with WWW-Authenticate to every unauthenticated or wrongly authenticated request', async () => {
    let count = 0;
    const failures: string[] = [];
    for (const path of paths) {
      for (const method of methods) {
        for (const headers of wrongCredentials) {
          const body = method === 'GET' || method === 'HEAD' ? undefined : '{not json';
          const res = await rawRequest(method, path, headers, body);
          count++;
          const problem = method === 'HEAD' || (() => {
            try {
              return (JSON.parse(res.body) as { code?: string }).code === 'Unauthorized';
            } catch {
              return false;
            }
          })();
          // `*` is not a path a Node server routes: it answers 400 itself before any handler — also no access.
          // GET and HEAD of `/` redirect to the web console, whose files hold no data (test/integration/console-serve.test.ts).
          const consoleRedirect = path === '/' && (method === 'GET' || method === 'HEAD');
          const ok = path === '*' ? res.status === 400 || res.status === 401
            : consoleRedirect ? res.status === 302 && res.headers.location === '/console'
            : res.status === 401 && problem && String(res.headers['www-authenticate']).startsWith('Bearer');
          if (!ok && failures.length < 20) failures.push(`${method} ${path} ${JSON.stringify(headers)} → ${res.status} ${res.body.slice(0, 200)}`);
        }
      }
    }
    figures.unauthenticatedRequests = count;
    expect(failures).toEqual([]);
  }, 300_000);

  it('answers /health without a token, and only /health', async () => {
    expect((await rawRequest('GET', '/health')).status).toBe(200);
    expect((await rawRequest('GET', '/health?verbose=1')).status).toBe(200);
    expect((await rawRequest('GET', '/health', { authorization: 'Bearer wrong' })).status).toBe(200);
    // A public path: other methods are 405 there, which tells nothing about anything else.
    expect((await rawRequest('POST', '/health', {}, '{}')).status).toBe(405);
  });

  it('does not leak whether a resource exists to an unauthenticated caller', async () => {
    const http = new Http(runtime.url, TOKEN);
    await http.call('PUT', '/v1/topics/secret-topic', { type: 'standard' });
    const existing = await rawRequest('GET', '/v1/topics/secret-topic');
    const missing = await rawRequest('GET', '/v1/topics/no-such-topic');
    expect(existing.status).toBe(401);
    expect(missing.status).toBe(401);
    expect(existing.body).toBe(missing.body);
  });
});

describe('SSRF on checker URLs', () => {
  const privateUrls = [
    'https://10.0.0.1/check',
    'https://10.255.255.255/',
    'https://172.16.0.1/',
    'https://172.31.255.254/',
    'https://192.168.0.1/',
    'https://169.254.169.254/latest/meta-data/',
    'https://100.64.0.1/',
    'https://0.0.0.0/',
    'https://192.0.0.1/',
    'https://198.18.0.1/',
    'https://224.0.0.1/',
    'https://255.255.255.255/',
    'https://10.1/', // short form of 10.0.0.1
    'https://0xa9fea9fe/', // 169.254.169.254 in hex
    'https://2852039166/', // 169.254.169.254 in decimal
    'https://0251.0376.0251.0376/', // in octal
    'https://[fd00::1]/',
    'https://[fc00::1]/',
    'https://[fe80::1]/',
    'https://[::]/',
    'https://[ff02::1]/',
    'https://[::ffff:10.0.0.1]/', // IPv4-mapped
    'https://[::ffff:169.254.169.254]/',
    'https://[0:0:0:0:0:ffff:a9fe:a9fe]/',
    'https://[::10.0.0.1]/', // IPv4-compatible (deprecated)
    'https://[::ffff:0:a9fe:a9fe]/', // IPv4-translated
    'https://[64:ff9b::a9fe:a9fe]/', // NAT64
    'https://[2002:a9fe:a9fe::1]/', // 6to4 of 169.254.169.254
    'https://[2001:db8::1]/',
    'http://169.254.169.254/',
    'https://user:pass@example.com/',
    'ftp://example.com/',
    'file:///etc/passwd',
    'gopher://127.0.0.1:6379/_INFO',
    'https://[fd00::1%25eth0]/',
  ];

  it('refuses private, link-local, reserved and embedded-IPv4 addresses when a producer group is saved', async () => {
    const http = new Http(runtime.url, TOKEN);
    const failures: string[] = [];
    for (const checkerUrl of privateUrls) {
      const res = await http.call('PUT', '/v1/producers/evil', { checkerUrl });
      if (res.status !== 400 || res.body.code !== 'InvalidArgument' || res.body.errors?.[0]?.path !== 'checkerUrl') failures.push(`${checkerUrl} → ${res.status} ${JSON.stringify(res.body)}`);
    }
    expect(failures).toEqual([]);
    expect((await http.call('GET', '/v1/producers/evil')).status).toBe(404);
    figures.ssrfUrls = privateUrls.length;
  });

  it('refuses the same on AWS (no loopback), also for names that resolve to loopback, and at call time', async () => {
    const aws = { allowLoopback: false };
    const client = new HttpWebhookClient(aws);
    let hits = 0;
    const server: Server = createServer((_req, res) => {
      hits++;
      res.end('{"status":"commit"}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    const port = (server.address() as AddressInfo).port;
    try {
      // This machine's own name (and localhost) resolve to 127.0.0.1 through /etc/hosts.
      for (const name of [hostname(), 'localhost', 'LOCALHOST', 'x.localhost', '127.0.0.1', '[::1]', '[::ffff:127.0.0.1]', '127.1', '0x7f000001']) {
        const url = `https://${name}:${port}/check`;
        await expect(client.vet(url), url).rejects.toThrow();
        await expect(client.post(url, {}, '{}', 1000), url).rejects.toThrow();
      }
      for (const url of privateUrls) expect(checkerUrlProblem(url, aws) ?? (await client.vet(url).then(() => 'allowed', () => 'refused')), url).not.toBe('allowed');
      for (const address of ['127.0.0.1', '::1', '::ffff:127.0.0.1', '10.0.0.1', '169.254.169.254', 'fe80::1', '::ffff:a9fe:a9fe', '::a9fe:a9fe', '2002:7f00:1::']) {
        expect(addressProblem(address, aws), address).toBeDefined();
      }
      expect(addressProblem('93.184.216.34', aws)).toBeUndefined();
      expect(addressProblem('2606:2800:220:1:248:1893:25c8:1946', aws)).toBeUndefined();
      expect(hits).toBe(0);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it('never follows a redirect from a checker to an internal address', async () => {
    let internalHits = 0;
    const internal: Server = createServer((_req, res) => {
      internalHits++;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"status":"commit"}');
    });
    await new Promise<void>((resolve) => internal.listen(0, '127.0.0.1', () => resolve()));
    const internalUrl = `http://127.0.0.1:${(internal.address() as AddressInfo).port}/admin`;
    const redirects: Server = createServer((_req, res) => {
      res.writeHead(302, { location: internalUrl });
      res.end();
    });
    await new Promise<void>((resolve) => redirects.listen(0, '127.0.0.1', () => resolve()));
    const http = new Http(runtime.url, TOKEN);
    try {
      await http.call('PUT', '/v1/topics/tx', { type: 'standard' });
      for (const target of ['169.254.169.254', internalUrl]) {
        const location = target.startsWith('http') ? target : `http://${target}/latest/meta-data/`;
        redirects.removeAllListeners('request');
        redirects.on('request', (_req, res) => {
          res.writeHead(302, { location });
          res.end();
        });
        const name = target.startsWith('http') ? 'redirect-internal' : 'redirect-metadata';
        const checkerUrl = `http://127.0.0.1:${(redirects.address() as AddressInfo).port}/check`;
        expect((await http.call('PUT', `/v1/producers/${name}`, { checkerUrl, checkIntervalSeconds: 1, maxChecks: 2, onMaxChecks: 'rollback' })).status).toBe(200);
        const sent = await http.call('POST', '/v1/topics/tx/messages', { body: 'x', transaction: { producerGroup: name, checkAfterSeconds: 1 } });
        let view: any;
        for (let i = 0; i < 60; i++) {
          view = (await http.call('GET', `/v1/transactions/${sent.body.transactionId}`)).body;
          if (view.state !== 'prepared') break;
          await sleep(500);
        }
        // Two checks, each answered 302 and counted unknown; then onMaxChecks rolled it back.
        expect(view).toMatchObject({ state: 'rolled-back', resolvedBy: 'onMaxChecks' });
        expect(view.checks.map((c: { status: string; httpStatus: number }) => [c.status, c.httpStatus])).toEqual([
          ['unknown', 302],
          ['unknown', 302],
        ]);
      }
      expect(internalHits).toBe(0);
      figures.redirectsRefused = 4;
    } finally {
      await new Promise<void>((resolve) => redirects.close(() => resolve()));
      await new Promise<void>((resolve) => internal.close(() => resolve()));
    }
  }, 90_000);
});

describe('secrets stay out of the logs', () => {
  it('logs no signing secret and no bearer token while producer groups are created, rotated and checked back', async () => {
    const token = `tok_${randomBytes(18).toString('hex')}`;
    const proc = await spawnRuntime({
      endpoint: dynamoEndpoint(),
      table: tableName('secrets'),
      token,
      // As verbose as it gets: whatever the runtime logs at any level is in the captured output.
      env: { POWERTOOLS_LOG_LEVEL: 'DEBUG', SLUICE_CHECKBACK_EVERY_SECONDS: '1', SLUICE_SECRETS_KEY: randomBytes(32).toString('base64'), SLUICE_DATA_DIR: `/tmp/sluice-secrets-${process.pid}` },
    });
    const secrets: string[] = [];
    const answers = ['commit', 'rollback', { http: 500 }, { sleepMs: 300, then: 'commit' }] as const;
    let n = 0;
    const checker = await startChecker(() => answers[n++ % answers.length]!);
    const http = new Http(proc.url, token);
    try {
      await http.call('PUT', '/v1/topics/orders', { type: 'fifo' });
      await http.call('PUT', '/v1/groups/billing', { subscriptions: [{ topic: 'orders' }] });
      for (const name of ['shop', 'bank']) {
        const res = await http.call('PUT', `/v1/producers/${name}`, { checkerUrl: checker.url, checkIntervalSeconds: 1, maxChecks: 3 });
        secrets.push(res.body.signingSecret);
        for (let r = 0; r < 2; r++) secrets.push((await http.call('POST', `/v1/producers/${name}/rotate-secret`, undefined)).body.signingSecret);
      }
      checker.secrets = secrets;
      // A producer group whose checker is down: failed calls are logged (without secrets).
      await http.call('PUT', '/v1/producers/down', { checkerUrl: 'http://127.0.0.1:9/checks', checkIntervalSeconds: 1, maxChecks: 2 });
      const ids: string[] = [];
      for (let i = 0; i < 8; i++) {
        const group = ['shop', 'bank', 'down'][i % 3];
        const sent = await http.call('POST', '/v1/topics/orders/messages', { body: `m${i}`, shardKey: `k${i}`, transaction: { producerGroup: group, checkAfterSeconds: 1 } });
        ids.push(sent.body.transactionId);
      }
      // Wrong tokens and bad requests are logged too, if anything is.
      const intruder = new Http(proc.url, `${token}-wrong`);
      await intruder.once('GET', '/v1/topics');
      await http.once('POST', '/v1/topics/orders/messages', '{"body":');
      for (let i = 0; i < 60; i++) {
        const states = await Promise.all(ids.map(async (id) => (await http.call('GET', `/v1/transactions/${id}`)).body.state));
        if (states.every((s) => s !== 'prepared')) break;
        await sleep(500);
      }
      expect(checker.calls.length).toBeGreaterThan(0);
      expect(checker.calls.every((c) => c.verified)).toBe(true);
    } finally {
      await proc.kill('SIGTERM');
      await checker.close();
    }
    const output = proc.output();
    figures.logBytes = output.length;
    figures.secretsIssued = secrets.length;
    expect(secrets.every((s) => s.startsWith('whsec_'))).toBe(true);
    expect(output).not.toContain('whsec_');
    for (const secret of secrets) expect(output).not.toContain(secret.slice('whsec_'.length));
    expect(output).not.toContain(token);
    expect(output.toLowerCase()).not.toContain('bearer tok_');
  }, 120_000);
});
