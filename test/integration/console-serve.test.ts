/**
 * The local runtime serves the web console at /console (and redirects / there) without a
 * token — the files hold no data — while everything else still needs the token.
 */
import { request } from 'node:http';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalRuntime } from '../../local/runtime.js';
import { startRuntime } from '../helpers/local.js';

interface Raw {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

function raw(base: string, method: string, path: string, headers: Record<string, string> = {}): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const req = request(`${base}${path}`, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('the console on the local runtime', () => {
  let runtime: LocalRuntime;
  beforeAll(async () => {
    runtime = await startRuntime();
  });
  afterAll(async () => {
    await runtime.stop();
  });

  it('redirects / to /console, and only for GET and HEAD', async () => {
    const get = await raw(runtime.url, 'GET', '/');
    expect(get.status).toBe(302);
    expect(get.headers.location).toBe('/console');
    expect((await raw(runtime.url, 'HEAD', '/')).status).toBe(302);
    const post = await raw(runtime.url, 'POST', '/');
    expect(post.status).toBe(401);
    expect(JSON.parse(post.body.toString()).code).toBe('Unauthorized');
  });

  it('serves the page, its script and its style without a token, with a CSP that allows only its own origin', async () => {
    const page = await raw(runtime.url, 'GET', '/console');
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    const html = page.body.toString();
    expect(html).toContain('<script type="module" src="/console/app.js"></script>');
    expect(html).toContain('<link rel="stylesheet" href="/console/app.css">');
    expect(html).toContain('<meta name="viewport"');
    expect(page.headers['content-security-policy']).toContain("script-src 'self'");
    expect(page.headers['content-security-policy']).toContain("connect-src 'self'");
    expect(page.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(page.headers['x-content-type-options']).toBe('nosniff');

    const js = await raw(runtime.url, 'GET', '/console/app.js');
    expect(js.status).toBe(200);
    expect(js.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(js.body.toString()).toContain('/v1/topics');
    const css = await raw(runtime.url, 'GET', '/console/app.css');
    expect(css.status).toBe(200);
    expect(css.headers['content-type']).toBe('text/css; charset=utf-8');
    expect(css.body.toString()).toContain(':focus-visible');
  });

  it('answers gzip to a browser that accepts it, and 304 to a revalidation', async () => {
    const plain = await raw(runtime.url, 'GET', '/console/app.js');
    const zipped = await raw(runtime.url, 'GET', '/console/app.js', { 'accept-encoding': 'gzip, br' });
    expect(zipped.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(zipped.body).equals(plain.body)).toBe(true);
    expect(zipped.body.length).toBeLessThan(plain.body.length / 2);
    const etag = String(plain.headers.etag);
    expect(etag).toMatch(/^"[\w-]{22}"$/);
    const again = await raw(runtime.url, 'GET', '/console/app.js', { 'if-none-match': etag });
    expect(again.status).toBe(304);
    expect(again.body.length).toBe(0);
  });

  it('keeps every other path behind the token', async () => {
    for (const path of ['/console/other.js', '/console/../v1/topics', '/v1/topics', '/consoles']) {
      const res = await raw(runtime.url, 'GET', path);
      expect(res.status, path).toBe(401);
    }
    expect((await raw(runtime.url, 'PUT', '/console')).status).toBe(401);
  });
});
