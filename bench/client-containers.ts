/**
 * A Lambda container of its own for each client of a scale row. On AWS, 64 producers sending at
 * once (or 64 consumers receiving) are served by about 64 containers, one request at a time each,
 * and each container keeps its own caches and its own view of contention: the partition picker,
 * head hints, the cursor cache and what a lost claim taught it (docs/design.md). The local runtime
 * is one container, which every client would share. So the scale rows send their clients' sends,
 * receives and commits here instead: one HTTP server, and per client (the `x-bench-client`
 * header) a container built from the runtime's configuration with the AWS notifier, its DynamoDB
 * client counted by the bench's meter and slowed by the same injected round trip. Each request
 * runs the route's service call as its handler does (functions/api/send-message.ts, send-batch.ts,
 * receive.ts, commit.ts), with the same schemas and the same problem answers.
 *
 * Not here: the HTTP edge's contention metrics (their EMF lines are priced in the cost model, not
 * counted per request), and any route but those four (a client sends nothing else in a scale row).
 */
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ZodError } from 'zod';
import { buildContainer, type Container } from '../functions/commons/container.js';
import { loadConfig } from '../functions/commons/config.js';
import { commitResultsOf, toSendInput } from '../functions/api/convert.js';
import { CommitBody, SendBatchBody, SendBody } from '../functions/api/schemas.js';
import { toProblem } from '../lib/http/problem.js';
import { Api } from './http.js';
import { RECEIVE_PATH, readBody, receiveOn } from './route-calls.js';
import type { Meter } from './meter.js';
import type { RoundTrip } from './round-trip.js';

export const CLIENT_HEADER = 'x-bench-client';
/** At most this many containers: the scale rows' consumers (≤ 256) and producers (≤ 256). */
export const MAX_CLIENT_CONTAINERS = 512;

const SEND = /^\/v1\/topics\/([^/]+)\/messages$/;
const SEND_BATCH = /^\/v1\/topics\/([^/]+)\/messages\/batch$/;
const COMMIT = /^\/v1\/groups\/([^/]+)\/commit$/;

export interface ClientContainers {
  /** A client of the runtime whose requests are served by container `client` (0-based). */
  api(client: number): Api;
  /** Containers built so far. */
  built(): number;
  /** Client `client`'s container, if its first request came. */
  containerOf(client: number): Container | undefined;
  stop(): Promise<void>;
}

type Answer = { status: number; body: unknown; headers?: Record<string, string> };

/** What the route's handler does with a request, on container `c` (undefined: not one of the four routes). */
async function serve(c: Container, method: string, path: string, text: string): Promise<Answer | undefined> {
  if (method !== 'POST') return undefined;
  const body: unknown = text ? JSON.parse(text) : {};
  let m: RegExpExecArray | null;
  if ((m = SEND.exec(path))) {
    const topic = decodeURIComponent(m[1] ?? '');
    const result = await c.queue.send(topic, toSendInput(SendBody.parse(body)));
    return { status: 201, body: result };
  }
  if ((m = SEND_BATCH.exec(path))) {
    const topic = decodeURIComponent(m[1] ?? '');
    const results = await c.queue.sendBatch(topic, SendBatchBody.parse(body).entries.map(toSendInput));
    return { status: 200, body: { results: results.map((r) => ('error' in r ? { index: r.index, error: toProblem(r.error).problem } : { index: r.index, ...r.result })) } };
  }
  if ((m = RECEIVE_PATH.exec(path))) return { status: 200, body: await receiveOn(c, decodeURIComponent(m[1] ?? ''), body) };
  if ((m = COMMIT.exec(path))) {
    const group = decodeURIComponent(m[1] ?? '');
    const entries = CommitBody.parse(body).entries.map((e) => ({
      receiptHandle: e.receiptHandle,
      publish: (e.publish ?? []).map(({ topic, ...send }) => ({ topic, ...toSendInput(send) })),
    }));
    return { status: 200, body: { results: commitResultsOf(await c.queue.commit(group, entries)) } };
  }
  return undefined;
}

function answer(res: ServerResponse, { status, body, headers }: Answer) {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': status >= 400 ? 'application/problem+json' : 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

/**
 * Starts the server on 127.0.0.1. Call it after the local runtime started (its configuration is
 * in the environment then). `routeOf` names a request's route for the meter, as the runtime's.
 */
export async function startClientContainers(options: { token: string; meter: Meter; roundTrip: RoundTrip; routeOf: (method: string, path: string) => string }): Promise<ClientContainers> {
  const config = { ...loadConfig(process.env), SLUICE_NOTIFIER: 'activity' as const };
  const containers = new Map<number, Container>();
  const containerOf = (client: number): Container => {
    let c = containers.get(client);
    if (!c) {
      c = buildContainer(config);
      options.meter.instrumentDynamo(c.dynamo);
      options.roundTrip.install(c.dynamo);
      containers.set(client, c);
    }
    return c;
  };
  const server: Server = createServer((req, res) => {
    void (async () => {
      if (req.headers.authorization !== `Bearer ${options.token}`) return answer(res, { status: 401, body: { title: 'Unauthorized', status: 401 } });
      const client = Number(req.headers[CLIENT_HEADER]);
      if (!Number.isInteger(client) || client < 0 || client >= MAX_CLIENT_CONTAINERS) return answer(res, { status: 400, body: { title: `${CLIENT_HEADER} must be 0–${MAX_CLIENT_CONTAINERS - 1}`, status: 400 } });
      const path = new URL(req.url ?? '/', 'http://local').pathname;
      const text = await readBody(req);
      const out = await serve(containerOf(client), (req.method ?? 'GET').toUpperCase(), path, text).catch((error: unknown): Answer => {
        if (error instanceof ZodError || error instanceof SyntaxError) return { status: 400, body: { title: 'Bad request', status: 400, detail: error.message } };
        const { problem, headers } = toProblem(error);
        return { status: problem.status, body: problem, headers };
      });
      answer(res, out ?? { status: 404, body: { title: 'Not a client route here', status: 404, detail: `${req.method} ${path}` } });
    })().catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: error instanceof Error ? error.message : String(error) }));
    });
  });
  options.meter.instrumentServer(server, options.routeOf);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;
  return {
    api: (client) => {
      // A bench bug, not a row's figure: a client the server would refuse must not run at all.
      if (!Number.isInteger(client) || client < 0 || client >= MAX_CLIENT_CONTAINERS) throw new Error(`client ${client} is outside 0–${MAX_CLIENT_CONTAINERS - 1}`);
      return new Api(url, options.token, { [CLIENT_HEADER]: String(client) });
    },
    built: () => containers.size,
    containerOf: (client) => containers.get(client),
    stop: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      for (const c of containers.values()) c.dynamo.destroy();
    },
  };
}
