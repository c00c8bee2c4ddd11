/**
 * A consumer container as the HTTP long poll runs on AWS (SLUICE_NOTIFIER=activity): its own
 * DynamoDB clients (counting their calls and the capacity units DynamoDB Local reports), catalog
 * cache and activity waiter, on a real clock. For the long-poll tests that need a sender in another
 * container (test/reliability/activity-long-poll.test.ts, test/integration/long-poll-wide-fifo.test.ts).
 */
import { createDynamoClients } from '../../lib/adapters/dynamodb/client.js';
import { TopicActivity } from '../../lib/adapters/dynamodb/topic-activity.js';
import { cryptoRandom, type Random } from '../../lib/ports/random.js';
import { ActivityWaiter, FULL_RECEIVE_EVERY_MS } from '../../lib/services/activity-waiter.js';
import { QueueService } from '../../lib/services/queue-service.js';
import { createStores } from '../../lib/services/stores.js';
import { dynamoEndpoint } from './dynamo-endpoint.js';
import { FakeClock, testSecrets } from './stores.js';

/** The harness clock, but real: the waiter sleeps in real time. */
export class RealClock extends FakeClock {
  override now() {
    return Date.now();
  }
}

/** A consumer container on `table`; its client is destroyed by the cleanup it pushes onto `cleanups`. */
export function consumerContainer(
  table: string,
  clock: RealClock,
  timers: ConstructorParameters<typeof QueueService>[4],
  cleanups: Array<() => Promise<void> | void>,
  random: Random = cryptoRandom,
) {
  const { client, doc } = createDynamoClients({ endpoint: dynamoEndpoint(), requestTimeoutMs: 10_000 });
  const calls: string[] = [];
  /** Capacity units DynamoDB Local reported, reads and writes. */
  const units = { read: 0, write: 0 };
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const name = context.commandName ?? '?';
      const input = args.input as { Key?: { pk?: { S?: string } | string }; ReturnConsumedCapacity?: string };
      const pk = input.Key?.pk;
      calls.push(`${name}${(typeof pk === 'string' ? pk : pk?.S)?.startsWith('A#') ? ' A#' : ''}`);
      input.ReturnConsumedCapacity = 'TOTAL';
      const result = await next(args);
      const consumed = (result.output as { ConsumedCapacity?: { CapacityUnits?: number } | Array<{ CapacityUnits?: number }> }).ConsumedCapacity;
      const total = [consumed ?? []].flat().reduce((sum, c) => sum + (c.CapacityUnits ?? 0), 0);
      if (/^(Put|Update|Delete|TransactWrite|BatchWrite)/.test(name)) units.write += total;
      else units.read += total;
      return result;
    },
    { step: 'initialize', name: 'countCalls' },
  );
  cleanups.push(() => client.destroy());
  const stores = createStores(doc, table, { clock, secrets: testSecrets, catalog: { cacheTtlMs: 5000, now: () => clock.now() } });
  const waiter = new ActivityWaiter({ activity: new TopicActivity(doc, table), catalog: stores.catalog }, clock);
  const queue = new QueueService(stores, clock, random, waiter, timers, { pollIntervalMs: FULL_RECEIVE_EVERY_MS });
  const count = (name: string) => calls.filter((c) => c === name).length;
  return { queue, calls, count, units };
}
