/**
 * The local stand-in for API Gateway (HTTP API, payload format 2.0): turns
 * each HTTP request into the event the Lambda would get and invokes the same
 * handler module. It also plays the authorizer: a bearer token when
 * SLUICE_API_TOKEN is set.
 */
import { isUtf8 } from 'node:buffer';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { randomUUID, timingSafeEqual, createHash } from 'node:crypto';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { routes } from '../functions/api/routes.js';
import { compileRoutes, matchRoute, routesOfPath, type CompiledRoute as CompiledRouteDef } from '../functions/commons/route-table.js';
import { Limits } from '../lib/domain/model.js';
import { problemType } from '../lib/http/problem.js';
import { readBody } from '../lib/client/read-body.js';
import type { ConsoleAssets } from '../console/asset-set.js';
import { inContainer, type Container } from '../functions/commons/container.js';
import { isConsolePath, serveConsole } from '../console/serve.js';

type Handler = (event: APIGatewayProxyEventV2, context: Context) => Promise<APIGatewayProxyStructuredResultV2>;

interface CompiledRoute extends CompiledRouteDef {
  handler: Handler;
}

export interface GatewayOptions {
  /** Bearer token required on every route but /health; undefined: no authentication. */
  token: string | undefined;
  /** The web console's files (served at /console without a token: they hold no data); undefined: no console. */
  console?: () => Promise<ConsoleAssets>;
  /**
   * The container a request's handler runs in (functions/commons/container.ts `inContainer`);
   * undefined, or no option: the process's one container, as every invocation of one Lambda
   * container shares. The benchmark's scale rows serve each client with a container of its own.
   */
  containerFor?: (req: IncomingMessage) => Container | undefined;
}

const MAX_BODY = Limits.requestMaxBytes + 64 * 1024;

async function compile(): Promise<CompiledRoute[]> {
  return Promise.all(
    compileRoutes(routes).map(async (route) => {
      const module = (await import(`../functions/api/${route.def.entry}.ts`)) as { handler: Handler };
      return { ...route, handler: module.handler };
    }),
  );
}

/** The URL of a request target (origin form '/path?query', or absolute form); undefined when it does not parse. */
function requestUrl(target: string | undefined): URL | undefined {
  const text = target ?? '/';
  try {
    return text.startsWith('/') ? new URL(`http://local${text}`) : new URL(text);
  } catch {
    return undefined;
  }
}

const digest = (text: string) => createHash('sha256').update(text).digest();

function problem(res: ServerResponse, status: number, code: string, title: string, detail: string, headers: Record<string, string> = {}) {
  res.writeHead(status, { 'content-type': 'application/problem+json', ...headers });
  res.end(JSON.stringify({ type: problemType(code), title, status, detail, code }));
}

/** A Lambda context for a local invocation; `timeoutMs`: the function's timeout on AWS (middy ends a run early at it). */
export function lambdaContext(name: string, requestId: string, timeoutMs = 30_000): Context {
  const deadline = Date.now() + timeoutMs;
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName: `sluice-${name}`,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:local:000000000000:function:sluice-${name}`,
    memoryLimitInMB: '512',
    awsRequestId: requestId,
    logGroupName: `/aws/lambda/sluice-${name}`,
    logStreamName: 'local',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

export async function createGateway(options: GatewayOptions): Promise<Server> {
  const server = createServer(await gatewayListener(options));
  // Requests Node's HTTP parser refuses (unknown methods, malformed request lines or headers) get a problem too.
  server.on('clientError', (error: NodeJS.ErrnoException, socket) => {
    if (error.code === 'ECONNRESET' || !socket.writable) return socket.destroy();
    const [status, reason] = error.code === 'HPE_HEADER_OVERFLOW' ? [431, 'Request Header Fields Too Large'] : [400, 'Bad Request'];
    const body = JSON.stringify({ type: problemType('InvalidArgument'), title: 'Invalid argument', status, detail: 'The request is not valid HTTP/1.1.', code: 'InvalidArgument' });
    socket.end(`HTTP/1.1 ${status} ${reason}\r\ncontent-type: application/problem+json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);
  });
  return server;
}

/** The gateway's request listener: what {@link createGateway}'s server runs for each request (a caller may front it with its own server). */
export async function gatewayListener(options: GatewayOptions): Promise<(req: IncomingMessage, res: ServerResponse) => void> {
  const compiled = await compile();
  const expected = options.token === undefined ? undefined : digest(`Bearer ${options.token}`);
  return (req, res) => {
    void serve(req, res).catch((error: unknown) => {
      console.error('gateway error', error);
      if (!res.headersSent) problem(res, 500, 'InternalError', 'Internal error', 'The request failed unexpectedly.');
      else res.end();
    });
  };

  async function serve(req: IncomingMessage, res: ServerResponse) {
    // The request target is a path: '//x/y' is the path '//x/y', not a URL of host x (which may not even parse).
    const url = requestUrl(req.url);
    const method = (req.method ?? 'GET').toUpperCase();
    const path = url?.pathname ?? '';
    const matches = routesOfPath(compiled, path);
    if (options.console && isConsolePath(method, path)) return serveConsole(await options.console(), req, res, path);
    const isPublic = matches.length > 0 && matches.every((m) => !m.route.def.auth);
    // Authentication comes before everything else, even before 404 and body parsing.
    if (expected && !isPublic) {
      const given = req.headers.authorization ?? '';
      if (!timingSafeEqual(digest(given), expected)) {
        req.resume();
        return problem(res, 401, 'Unauthorized', 'Unauthorized', 'Send Authorization: Bearer <SLUICE_API_TOKEN>.', {
          'www-authenticate': 'Bearer realm="sluice"',
        });
      }
    }
    if (!url) {
      req.resume();
      return problem(res, 400, 'InvalidArgument', 'Invalid argument', 'The request target is not a valid path.');
    }
    const found = matchRoute(compiled, method, path);
    if (found.kind !== 'found') {
      req.resume();
      if (found.kind === 'method-not-allowed') {
        const allow = found.allow.join(', ');
        return problem(res, 405, 'MethodNotAllowed', 'Method not allowed', `${method} is not allowed on ${path}; use ${allow}.`, { allow });
      }
      if (found.kind === 'bad-encoding') return problem(res, 400, 'InvalidArgument', 'Invalid argument', 'The path is not valid percent-encoding.');
      return problem(res, 404, 'NotFound', 'Not found', `No route for ${method} ${path}.`);
    }
    const body = await readBody(req, MAX_BODY);
    if (body === 'too-large') {
      res.setHeader('connection', 'close');
      return problem(res, 413, 'PayloadTooLarge', 'Payload too large', `Request bodies are limited to ${Limits.requestMaxBytes} bytes.`);
    }
    const { route, pathParameters } = found;
    // Null-prototype maps, as API Gateway's JSON gives the Lambda: `?__proto__=x` is a parameter (refused as unknown), not the prototype setter.
    const headers: Record<string, string> = Object.create(null) as Record<string, string>;
    for (const [name, value] of Object.entries(req.headers)) {
      if (value !== undefined) headers[name.toLowerCase()] = Array.isArray(value) ? value.join(',') : value;
    }
    const query: Record<string, string> = Object.create(null) as Record<string, string>;
    for (const [name, value] of url.searchParams) query[name] = Object.hasOwn(query, name) ? `${query[name]},${value}` : value;
    const requestId = randomUUID();
    const now = new Date();
    const routeKey = `${route.def.method} ${route.def.path}`;
    const event: APIGatewayProxyEventV2 = {
      version: '2.0',
      routeKey,
      rawPath: path,
      rawQueryString: url.search.slice(1),
      headers,
      ...(Object.keys(query).length ? { queryStringParameters: query } : {}),
      ...(route.names.length ? { pathParameters } : {}),
      // Like API Gateway with a body that is not text: base64, so that the handler can refuse invalid UTF-8.
      ...(body.length ? { body: isUtf8(body) ? body.toString('utf8') : body.toString('base64') } : {}),
      isBase64Encoded: body.length > 0 && !isUtf8(body),
      requestContext: {
        accountId: 'local',
        apiId: 'local',
        domainName: headers.host ?? 'localhost',
        domainPrefix: 'localhost',
        http: {
          method,
          path,
          protocol: `HTTP/${req.httpVersion}`,
          sourceIp: req.socket.remoteAddress ?? '127.0.0.1',
          userAgent: headers['user-agent'] ?? '',
        },
        requestId,
        routeKey,
        stage: '$default',
        time: now.toISOString(),
        timeEpoch: now.getTime(),
      },
    };
    const invoke = () => route.handler(event, lambdaContext(route.def.entry, requestId));
    const own = options.containerFor?.(req);
    const result = await (own ? inContainer(own, invoke) : invoke());
    const outHeaders: Record<string, string> = { 'x-request-id': requestId };
    for (const [name, value] of Object.entries(result.headers ?? {})) outHeaders[name] = String(value);
    res.writeHead(result.statusCode ?? 200, outHeaders);
    const payload = result.body ?? '';
    res.end(result.isBase64Encoded ? Buffer.from(payload, 'base64') : payload);
  }
}
