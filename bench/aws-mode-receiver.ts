/**
 * A receive endpoint configured as on AWS, for the idle and wake rows: the
 * local runtime's own container waits with the in-process notifier, so this
 * builds a second container with `SLUICE_NOTIFIER=activity` (its own
 * DynamoDB clients, catalog cache and activity waiter: a separate Lambda
 * container) and serves `POST /v1/groups/{group}/receive` with the API's own
 * handler in it (the local gateway's listener, local/gateway.ts). Every
 * other request is passed to the local runtime. Its DynamoDB calls and HTTP
 * requests are counted by a meter of its own.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { buildContainer, type ContainerOverrides } from '../functions/commons/container.js';
import { loadConfig } from '../functions/commons/config.js';
import { readBody } from '../lib/client/read-body.js';
import { Limits } from '../lib/domain/model.js';
import { gatewayListener } from '../local/gateway.js';
import { Meter } from './meter.js';

const RECEIVE_PATH = /^\/v1\/groups\/([^/]+)\/receive$/;

export interface AwsModeReceiver {
  url: string;
  /** The bearer token its receives need (the local runtime's). */
  token: string | undefined;
  meter: Meter;
  /** The container's DynamoDB client (the one the meter counts). */
  dynamo: ReturnType<typeof buildContainer>['dynamo'];
  /** Receives answered so far (a consumer's polls). */
  receives(): number;
  /** Resolves once `n` receives were answered in all. */
  receivesDone(n: number): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Starts the endpoint on 127.0.0.1; `runtimeUrl` and `token` are the local runtime's. With
 * `doorbellQueues`, parking receives answer doorbells (queues of the bench's SQS stand-in).
 */
export async function startAwsModeReceiver(runtimeUrl: string, token: string | undefined, overrides: ContainerOverrides = {}): Promise<AwsModeReceiver> {
  const c = buildContainer({ ...loadConfig(process.env), SLUICE_NOTIFIER: 'activity' }, overrides);
  const meter = new Meter();
  meter.instrumentDynamo(c.dynamo);
  let answered = 0;
  const waiters: Array<{ n: number; resolve: () => void }> = [];
  // Receives run the receive route's handler in this container.
  const gateway = await gatewayListener({ token, containerFor: () => c });
  const server: Server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://local').pathname;
    if (req.method === 'POST' && RECEIVE_PATH.test(path)) {
      res.on('finish', () => {
        // A consumer's polls: receives answered 200 (a refused one is not a poll).
        if (res.statusCode !== 200) return;
        answered++;
        for (const w of waiters.splice(0)) if (answered >= w.n) w.resolve();
        else waiters.push(w);
      });
      gateway(req, res);
      return;
    }
    void (async () => {
      const read = await readBody(req, Limits.requestMaxBytes);
      const body = read === 'too-large' ? undefined : read.toString('utf8');
      const answer = await fetch(`${runtimeUrl}${req.url ?? '/'}`, {
        method: req.method,
        headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body ? { 'content-type': 'application/json' } : {}) },
        body: body || undefined,
      });
      res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' });
      res.end(await answer.text());
    })().catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: error instanceof Error ? error.message : String(error) }));
    });
  });
  meter.instrumentServer(server, (method, path) => (method === 'POST' && RECEIVE_PATH.test(path) ? 'receive' : 'passed-on'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    token,
    meter,
    dynamo: c.dynamo,
    receives: () => answered,
    receivesDone: (n) => (answered >= n ? Promise.resolve() : new Promise<void>((resolve) => waiters.push({ n, resolve }))),
    stop: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      c.dynamo.destroy();
    },
  };
}
