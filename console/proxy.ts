/**
 * `sluice console`: a server on loopback that serves the console's files and passes the
 * browser's /v1 calls on to a Sluice endpoint with this machine's credentials (SigV4 from the
 * AWS credential chain for a deployed stack, or a bearer token), so that none reach the browser.
 *
 * Only this page may use it: a request must name this server in `Host` (no DNS rebinding), a
 * cross-origin one (`Origin` or `Sec-Fetch-Site` says so) is refused, and the browser's own
 * credentials and cookies are never passed on.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { HttpTransport } from '../lib/client/transport.js';
import { readBody } from '../lib/client/read-body.js';
import type { ConsoleAssets } from './asset-set.js';
import { isConsolePath, serveConsole } from './serve.js';

export interface ConsoleProxyOptions {
  /** The transport to the endpoint: it adds the authentication. */
  transport: Pick<HttpTransport, 'forward'>;
  assets: ConsoleAssets;
  /** Loopback only (default 127.0.0.1). */
  host?: string;
  /** Default 0: any free port. */
  port?: number;
}

export interface ConsoleProxy {
  url: string;
  server: Server;
  stop(): Promise<void>;
}

/** API request bodies stay far below this (the API's own limit is 1 MB): larger ones are refused here. */
const MAX_BODY = 6 * 1024 * 1024;
/** Request headers passed on; everything else (cookies, authorization, origin, …) stays here. */
const FORWARDED_REQUEST = ['content-type', 'accept', 'if-none-match'];
/** Response headers passed back. */
const FORWARDED_RESPONSE = ['content-type', 'retry-after', 'location', 'x-request-id', 'apigw-requestid', 'www-authenticate', 'allow', 'etag'];

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|::1|localhost)$/;

export class ConsoleProxyBindError extends Error {}

function problem(res: ServerResponse, status: number, code: string, detail: string): void {
  res.writeHead(status, { 'content-type': 'application/problem+json' });
  res.end(JSON.stringify({ type: `urn:sluice:problem:${code}`, title: code, status, detail, code }));
}

export async function startConsoleProxy(options: ConsoleProxyOptions): Promise<ConsoleProxy> {
  const host = options.host ?? '127.0.0.1';
  if (!LOOPBACK.test(host)) throw new ConsoleProxyBindError(`sluice console listens on loopback only, not on ${host}: it acts with your credentials.`);
  let self = '';
  const server = createServer((req, res) => {
    void handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) problem(res, 502, 'BadGateway', `The endpoint did not answer: ${error instanceof Error ? error.message : String(error)}`);
      else res.end();
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const method = (req.method ?? 'GET').toUpperCase();
    if (req.headers.host !== self) {
      req.resume();
      return problem(res, 421, 'MisdirectedRequest', `This server answers only as ${self}.`);
    }
    const origin = req.headers.origin;
    const site = req.headers['sec-fetch-site'];
    if ((origin !== undefined && origin !== `http://${self}`) || (site !== undefined && site !== 'same-origin' && site !== 'none')) {
      req.resume();
      return problem(res, 403, 'Forbidden', 'Only the console served here may use this server.');
    }
    const url = new URL(req.url ?? '/', `http://${self}`);
    if (isConsolePath(method, url.pathname)) return serveConsole(options.assets, req, res, url.pathname);
    if (!url.pathname.startsWith('/v1/') && url.pathname !== '/health') {
      req.resume();
      return problem(res, 404, 'NotFound', `No route for ${method} ${url.pathname}.`);
    }
    const body = await readBody(req, MAX_BODY);
    if (body === 'too-large') return problem(res, 413, 'PayloadTooLarge', `Request bodies are limited to ${MAX_BODY} bytes here.`);
    const headers: Record<string, string> = {};
    for (const name of FORWARDED_REQUEST) {
      const value = req.headers[name];
      if (typeof value === 'string') headers[name] = value;
    }
    // The API takes JSON text: the body is signed and sent as that text.
    const answer = await options.transport.forward(method, `${url.pathname}${url.search}`, headers, body.length ? body.toString('utf8') : undefined);
    const out: Record<string, string> = {};
    for (const name of FORWARDED_RESPONSE) {
      const value = answer.headers.get(name);
      if (value !== null) out[name] = value;
    }
    const payload = Buffer.from(await answer.arrayBuffer());
    res.writeHead(answer.status, { ...out, 'content-length': payload.length });
    res.end(payload);
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  self = `${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`;
  return {
    url: `http://${self}`,
    server,
    stop: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
