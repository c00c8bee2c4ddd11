/**
 * Answers the console's own paths (GET or HEAD of /, /console, /console/app.js, /console/app.css)
 * for the local gateway and the `sluice console` server. These files hold no data: the page asks
 * the v1 API, with its credentials, for everything it shows.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ConsoleAssets } from './asset-set.js';

/** The page runs only its own script and style and talks only to its own origin. */
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/** True for the paths this module answers. */
export const isConsolePath = (method: string, path: string) =>
  (method === 'GET' || method === 'HEAD') && (path === '/' || path === '/console' || path === '/console/' || path === '/console/app.js' || path === '/console/app.css');

export function serveConsole(assets: ConsoleAssets, req: IncomingMessage, res: ServerResponse, path: string): void {
  req.resume();
  if (path === '/' || path === '/console/') {
    res.writeHead(302, { location: '/console', 'content-length': 0 });
    return void res.end();
  }
  const file = assets.files.get(path);
  if (!file) {
    res.writeHead(404, { 'content-type': 'text/plain' });
    return void res.end('Not found');
  }
  const headers: Record<string, string | number> = {
    'content-type': file.type,
    etag: file.etag,
    // Revalidated on every load (a restart may serve a new build); 304 when unchanged.
    'cache-control': 'no-cache',
    'content-security-policy': CSP,
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    vary: 'accept-encoding',
  };
  if (req.headers['if-none-match'] === file.etag) {
    res.writeHead(304, headers);
    return void res.end();
  }
  const gzip = /\bgzip\b/.test(String(req.headers['accept-encoding'] ?? ''));
  const body = gzip ? file.gzip : file.body;
  res.writeHead(200, { ...headers, ...(gzip ? { 'content-encoding': 'gzip' } : {}), 'content-length': body.length });
  res.end(req.method === 'HEAD' ? undefined : body);
}
