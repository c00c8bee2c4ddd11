/**
 * The dispatcher's event source on the local runtime: the stream poller reads
 * DynamoDB Local's real stream of the table with the filters and batching of
 * the AWS event source mapping (lib/adapters/dynamodb/dispatch-source.ts) and
 * invokes the dispatcher Lambda's handler with the same event.
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';
import { createDynamoClients } from '../lib/adapters/dynamodb/client.js';
import { DISPATCH_FILTERS, DISPATCH_SOURCE } from '../lib/adapters/dynamodb/dispatch-source.js';
import { latestStreamArn } from '../lib/adapters/dynamodb/table.js';
import { FileCheckpoints, MemoryCheckpoints } from '../lib/adapters/local/stream-checkpoints.js';
import { StreamPoller, streamsApiOf } from '../lib/adapters/local/stream-poller.js';
import { lambdaContext } from './gateway.js';

/** Commands of the DynamoDB clients (low-level and document) that write items. */
const WRITES = /^(Put|Update|Delete|TransactWrite|BatchWrite)(Item|Items)?Command$/;
const NUDGE_MIDDLEWARE = 'sluiceDispatcherNudge';

/** Nudges `poller` after every write `client` makes; returns the function that stops it. */
export function nudgeOnWrites(client: DynamoDBClient, poller: Pick<StreamPoller, 'nudge'>): () => void {
  client.middlewareStack.add(
    (next, context) => async (args) => {
      try {
        return await next(args);
      } finally {
        if (WRITES.test(context.commandName ?? '')) poller.nudge();
      }
    },
    { step: 'initialize', name: NUDGE_MIDDLEWARE },
  );
  return () => void client.middlewareStack.remove(NUDGE_MIDDLEWARE);
}

export interface LocalDispatcherOptions {
  endpoint: string;
  tableName: string;
  /** Where the checkpoints are kept across restarts (undefined: in memory, like the data). */
  dataDir: string | undefined;
  /** How often a shard is read again while records come (it backs off to 500 ms while idle). @default 50 */
  pollIntervalMs?: number;
}

export interface LocalDispatcher {
  poller: StreamPoller;
  stop(): Promise<void>;
}

export async function startDispatcher(options: LocalDispatcherOptions): Promise<LocalDispatcher> {
  const { container } = await import('../functions/commons/container.js');
  const { handler } = await import('../functions/dispatch/dispatcher.js');
  const { logger, dynamo } = container();
  const { client } = createDynamoClients({ endpoint: options.endpoint });
  const streams = new DynamoDBStreamsClient({
    endpoint: options.endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    maxAttempts: 1,
  });
  try {
    const streamArn = await latestStreamArn(client, options.tableName);
    const poller = new StreamPoller({
      streams: streamsApiOf(streams),
      streamArn,
      handler: (event) => handler(event as never, lambdaContext('dispatcher', randomUUID())),
      filters: DISPATCH_FILTERS,
      startingPosition: DISPATCH_SOURCE.startingPosition,
      batchSize: DISPATCH_SOURCE.batchSize,
      maxBatchingWindowMs: DISPATCH_SOURCE.maxBatchingWindowSeconds * 1000,
      bisectBatchOnError: DISPATCH_SOURCE.bisectBatchOnError,
      retryAttempts: DISPATCH_SOURCE.retryAttempts,
      maxRecordAgeMs: DISPATCH_SOURCE.maxRecordAgeSeconds * 1000,
      pollIntervalMs: options.pollIntervalMs ?? 50,
      checkpoints: options.dataDir ? new FileCheckpoints(join(options.dataDir, 'stream-checkpoints.json')) : new MemoryCheckpoints(),
      log: { warn: (message, details) => logger.warn(message, details ?? {}), error: (message, details) => logger.error(message, details ?? {}) },
      onFailure: (batch) => logger.error('dispatcher batch given up (the on-failure destination on AWS)', { ...batch }),
    });
    await poller.start();
    // The runtime's own writes (every send, release, commit…) nudge the poller, so it reads the
    // stream at once instead of after its idle back-off; writes from elsewhere wait for that.
    const stopNudging = nudgeOnWrites(dynamo, poller);
    return {
      poller,
      stop: async () => {
        stopNudging();
        await poller.stop();
        streams.destroy();
      },
    };
  } catch (error) {
    streams.destroy();
    throw error;
  } finally {
    client.destroy();
  }
}
