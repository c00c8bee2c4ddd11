/**
 * The composition root: clients, stores and services are built once per
 * container (cold start) from validated configuration.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { createDynamoClients } from '../../lib/adapters/dynamodb/client.js';
import { Catalog } from '../../lib/adapters/dynamodb/catalog.js';
import { CursorStore } from '../../lib/adapters/dynamodb/cursors.js';
import { Markers } from '../../lib/adapters/dynamodb/markers.js';
import { StreamLog } from '../../lib/adapters/dynamodb/stream-log.js';
import { systemClock } from '../../lib/ports/clock.js';
import { InProcessNotifier, pollingNotifier } from '../../lib/ports/notifier.js';
import { cryptoRandom } from '../../lib/ports/random.js';
import { AdminService } from '../../lib/services/admin-service.js';
import { QueueService, type Stores } from '../../lib/services/queue-service.js';
import { loadConfig, type Config } from './config.js';

export interface Container {
  config: Config;
  /** The DynamoDB client (the benchmark counts requests with a middleware on it). */
  dynamo: DynamoDBClient;
  logger: Logger;
  stores: Stores;
  queue: QueueService;
  admin: AdminService;
}

let instance: Container | undefined;

export function buildContainer(config: Config): Container {
  const { client, doc } = createDynamoClients({ endpoint: config.DYNAMODB_ENDPOINT, region: config.AWS_REGION });
  const table = config.SLUICE_TABLE_NAME;
  const stores: Stores = {
    catalog: new Catalog(doc, table),
    log: new StreamLog(doc, table, systemClock),
    cursors: new CursorStore(doc, table),
    markers: new Markers(doc, table),
  };
  const notifier = config.SLUICE_NOTIFIER === 'in-process' ? new InProcessNotifier() : pollingNotifier;
  const logger = new Logger({ serviceName: 'sluice' });
  return {
    config,
    dynamo: client,
    logger,
    stores,
    queue: new QueueService(stores, systemClock, cryptoRandom, notifier, { pollIntervalMs: config.SLUICE_POLL_INTERVAL_MS }),
    admin: new AdminService(stores, systemClock),
  };
}

/** The container of this process, built from the environment on first use. */
export function container(): Container {
  instance ??= buildContainer(loadConfig(process.env));
  return instance;
}
