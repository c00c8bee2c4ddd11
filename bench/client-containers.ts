/**
 * A Lambda container of its own for each client of a scale row. On AWS, 64 producers sending at
 * once (or 64 consumers receiving) are served by about 64 containers, one request at a time each,
 * and each container keeps its own caches and its own view of contention: the partition picker,
 * head hints, the cursor cache and what a lost claim taught it (docs/design.md). The local runtime
 * is one container, which every client would share. So the scale rows send their clients' requests
 * here instead: one HTTP server in front of the local gateway's listener (local/gateway.ts, the
 * API's own handlers with their authentication, schemas and problem answers), which runs each
 * request's handler in its client's container (the `x-bench-client` header;
 * functions/commons/container.ts `inContainer`) — built on the client's first request from the
 * runtime's configuration with the AWS notifier, its DynamoDB client counted by the bench's meter
 * and slowed by the same injected round trip.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { buildContainer, type Container } from '../functions/commons/container.js';
import { loadConfig } from '../functions/commons/config.js';
import { gatewayListener } from '../local/gateway.js';
import { problemType } from '../lib/http/problem.js';
import { Api } from './http.js';
import type { Meter } from './meter.js';
import type { RoundTrip } from './round-trip.js';

export const CLIENT_HEADER = 'x-bench-client';
/** At most this many containers: the scale rows' consumers (≤ 256) and producers (≤ 256). */
export const MAX_CLIENT_CONTAINERS = 512;

export interface ClientContainers {
  /** A client of the runtime whose requests are served by container `client` (0-based). */
  api(client: number): Api;
  /** Containers built so far. */
  built(): number;
  /** Client `client`'s container, if its first request came. */
  containerOf(client: number): Container | undefined;
  stop(): Promise<void>;
}

/** The client a request names (undefined: none, or outside 0–511). */
function clientOf(req: IncomingMessage): number | undefined {
  const client = Number(req.headers[CLIENT_HEADER]);
  return Number.isInteger(client) && client >= 0 && client < MAX_CLIENT_CONTAINERS ? client : undefined;
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
  // Only requests that reach a handler build their container; a request without a client never gets here.
  const gateway = await gatewayListener({
    token: options.token,
    containerFor: (req) => {
      const client = clientOf(req);
      return client === undefined ? undefined : containerOf(client);
    },
  });
  const server: Server = createServer((req, res) => {
    if (clientOf(req) === undefined) {
      req.resume();
      const detail = `Name the client in ${CLIENT_HEADER}: 0–${MAX_CLIENT_CONTAINERS - 1}.`;
      res.writeHead(400, { 'content-type': 'application/problem+json' });
      res.end(JSON.stringify({ type: problemType('InvalidArgument'), title: 'Invalid argument', status: 400, detail, code: 'InvalidArgument' }));
      return;
    }
    gateway(req, res);
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
