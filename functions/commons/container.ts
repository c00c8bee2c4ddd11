/**
 * The composition root: clients, stores and services are built once per
 * container (cold start) from validated configuration.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { createDynamoClients } from '../../lib/adapters/dynamodb/client.js';
import { systemClock } from '../../lib/ports/clock.js';
import { InProcessNotifier, pollingNotifier } from '../../lib/ports/notifier.js';
import { cryptoRandom } from '../../lib/ports/random.js';
import { AdminService } from '../../lib/services/admin-service.js';
import { Seeker } from '../../lib/services/seeker.js';
import { QueueService } from '../../lib/services/queue-service.js';
import { DeferredReleaser } from '../../lib/services/releaser.js';
import { createStores, type Stores } from '../../lib/services/stores.js';
import { WritePlanner } from '../../lib/services/write-planner.js';
import { SchedulerClient } from '@aws-sdk/client-scheduler';
import { SQSClient } from '@aws-sdk/client-sqs';
import { EventBridgeScheduler } from '../../lib/adapters/aws/scheduler.js';
import { SqsDelayQueue } from '../../lib/adapters/aws/delay-queue.js';
import { LocalTimerBus } from '../../lib/adapters/local/timer-bus.js';
import type { DelayQueue, OneTimeScheduler } from '../../lib/ports/timers.js';
import { TimerService } from '../../lib/services/timer-service.js';
import { randomBytes } from 'node:crypto';
import { AsyncLocalStorage } from 'node:async_hooks';
import { KMSClient } from '@aws-sdk/client-kms';
import { KmsSecretBox } from '../../lib/adapters/aws/kms-secret-box.js';
import { SqsCheckDispatcher } from '../../lib/adapters/aws/check-dispatcher.js';
import { LocalCheckDispatcher } from '../../lib/adapters/local/check-dispatcher.js';
import { LocalSecretBox } from '../../lib/adapters/local/secret-box.js';
import { HttpWebhookClient } from '../../lib/adapters/http/webhook-client.js';
import { TransactionService } from '../../lib/services/transaction-service.js';
import { loadConfig, type Config } from './config.js';
import { TopicActivity } from '../../lib/adapters/dynamodb/topic-activity.js';
import { ActivityRoute } from '../../lib/services/activity-route.js';
import { ActivityWaiter, FULL_RECEIVE_EVERY_MS } from '../../lib/services/activity-waiter.js';
import { Dispatcher } from '../../lib/services/dispatcher.js';
import { Redriver } from '../../lib/services/redriver.js';
import { LocalPushBus } from '../../lib/adapters/local/push-bus.js';
import { SqsPushQueue } from '../../lib/adapters/aws/sqs-push-queue.js';
import { AwsLambdaInvoker } from '../../lib/adapters/aws/lambda-invoker.js';
import { LambdaClient } from '@aws-sdk/client-lambda';
import type { PushQueue } from '../../lib/ports/push-queue.js';
import { Pusher } from '../../lib/services/pusher.js';
import { emitPushFailures } from './push-failure-metrics.js';
import { AppendMeter } from '../../lib/services/append-meter.js';
import { PushRoute } from '../../lib/services/push-route.js';
import { DoorbellRoute } from '../../lib/services/doorbell-route.js';
import { DoorbellParker } from '../../lib/services/doorbell-parker.js';
import { TopicDoorbellGroups } from '../../lib/adapters/dynamodb/doorbell-groups.js';
import { InProcessDoorbell } from '../../lib/adapters/local/in-process-doorbell.js';
import { SqsDoorbell } from '../../lib/adapters/aws/sqs-doorbell.js';
import { SqsDoorbellQueues } from '../../lib/adapters/aws/sqs-doorbell-queues.js';
import type { DoorbellQueues } from '../../lib/ports/doorbell.js';

export interface Container {
  config: Config;
  /** The DynamoDB client (the benchmark counts requests with a middleware on it). */
  dynamo: DynamoDBClient;
  logger: Logger;
  stores: Stores;
  queue: QueueService;
  admin: AdminService;
  /** Seek (POST /v1/groups/{g}/seek). */
  seeker: Seeker;
  timers: TimerService;
  transactions: TransactionService;
  /** Redrive of a group's dead letters. */
  redriver: Redriver;
  /** Routes flagged segment inserts from the table's stream (functions/dispatch/dispatcher.ts). */
  dispatcher: Dispatcher;
  /** Local runtime only: the in-process scheduler and delay queue, whose targets the runtime sets. */
  localTimers: LocalTimerBus | undefined;
  /** Local runtime only: the in-process check-back fan-out. */
  localChecks: LocalCheckDispatcher | undefined;
  /** The push worker (functions/push/worker.ts). */
  pusher: Pusher;
  /** Local runtime only: the in-process push queue, whose target the runtime sets. */
  localPush: LocalPushBus | undefined;
  /** Local runtime only: the pull groups' doorbells, rung by the dispatcher, waited on by parking long polls. */
  localDoorbell: InProcessDoorbell | undefined;
  /** Counts this container's appends per topic; the HTTP edge writes the contended ones as metrics (append-metrics.ts). */
  appendMeter: AppendMeter;
}

let instance: Container | undefined;

/** What a caller may put in place of the AWS adapters the configuration would choose (the benchmark's stand-ins). */
export interface ContainerOverrides {
  /** Pull groups' doorbell queues (instead of SQS from SLUICE_DOORBELL_PREFIX): parking receives answer doorbells. */
  doorbellQueues?: DoorbellQueues;
}

export function buildContainer(config: Config, overrides: ContainerOverrides = {}): Container {
  const { client, doc } = createDynamoClients({ endpoint: config.DYNAMODB_ENDPOINT, region: config.AWS_REGION });
  const table = config.SLUICE_TABLE_NAME;
  // Seals producer signing secrets and the message-id key.
  const secrets = config.SLUICE_KMS_KEY_ID
    ? new KmsSecretBox(new KMSClient({ region: config.AWS_REGION }), config.SLUICE_KMS_KEY_ID)
    : // Without a configured key (tests), secrets live as long as this process.
      new LocalSecretBox(config.SLUICE_SECRETS_KEY ? Buffer.from(config.SLUICE_SECRETS_KEY, 'base64') : randomBytes(32));
  const appendMeter = new AppendMeter(systemClock);
  const stores = createStores(doc, table, {
    observeAppends: appendMeter.record,
    clock: systemClock,
    secrets,
    catalog: { cacheTtlMs: config.SLUICE_CATALOG_CACHE_MS, now: systemClock.now },
    cursorCache: { maxAgeMs: config.SLUICE_CURSOR_CACHE_MS, now: systemClock.now },
    packSegments: config.SLUICE_PACK_SEGMENTS === 'on',
  });
  const activity = new TopicActivity(doc, table);
  const notifier =
    config.SLUICE_NOTIFIER === 'in-process'
      ? new InProcessNotifier()
      : config.SLUICE_NOTIFIER === 'activity'
        ? new ActivityWaiter({ activity, catalog: stores.catalog }, systemClock, { senderCacheMs: config.SLUICE_CATALOG_CACHE_MS })
        : pollingNotifier;
  // The activity waiter ends a wait when a topic moves or something may have become claimable without a send (activity-waiter.ts).
  const pollIntervalMs = config.SLUICE_NOTIFIER === 'activity' ? FULL_RECEIVE_EVERY_MS : config.SLUICE_POLL_INTERVAL_MS;
  const logger = new Logger({ serviceName: 'sluice' });
  let localTimers: LocalTimerBus | undefined;
  let scheduler: OneTimeScheduler;
  let delayQueue: DelayQueue;
  if (config.SLUICE_TIMERS === 'aws') {
    scheduler = new EventBridgeScheduler(new SchedulerClient({ region: config.AWS_REGION }), {
      groupName: config.SLUICE_SCHEDULE_GROUP ?? '',
      functionArn: config.SLUICE_TIMER_FUNCTION_ARN ?? '',
      roleArn: config.SLUICE_SCHEDULER_ROLE_ARN ?? '',
    });
    delayQueue = new SqsDelayQueue(new SQSClient({ region: config.AWS_REGION }), config.SLUICE_DELAY_QUEUE_URL ?? '');
  } else {
    localTimers = new LocalTimerBus();
    scheduler = localTimers;
    delayQueue = localTimers;
  }
  // Sends arm timers; timers and transaction commits release deferred messages into their streams.
  const releaser = new DeferredReleaser(stores, systemClock, notifier, new WritePlanner(systemClock, cryptoRandom), (message, details) =>
    logger.error(message, details),
  );
  let localChecks: LocalCheckDispatcher | undefined;
  const dispatcher = config.SLUICE_CHECK_QUEUE_URL
    ? new SqsCheckDispatcher(new SQSClient({ region: config.AWS_REGION }), config.SLUICE_CHECK_QUEUE_URL)
    : (localChecks = new LocalCheckDispatcher());
  const timers = new TimerService(
    stores.deferred,
    scheduler,
    delayQueue,
    systemClock,
    (ids) => releaser.releaseDue(ids),
    undefined,
    (message, details) => logger.error(message, details),
    undefined,
    dispatcher,
  );
  // Doorbells (docs/design.md, "Waking SDK consumers"): SQS queues per group on AWS, in-process locally.
  const sqsDoorbells = overrides.doorbellQueues ?? (config.SLUICE_DOORBELL_PREFIX ? new SqsDoorbellQueues(new SQSClient({ region: config.AWS_REGION }), config.SLUICE_DOORBELL_PREFIX) : undefined);
  const localDoorbell = sqsDoorbells ? undefined : new InProcessDoorbell();
  const queue = new QueueService(stores, systemClock, cryptoRandom, notifier, timers, {
    pollIntervalMs,
    doorbells: { parker: new DoorbellParker(stores.catalog, systemClock, config.SLUICE_CATALOG_CACHE_MS), queues: sqsDoorbells, waiter: localDoorbell, stamps: activity, log: (message, details) => logger.warn(message, details) },
  });
  const transactions = new TransactionService(
    stores,
    releaser,
    systemClock,
    cryptoRandom,
    new HttpWebhookClient({ allowLoopback: config.SLUICE_ALLOW_LOOPBACK_CHECKERS === 'true' }),
    secrets,
    dispatcher,
    {
      policy: { allowLoopback: config.SLUICE_ALLOW_LOOPBACK_CHECKERS === 'true' },
      checkTimeoutMs: config.SLUICE_CHECK_TIMEOUT_MS,
      log: (message, details) => logger.warn(message, details),
      timers,
    },
  );
  const dispatchLog = {
    warn: (message: string, details: Record<string, unknown>) => logger.warn(message, details),
    error: (message: string, details: Record<string, unknown>) => logger.error(message, details),
  };
  let localPush: LocalPushBus | undefined;
  const pushQueue: PushQueue = config.SLUICE_PUSH_QUEUE_URL
    ? new SqsPushQueue(new SQSClient({ region: config.AWS_REGION }), config.SLUICE_PUSH_QUEUE_URL)
    : (localPush = new LocalPushBus());
  const pushWebhooks = new HttpWebhookClient({ allowLoopback: config.SLUICE_ALLOW_LOOPBACK_CHECKERS === 'true' });
  // Lambda targets exist only on AWS, and only those the construct allows (`pushTargets`).
  const pushLambdaArns = config.SLUICE_TIMERS === 'aws' ? config.SLUICE_PUSH_LAMBDA_ARNS.split(',').map((a) => a.trim()).filter((a) => a !== '') : undefined;
  const pusher = new Pusher(stores, queue, pushWebhooks, secrets, pushQueue, systemClock, cryptoRandom, {
    log: (message, details) => logger.warn(message, details),
    ...(pushLambdaArns?.length ? { lambda: new AwsLambdaInvoker(new LambdaClient({ region: config.AWS_REGION })) } : {}),
    // On AWS (the push queue is SQS) failed requests become the group's PushFailures metric (EMF).
    ...(config.SLUICE_PUSH_QUEUE_URL ? { failures: emitPushFailures } : {}),
  });
  const streamDispatcher = new Dispatcher(
    {
      wake: [
        new ActivityRoute(activity, dispatchLog, stores.catalog),
        new PushRoute(stores.catalog, pushQueue, Math.max(1000, config.SLUICE_CATALOG_CACHE_MS), dispatchLog),
        new DoorbellRoute(
          new TopicDoorbellGroups(stores.catalog),
          localDoorbell ??
            new SqsDoorbell(
              new SQSClient({ region: config.AWS_REGION }),
              // A cached group item may predate its queue: read it again before giving up on the ring.
              async (group) => (await stores.catalog.group(group))?.doorbellQueueUrl ?? (await stores.catalog.getGroup(group))?.doorbellQueueUrl,
              systemClock,
            ),
          dispatchLog,
        ),
      ],
    },
    systemClock,
    dispatchLog,
  );
  return {
    config,
    dynamo: client,
    logger,
    stores,
    queue,
    admin: new AdminService(stores, systemClock, {
      secrets,
      webhooks: new HttpWebhookClient({ allowLoopback: config.SLUICE_ALLOW_LOOPBACK_CHECKERS === 'true' }),
      policy: { allowLoopback: config.SLUICE_ALLOW_LOOPBACK_CHECKERS === 'true' },
      lambdaArns: pushLambdaArns,
    }, sqsDoorbells ? { queues: sqsDoorbells, log: (message, details) => logger.warn(message, details) } : undefined),
    seeker: new Seeker(stores, systemClock),
    timers,
    transactions,
    redriver: new Redriver(stores, systemClock, notifier, pushQueue, config.SLUICE_CATALOG_CACHE_MS),
    dispatcher: streamDispatcher,
    localTimers,
    localChecks,
    pusher,
    localPush,
    localDoorbell,
    appendMeter,
  };
}

/** A request's own container, when its caller gave it one ({@link inContainer}). */
const scoped = new AsyncLocalStorage<Container>();

/**
 * Runs `fn` (a handler's invocation) with {@link container} answering `c` in it and everything it
 * awaits. The local gateway does this for a caller that serves each of its clients with a container
 * of its own, as concurrent Lambda invocations are (the benchmark's scale rows); on Lambda nothing
 * does, and every invocation of a container shares its one instance.
 */
export function inContainer<T>(c: Container, fn: () => T): T {
  return scoped.run(c, fn);
}

/**
 * The container of this process, built from the environment on first use — or the request's own
 * inside {@link inContainer}. (A route's error logs go through the process's logger, taken when
 * its module loads: functions/commons/http.ts.)
 */
export function container(): Container {
  const own = scoped.getStore();
  if (own) return own;
  instance ??= buildContainer(loadConfig(process.env));
  return instance;
}
