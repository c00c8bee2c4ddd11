/**
 * The local runtime: DynamoDB Local (spawned, or DYNAMODB_ENDPOINT), the
 * table, and the gateway serving the same Lambda handlers over HTTP.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createDynamoClients } from '../lib/adapters/dynamodb/client.js';
import { ensureTable } from '../lib/adapters/dynamodb/table.js';
import { randomUUID } from 'node:crypto';
import { createGateway, lambdaContext } from './gateway.js';
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
  /** How often the timer safety sweep runs (the AWS stack runs it every minute). */
  sweepEverySeconds?: number;
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

/**
 * Local EventBridge Scheduler and SQS: the in-process timer bus invokes the
 * same timer handlers the Lambdas run, with the same event shapes. Timers
 * armed before a restart are re-armed from DynamoDB, overdue ones released.
 */
async function startTimers(sweepEverySeconds: number): Promise<() => void> {
  const { container } = await import('../functions/commons/container.js');
  const minute = (await import('../functions/timers/minute.js')).handler;
  const release = (await import('../functions/timers/release.js')).handler;
  const sweep = (await import('../functions/timers/sweep.js')).handler;
  const context = (name: string) => lambdaContext(name, randomUUID());
  const { localTimers, timers } = container();
  localTimers?.setTargets({
    minute: (event) => minute(event, context('timer-minute')),
    release: (event) => release(event as never, context('timer-release')),
  });
  await timers.rearm();
  const interval = setInterval(() => {
    sweep({}, context('timer-sweep')).catch((error: unknown) => console.error('timer sweep failed', error));
  }, sweepEverySeconds * 1000);
  interval.unref();
  return () => {
    clearInterval(interval);
    localTimers?.clear();
  };
}

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
    const stopTimers = await startTimers(options.sweepEverySeconds ?? 30);
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
        stopTimers();
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
