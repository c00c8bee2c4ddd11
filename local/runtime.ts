/**
 * The local runtime: DynamoDB Local (spawned, or DYNAMODB_ENDPOINT), the
 * table, and the gateway serving the same Lambda handlers over HTTP.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createDynamoClients } from '../lib/adapters/dynamodb/client.js';
import { ensureTable } from '../lib/adapters/dynamodb/table.js';
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createGateway, lambdaContext } from './gateway.js';
import { PUSH_WORKER_TIMEOUT_MS } from '../lib/ports/push-queue.js';
import { startDynamoLocal, type LocalDynamo } from './dynamo.js';
import { startDispatcher, type LocalDispatcher } from './dispatcher.js';
import { loadConsoleAssets } from '../console/assets.js';
import type { ConsoleAssets } from '../console/asset-set.js';

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
  /** How often due transaction check-backs run (SLUICE_CHECKBACK_EVERY_SECONDS, default 60). */
  checkbackEverySeconds?: number;
  /** How often the dispatcher's stream poller reads a caught-up shard again (ms, default 50). */
  dispatchPollIntervalMs?: number;
  /** Bundle the web console at start (`npm start`) rather than at its first request (tests that never open it). */
  buildConsoleAtStart?: boolean;
}

export interface LocalRuntime {
  url: string;
  endpoint: string;
  server: Server;
  /** The dispatcher's event source (the table's stream read by the local poller); absent against a remote deployment. */
  dispatcher?: LocalDispatcher;
  stop(): Promise<void>;
}

const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost', '[::1]']);
export const isLoopback = (host: string) => LOOPBACK.has(host) || /^127\.\d+\.\d+\.\d+$/.test(host);

export class UnsafeBindError extends Error {}

/** The key that seals producer signing secrets: kept beside the data, so secrets survive restarts. */
function secretsKey(dataDir: string | undefined): string {
  if (!dataDir) return randomBytes(32).toString('base64');
  const file = join(dataDir, 'secrets.key');
  if (!existsSync(file)) {
    mkdirSync(dataDir, { recursive: true });
    writeFileSync(file, randomBytes(32).toString('base64'), { mode: 0o600, flag: 'wx' });
  }
  return readFileSync(file, 'utf8').trim();
}

/** The recurring check-back (EventBridge schedule on AWS) and its in-process fan-out (SQS on AWS). */
async function startCheckbacks(everySeconds: number): Promise<() => void> {
  const { container } = await import('../functions/commons/container.js');
  const worker = (await import('../functions/checks/worker.js')).handler;
  const sweep = (await import('../functions/checks/sweep.js')).handler;
  const { localChecks } = container();
  localChecks?.setTarget((event) => worker(event as never, lambdaContext('check-worker', randomUUID())));
  let running = false;
  const interval = setInterval(() => {
    if (running) return; // a slow checker must not pile sweeps up
    running = true;
    sweep({}, lambdaContext('check-sweep', randomUUID()))
      .catch((error: unknown) => console.error('check-back sweep failed', error))
      .finally(() => (running = false));
  }, everySeconds * 1000);
  interval.unref();
  return () => {
    clearInterval(interval);
    localChecks?.setTarget(undefined);
    localChecks?.clear();
  };
}

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

/**
 * The local push queue (SQS on AWS): the in-process bus invokes the push
 * worker's handler with the SQS event shape. Jobs that waited in timers
 * before a stop (or a crash) are gone, so a start enqueues, per push group
 * (one Query of the group collection), a job now — what is claimable is
 * pushed again — and jobs at the two times by which everything the previous
 * process left behind is claimable again: when the longest retry back-off of
 * a message it released has run out (its retry job was in the bus), and when
 * the longest lease it can have taken has expired (a crash between claim and
 * answer: a claim leases for the request's lease plus the back-off a failure
 * would earn). On AWS the push queue keeps those jobs (docs/design.md, Push
 * groups, Known limits).
 */
async function startPush(): Promise<() => void> {
  const { container } = await import('../functions/commons/container.js');
  const worker = (await import('../functions/push/worker.js')).handler;
  const { pushLeaseMs } = await import('../lib/services/pusher.js');
  const { localPush, stores } = container();
  // The push worker's own timeout (120 s on AWS): a drain runs up to 60 s, and middy ends the run early
  // at the context's deadline (the drain going on unseen, its job counted failed).
  localPush?.setTarget((event) => worker(event as never, lambdaContext('push-worker', randomUUID(), PUSH_WORKER_TIMEOUT_MS)));
  const groups = (await stores.catalog.allGroups()).filter((g) => g.push !== undefined);
  await localPush?.send(groups.map((g) => ({ group: g.name })));
  const now = Date.now();
  for (const group of groups) {
    // A released message is claimable by the longest back-off; a lease left by a crash by the
    // longest lease plus the back-off its failure earns (the claim sets both: domain/claims.ts).
    const longestBackoffMs = group.retryPolicy.maxSeconds * 1000;
    const delays = new Set([longestBackoffMs, pushLeaseMs(group.push!) + longestBackoffMs]);
    for (const delayMs of delays) if (delayMs > 0) await localPush?.send([{ group: group.name, notBefore: now + delayMs }], delayMs);
  }
  return () => {
    localPush?.setTarget(undefined);
    localPush?.clear();
  };
}

export async function startLocal(options: LocalOptions): Promise<LocalRuntime> {
  if (!isLoopback(options.host) && !options.token) {
    throw new UnsafeBindError(
      `Refusing to listen on ${options.host} without authentication: set SLUICE_API_TOKEN, or bind to 127.0.0.1.`,
    );
  }
  let dynamo: LocalDynamo | undefined;
  let dispatcher: LocalDispatcher | undefined;
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
    // A producer on this machine may be its own checker (http on loopback; SPEC §4).
    process.env.SLUICE_ALLOW_LOOPBACK_CHECKERS = 'true';
    process.env.SLUICE_SECRETS_KEY ??= secretsKey(options.dataDir);
    // The console is bundled when first asked for: a runtime nobody opens it on pays nothing.
    let consoleAssets: Promise<ConsoleAssets> | undefined;
    const loadConsole = () =>
      (consoleAssets ??= loadConsoleAssets().catch((error: unknown) => {
        consoleAssets = undefined; // a failed build is tried again by the next request
        throw error;
      }));
    const server = await createGateway({ token: options.token, console: loadConsole });
    if (options.buildConsoleAtStart) void loadConsole().catch((error: unknown) => console.error('console build failed', error));
    const stopTimers = await startTimers(options.sweepEverySeconds ?? 30);
    const stopChecks = await startCheckbacks(options.checkbackEverySeconds ?? 60);
    const stopPush = await startPush();
    dispatcher = await startDispatcher({
      endpoint,
      tableName: options.tableName,
      dataDir: options.dataDir,
      ...(options.dispatchPollIntervalMs ? { pollIntervalMs: options.dispatchPollIntervalMs } : {}),
    });
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
      dispatcher,
      stop: async () => {
        stopTimers();
        stopChecks();
        stopPush();
        await dispatcher?.stop();
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
        await dynamo?.stop();
      },
    };
  } catch (error) {
    await dispatcher?.stop();
    await dynamo?.stop();
    throw error;
  }
}
