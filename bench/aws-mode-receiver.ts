/**
 * A receive endpoint configured as on AWS, for the idle and wake rows: the
 * local runtime's own container waits with the in-process notifier, so this
 * builds a second container with `SLUICE_NOTIFIER=activity` (its own
 * DynamoDB clients, catalog cache and activity waiter: a separate Lambda
 * container) and serves `POST /v1/groups/{group}/receive` with it. Every
 * other request is passed to the local runtime. Its DynamoDB calls and HTTP
 * requests are counted by a meter of its own.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { buildContainer, type ContainerOverrides } from '../functions/commons/container.js';
import { loadConfig } from '../functions/commons/config.js';
import { Meter } from './meter.js';
import { RECEIVE_PATH, readBody, receiveOn } from './route-calls.js';

export interface AwsModeReceiver {
  url: string;
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
  const server: Server = createServer((req, res) => {
    void (async () => {
      const path = new URL(req.url ?? '/', 'http://local').pathname;
      const body = await readBody(req);
      const match = req.method === 'POST' ? RECEIVE_PATH.exec(path) : null;
      if (!match) {
        const answer = await fetch(`${runtimeUrl}${req.url ?? '/'}`, {
          method: req.method,
          headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body ? { 'content-type': 'application/json' } : {}) },
          body: body || undefined,
        });
        res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' });
        res.end(await answer.text());
        return;
      }
      // As functions/api/receive.ts, with this container's queue.
      const out = await receiveOn(c, decodeURIComponent(match[1] ?? ''), body ? JSON.parse(body) : {});
      const text = JSON.stringify(out);
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
      res.end(text, () => {
        answered++;
        for (const w of waiters.splice(0)) if (answered >= w.n) w.resolve();
        else waiters.push(w);
      });
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
