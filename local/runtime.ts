/**
 * The local runtime: DynamoDB Local (spawned, or DYNAMODB_ENDPOINT), the
 * table, and the gateway serving the same Lambda handlers over HTTP.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createDynamoClients } from '../lib/adapters/dynamodb/client.js';
import { ensureTable } from '../lib/adapters/dynamodb/table.js';
import { createGateway } from './gateway.js';
import { startDynamoLocal, type LocalDynamo } from './dynamo.js';

export interface LocalOptions {
  host: string;
  port: number;
  token: string | undefined;
  tableName: string;
  /** Use this DynamoDB instead of spawning DynamoDB Local. */
  endpoint: string | undefined;
  /** Where the spawned DynamoDB Local keeps its data (undefined: in memory). */
  dataDir: string | undefined;
}

export interface LocalRuntime {
  url: string;
  endpoint: string;
  server: Server;
  stop(): Promise<void>;
}

const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost', '[::1]']);
export const isLoopback = (host: string) => LOOPBACK.has(host) || /^127\.\d+\.\d+\.\d+$/.test(host);

export class UnsafeBindError extends Error {}

export async function startLocal(options: LocalOptions): Promise<LocalRuntime> {
  if (!isLoopback(options.host) && !options.token) {
    throw new UnsafeBindError(
      `Refusing to listen on ${options.host} without authentication: set SLUICE_API_TOKEN, or bind to 127.0.0.1.`,
    );
  }
  let dynamo: LocalDynamo | undefined;
  const endpoint = options.endpoint ?? (dynamo = await startDynamoLocal({ dataDir: options.dataDir })).endpoint;
  try {
    const { client } = createDynamoClients({ endpoint });
    await ensureTable(client, options.tableName);
    client.destroy();
    // The handlers read their configuration from the environment, exactly as on Lambda.
    process.env.SLUICE_TABLE_NAME = options.tableName;
    process.env.DYNAMODB_ENDPOINT = endpoint;
    process.env.SLUICE_NOTIFIER = 'in-process';
    process.env.POWERTOOLS_LOG_LEVEL ??= 'WARN';
    const server = await createGateway({ token: options.token });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port, options.host, () => resolve());
    });
    const address = server.address() as AddressInfo;
    const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
    return {
      url: `http://${host}:${address.port}`,
      endpoint,
      server,
      stop: async () => {
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
        await dynamo?.stop();
      },
    };
  } catch (error) {
    await dynamo?.stop();
    throw error;
  }
}
