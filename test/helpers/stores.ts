/** Builds real stores on DynamoDB Local, on a table of the test's own, with a clock the test controls. */
import { randomUUID } from 'node:crypto';
import { inject } from 'vitest';
import { createDynamoClients } from '../../lib/adapters/dynamodb/client.js';
import { Catalog } from '../../lib/adapters/dynamodb/catalog.js';
import { CursorStore } from '../../lib/adapters/dynamodb/cursors.js';
import { Markers } from '../../lib/adapters/dynamodb/markers.js';
import { StreamLog } from '../../lib/adapters/dynamodb/stream-log.js';
import { ensureTable } from '../../lib/adapters/dynamodb/table.js';
import type { Clock, Random } from '../../lib/ports/clock.js';
import { InProcessNotifier } from '../../lib/ports/notifier.js';
import { cryptoRandom } from '../../lib/ports/random.js';
import { AdminService } from '../../lib/services/admin-service.js';
import { QueueService, type Stores } from '../../lib/services/queue-service.js';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

export class FakeClock implements Clock {
  constructor(public t = Date.UTC(2026, 10, 30, 12, 0, 0)) {}
  now() {
    return this.t;
  }
  advance(ms: number) {
    this.t += ms;
  }
}

export const tableName = (prefix = 'test') => `${prefix}-${randomUUID().slice(0, 8)}`;

export async function testTable(prefix?: string) {
  const endpoint = inject('dynamoEndpoint');
  const { client, doc } = createDynamoClients({ endpoint, requestTimeoutMs: 10_000 });
  const table = tableName(prefix);
  await ensureTable(client, table);
  return { endpoint, client, doc, table };
}

export interface Harness {
  doc: DynamoDBDocumentClient;
  table: string;
  clock: FakeClock;
  stores: Stores;
  queue: QueueService;
  admin: AdminService;
}

export function harness(doc: DynamoDBDocumentClient, table: string, options: { clock?: FakeClock; random?: Random } = {}): Harness {
  const clock = options.clock ?? new FakeClock();
  const stores: Stores = {
    catalog: new Catalog(doc, table),
    log: new StreamLog(doc, table, clock),
    cursors: new CursorStore(doc, table),
    markers: new Markers(doc, table),
  };
  return {
    doc,
    table,
    clock,
    stores,
    queue: new QueueService(stores, clock, options.random ?? cryptoRandom, new InProcessNotifier(), { pollIntervalMs: 20 }),
    admin: new AdminService(stores, clock),
  };
}

export async function newHarness(options: { clock?: FakeClock; random?: Random } = {}): Promise<Harness> {
  const { doc, table } = await testTable();
  return harness(doc, table, options);
}

export const send = (body: string, extra: Partial<Parameters<QueueService['send']>[1]> = {}) => ({
  body,
  encoding: 'utf8' as const,
  tag: undefined,
  keys: [],
  properties: {},
  shardKey: undefined,
  delaySeconds: undefined,
  deliverAt: undefined,
  dedupId: undefined,
  ...extra,
});
