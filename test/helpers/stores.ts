/** Builds real stores on DynamoDB Local, on a table of the test's own, with a clock the test controls. */
import { randomUUID } from 'node:crypto';
import { dynamoEndpoint } from './dynamo-endpoint.js';
import { createDynamoClients } from '../../lib/adapters/dynamodb/client.js';
import { ensureTable } from '../../lib/adapters/dynamodb/table.js';
import type { Clock } from '../../lib/ports/clock.js';
import type { Contention } from '../../lib/adapters/dynamodb/append-contention.js';
import { InProcessNotifier } from '../../lib/ports/notifier.js';
import type { DelayQueue, MinuteWake, OneTimeScheduler, ReleaseWake } from '../../lib/ports/timers.js';
import type { CheckDispatcher } from '../../lib/ports/webhooks.js';
import { TimerService } from '../../lib/services/timer-service.js';
import { TransactionService } from '../../lib/services/transaction-service.js';
import { HttpWebhookClient } from '../../lib/adapters/http/webhook-client.js';
import { LocalSecretBox } from '../../lib/adapters/local/secret-box.js';
import { randomBytes } from 'node:crypto';
import { cryptoRandom, type Random } from '../../lib/ports/random.js';
import { AdminService } from '../../lib/services/admin-service.js';
import { QueueService } from '../../lib/services/queue-service.js';
import { Redriver } from '../../lib/services/redriver.js';
import { DeferredReleaser } from '../../lib/services/releaser.js';
import { createStores, type Stores } from '../../lib/services/stores.js';
import { WritePlanner } from '../../lib/services/write-planner.js';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

export class FakeClock implements Clock {
  // Starts at the real time: signed webhooks are checked against real clocks (5 min tolerance).
  constructor(public t = Math.floor(Date.now() / 1000) * 1000) {}
  now() {
    return this.t;
  }
  advance(ms: number) {
    this.t += ms;
  }
}

/** One secrets key per test process: every harness on a table opens the same message-id key. */
export const testSecrets = new LocalSecretBox(randomBytes(32));

export const tableName = (prefix = 'test') => `${prefix}-${randomUUID().slice(0, 8)}`;

export async function testTable(prefix?: string) {
  const endpoint = dynamoEndpoint();
  const { client, doc } = createDynamoClients({ endpoint, requestTimeoutMs: 10_000 });
  const table = tableName(prefix);
  await ensureTable(client, table);
  return { endpoint, client, doc, table };
}

/** Timer adapters that only record what was armed; `fire()` runs what is due by the fake clock. */
export class RecordingTimers implements OneTimeScheduler, DelayQueue, CheckDispatcher {
  readonly minutes: Array<{ at: number; payload: MinuteWake }> = [];
  readonly releases: Array<{ at: number; payload: ReleaseWake }> = [];
  /** Check-backs armed with a delay (run them with `transactions.check`). */
  readonly checks: Array<{ at: number; transactionIds: string[] }> = [];
  constructor(private readonly clock: FakeClock) {}
  async dispatch(transactionIds: string[], delayMs = 0) {
    this.checks.push({ at: this.clock.now() + Math.max(0, delayMs), transactionIds });
  }
  async scheduleAt(_name: string, at: number, payload: MinuteWake) {
    this.minutes.push({ at, payload });
  }
  async send(payload: ReleaseWake, delayMs: number) {
    this.releases.push({ at: this.clock.now() + Math.max(0, delayMs), payload });
  }
}

export interface Harness {
  doc: DynamoDBDocumentClient;
  table: string;
  clock: FakeClock;
  stores: Stores;
  queue: QueueService;
  /** Releases due scheduled messages (what the timers call). */
  releaser: DeferredReleaser;
  admin: AdminService;
  timers: TimerService;
  recorded: RecordingTimers;
  transactions: TransactionService;
  redriver: Redriver;
  /** Transaction ids handed to the check workers by sweeps (run them with `transactions.check`). */
  dispatched: string[];
  /** Runs every recorded wake-up that is due by the fake clock (minute ones first). */
  fire(): Promise<void>;
}

export interface HarnessOptions {
  clock?: FakeClock;
  random?: Random;
  checkTimeoutMs?: number;
  pushLambdaArns?: readonly string[];
  /**
   * The cursor cache's age (ms, by the harness clock; docs/design.md, the cursor cache); default
   * SLUICE_TEST_CURSOR_CACHE_MS, else 0 (off, as `createStores` without it).
   */
  cursorCacheMs?: number;
  /** Write multi-record segments packed when smaller (default true, as deployed). */
  packSegments?: boolean;
  /** How lost append races wait and give up, for the stream log and the sender (default: real time, 2 s). */
  contention?: Contention;
  /** How lost claims on a FIFO shard's cursor wait (default: real time, random jitter). */
  claimContention?: Contention;
  /** Range claims on hot FIFO shards (default on, as deployed); off for tests of the ordinary claim's contention path. */
  rangeClaims?: boolean;
}

const defaultCursorCacheMs = (): number => Number(process.env.SLUICE_TEST_CURSOR_CACHE_MS ?? 0);

export function harness(
  doc: DynamoDBDocumentClient,
  table: string,
  options: HarnessOptions = {},
): Harness {
  const clock = options.clock ?? new FakeClock();
  const stores = createStores(doc, table, { clock, secrets: testSecrets, cursorCache: { maxAgeMs: options.cursorCacheMs ?? defaultCursorCacheMs() }, packSegments: options.packSegments ?? true, ...(options.contention ? { contention: options.contention } : {}) });
  const random = options.random ?? cryptoRandom;
  const notifier = new InProcessNotifier();
  const recorded = new RecordingTimers(clock);
  const releaser = new DeferredReleaser(stores, clock, notifier, new WritePlanner(clock, random));
  const timers = new TimerService(
    stores.deferred,
    recorded,
    recorded,
    clock,
    (ids) => releaser.releaseDue(ids),
    async (ms) => clock.advance(Math.max(0, ms)),
    undefined,
    undefined,
    recorded,
  );
  const queue = new QueueService(stores, clock, random, notifier, timers, { pollIntervalMs: 20, contention: options.contention, claimContention: options.claimContention, rangeClaims: options.rangeClaims });
  const fire = async () => {
    for (const list of [recorded.minutes, recorded.releases] as const) {
      const due = list.filter((w) => w.at <= clock.now());
      for (const w of due) list.splice(list.indexOf(w as never), 1);
      for (const w of due) {
        if (w.payload.kind === 'minute') await timers.onMinute(w.payload.minute);
        else await timers.onRelease(w.payload);
      }
    }
  };
  const dispatched: string[] = [];
  const transactions = new TransactionService(
    stores,
    releaser,
    clock,
    random,
    new HttpWebhookClient({ allowLoopback: true }),
    testSecrets,
    { dispatch: async (ids) => void dispatched.push(...ids) },
    { policy: { allowLoopback: true }, checkTimeoutMs: options.checkTimeoutMs ?? 2000, timers, wait: async (ms) => clock.advance(Math.max(0, ms)) },
  );
  const redriver = new Redriver(stores, clock, notifier);
  return { doc, table, clock, stores, queue, releaser, admin: new AdminService(stores, clock, {
      secrets: testSecrets,
      webhooks: new HttpWebhookClient({ allowLoopback: true }),
      policy: { allowLoopback: true },
      lambdaArns: options.pushLambdaArns,
    }), timers, recorded, fire, transactions, redriver, dispatched };
}

export async function newHarness(options: HarnessOptions = {}): Promise<Harness> {
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
