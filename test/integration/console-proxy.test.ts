/**
 * `sluice console`: the loopback server passes the console's API calls on to the endpoint signed
 * with SigV4 (the SDK's signer), and the browser sees no credential. The endpoint here is a local
 * stand-in that checks the signature by signing the request it received again.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, request, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConsoleAssets } from '../../console/assets.js';
import { ConsoleProxyBindError, startConsoleProxy, type ConsoleProxy } from '../../console/proxy.js';
import { SigV4Signer } from '../../lib/client/sigv4.js';
import { HttpTransport } from '../../lib/client/transport.js';

const CREDENTIALS = { accessKeyId: 'AKIDCONSOLETEST', secretAccessKey: 'console-secret-key-never-in-browser', sessionToken: 'console-session-token' };
const REGION = 'eu-west-1';

interface Seen {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** The signature the stand-in computes for what it received. */
  expected?: string;
}

/** The deployed stack's stand-in: answers JSON, remembers every request and the signature it should carry. */
async function startStandIn(): Promise<{ url: string; seen: Seen[]; server: Server }> {
  const seen: Seen[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        const body = Buffer.concat(chunks).toString('utf8');
        const entry: Seen = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body };
        const auth = String(req.headers.authorization ?? '');
        const signedNames = /SignedHeaders=([^,]+)/.exec(auth)?.[1]?.split(';') ?? [];
        const amzDate = String(req.headers['x-amz-date'] ?? '');
        if (signedNames.length && amzDate) {
          const headers: Record<string, string> = {};
          for (const name of signedNames) if (name !== 'host') headers[name] = String(req.headers[name]);
          const date = new Date(amzDate.replace(/^(\d{4})(\d\d)(\d\d)T(\d\d)(\d\d)(\d\d)Z$/, '$1-$2-$3T$4:$5:$6Z'));
          const url = new URL(`http://${req.headers.host}${req.url}`);
          const signed = await new SigV4Signer({ region: REGION, credentials: CREDENTIALS }).sign({ method: entry.method, url, headers, ...(body ? { body } : {}) }, date);
          entry.expected = signed.authorization;
        }
        seen.push(entry);
        // A stand-in that (wrongly) echoes credential headers: the console server must not pass them back.
        res.writeHead(entry.path.startsWith('/v1/missing') ? 404 : 200, {
          'content-type': entry.path.startsWith('/v1/missing') ? 'application/problem+json' : 'application/json',
          'x-request-id': 'req-1',
          'x-amz-security-token': String(req.headers['x-amz-security-token'] ?? ''),
          'set-cookie': 'session=stand-in',
        });
        res.end(JSON.stringify(entry.path.startsWith('/v1/missing') ? { code: 'TopicNotFound', status: 404, detail: 'no such topic' } : { topics: [], nextToken: null }));
      })();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen, server };
}

function raw(base: string, method: string, path: string, headers: Record<string, string> = {}, body?: string) {
  return new Promise<{ status: number; headers: IncomingHttpHeaders; body: string }>((resolve, reject) => {
    const req = request(`${base}${path}`, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const leaks = (text: string) => [CREDENTIALS.secretAccessKey, CREDENTIALS.sessionToken, 'AWS4-HMAC-SHA256'].filter((secret) => text.includes(secret));

describe('sluice console (the signing server)', () => {
  let standIn: Awaited<ReturnType<typeof startStandIn>>;
  let proxy: ConsoleProxy;
  beforeAll(async () => {
    standIn = await startStandIn();
    const transport = new HttpTransport({ endpoint: standIn.url, auth: 'sigv4', region: REGION, credentials: CREDENTIALS });
    proxy = await startConsoleProxy({ transport, assets: await loadConsoleAssets() });
  });
  afterAll(async () => {
    await proxy.stop();
    await new Promise<void>((resolve) => standIn.server.close(() => resolve()));
  });

  it('signs each API call with SigV4, keeps the browser\'s own credentials back, and passes the answer on without credentials', async () => {
    const before = standIn.seen.length;
    const body = JSON.stringify({ type: 'standard' });
    const res = await raw(proxy.url, 'PUT', '/v1/topics/orders?x=1', {
      'content-type': 'application/json',
      authorization: 'Bearer from-the-browser',
      cookie: 'browser=1',
      origin: proxy.url,
      'sec-fetch-site': 'same-origin',
    }, body);
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body)).toEqual({ topics: [], nextToken: null });
    expect(res.headers['x-request-id']).toBe('req-1');
    expect(res.headers['x-amz-security-token']).toBeUndefined();
    expect(res.headers['set-cookie']).toBeUndefined();
    expect(leaks(JSON.stringify(res.headers) + res.body)).toEqual([]);

    expect(standIn.seen.length).toBe(before + 1);
    const got = standIn.seen[before]!;
    expect(got.method).toBe('PUT');
    expect(got.path).toBe('/v1/topics/orders?x=1');
    expect(got.body).toBe(body);
    expect(String(got.headers.authorization)).toMatch(new RegExp(`^AWS4-HMAC-SHA256 Credential=AKIDCONSOLETEST/\\d{8}/${REGION}/execute-api/aws4_request, SignedHeaders=\\S*host\\S*, Signature=[0-9a-f]{64}$`));
    expect(got.headers.authorization).toBe(got.expected);
    expect(got.headers['x-amz-security-token']).toBe(CREDENTIALS.sessionToken);
    expect(got.headers.cookie).toBeUndefined();
    expect(got.headers.origin).toBeUndefined();
  });

  it('passes a problem answer on as it is', async () => {
    const res = await raw(proxy.url, 'GET', '/v1/missing', { accept: 'application/json' });
    expect(res.status).toBe(404);
    expect(res.headers['content-type']).toBe('application/problem+json');
    expect(JSON.parse(res.body).code).toBe('TopicNotFound');
  });

  it('serves the console\'s files itself, and the page holds no credential', async () => {
    const before = standIn.seen.length;
    for (const path of ['/console', '/console/app.js', '/console/app.css']) {
      const res = await raw(proxy.url, 'GET', path);
      expect(res.status, path).toBe(200);
      expect(leaks(res.body), path).toEqual([]);
      expect(res.body, path).not.toContain(CREDENTIALS.accessKeyId);
    }
    expect((await raw(proxy.url, 'GET', '/')).headers.location).toBe('/console');
    expect(standIn.seen.length).toBe(before);
  });

  it('refuses other sites\' pages, other host names (DNS rebinding) and paths outside the API', async () => {
    const before = standIn.seen.length;
    const crossOrigin = await raw(proxy.url, 'POST', '/v1/topics/orders/purge', { origin: 'http://evil.example', 'content-type': 'application/json' }, '{}');
    expect(crossOrigin.status).toBe(403);
    const crossSite = await raw(proxy.url, 'GET', '/v1/topics', { 'sec-fetch-site': 'cross-site' });
    expect(crossSite.status).toBe(403);
    const rebound = await raw(proxy.url, 'GET', '/v1/topics', { host: `evil.example:${new URL(proxy.url).port}` });
    expect(rebound.status).toBe(421);
    const outside = await raw(proxy.url, 'GET', '/admin');
    expect(outside.status).toBe(404);
    expect(standIn.seen.length).toBe(before);
  });

  it('listens on loopback only', async () => {
    const transport = new HttpTransport({ endpoint: standIn.url, auth: 'none' });
    await expect(startConsoleProxy({ transport, assets: await loadConsoleAssets(), host: '0.0.0.0' })).rejects.toBeInstanceOf(ConsoleProxyBindError);
  });

  it('runs as `sluice console` with the AWS credentials of the environment', async () => {
    const root = fileURLToPath(new URL('../..', import.meta.url));
    const child: ChildProcess = spawn(process.execPath, ['bin/sluice.js', '--endpoint', standIn.url, '--auth', 'sigv4', '--region', REGION, 'console', '--port', '0'], {
      cwd: root,
      env: { ...process.env, AWS_ACCESS_KEY_ID: CREDENTIALS.accessKeyId, AWS_SECRET_ACCESS_KEY: CREDENTIALS.secretAccessKey, AWS_SESSION_TOKEN: CREDENTIALS.sessionToken, AWS_PROFILE: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      let output = '';
      child.stderr?.on('data', (c: Buffer) => (output += c.toString()));
      const url = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no URL printed: ${output}`)), 20_000);
        child.stdout?.on('data', (c: Buffer) => {
          output += c.toString();
          const found = /(http:\/\/127\.0\.0\.1:\d+)\/console/.exec(output);
          if (found) {
            clearTimeout(timer);
            resolve(found[1]!);
          }
        });
      });
      const before = standIn.seen.length;
      const res = await raw(url, 'GET', '/v1/topics?limit=5');
      expect(res.status).toBe(200);
      const got = standIn.seen[before]!;
      expect(got.headers.authorization).toBe(got.expected);
      expect(leaks(JSON.stringify(res.headers) + res.body)).toEqual([]);
    } finally {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGINT');
      await exited;
    }
  });
});
