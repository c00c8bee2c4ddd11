import type { AppendObserver } from '../ports/append-observer.js';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { BatchWriter } from '../adapters/dynamodb/write-batch.js';
import type { Contention } from '../adapters/dynamodb/append-contention.js';
import { Catalog, type CatalogOptions } from '../adapters/dynamodb/catalog.js';
import { CursorCache, type CursorCacheOptions } from '../adapters/dynamodb/cursor-cache.js';
import { CursorStore } from '../adapters/dynamodb/cursors.js';
import { DeadLetterCounts } from '../adapters/dynamodb/dead-letter-counts.js';
import { DeferredStore } from '../adapters/dynamodb/deferred.js';
import { HistoryStore } from '../adapters/dynamodb/history.js';
import { Markers } from '../adapters/dynamodb/markers.js';
import { MessageIdKeys } from '../adapters/dynamodb/message-id-keys.js';
import { PendingOutputStore } from '../adapters/dynamodb/pending-outputs.js';
import { ProducerStore } from '../adapters/dynamodb/producers.js';
import { PushStateStore } from '../adapters/dynamodb/push-state.js';
import { ReadyIndex } from '../adapters/dynamodb/ready-index.js';
import { ReadyHorizon } from '../adapters/dynamodb/ready-horizon.js';
import { coverReadyWrites } from '../adapters/dynamodb/ready-horizon-cover.js';
import { RedriveStore } from '../adapters/dynamodb/redrives.js';
import { StreamLog } from '../adapters/dynamodb/stream-log.js';
import { segmentWantsWake } from '../domain/wake-flag.js';
import type { Clock } from '../ports/clock.js';
import type { SecretBox } from '../ports/webhooks.js';

/** The DynamoDB stores the services work with (one table: docs/design.md; its keys: adapters/dynamodb/keys.ts). */
export interface Stores {
  /** Topics and consumer groups. */
  catalog: Catalog;
  /** Stream segments: every message enters a stream here. */
  log: StreamLog;
  /** Cursor items: claims, commits, visibility, dead-letter closes. */
  cursors: CursorStore;
  /** Completions spilled from cursors, kept for the messages' retention. */
  history: HistoryStore;
  /** The FIFO ready index of shard cursors (the query; cursor writes maintain it). */
  readyIndex: ReadyIndex;
  /** Publish outputs of pending protected commits. */
  outputs: PendingOutputStore;
  /** Dedup markers and the key index. */
  markers: Markers;
  /** Scheduled and half messages, check records, wake markers. */
  deferred: DeferredStore;
  /** Producer groups. */
  producers: ProducerStore;
  /** Push groups' last attempts. */
  pushState: PushStateStore;
  /** Named write batches written without a stream segment. */
  writer: BatchWriter;
  /** A group's dead letters waiting for a redrive, and the redrive's marks. */
  redrives: RedriveStore;
  /** How many messages each group has dead-lettered (counted in the dead-letter transaction). */
  deadLetterCounts: DeadLetterCounts;
  /** The deployment's message-id key: seals message ids and receipt handles. */
  ids: MessageIdKeys;
}

/**
 * Every store on one table; `catalog` configures its per-container cache, `cursorCache` the
 * per-container cache of partition cursors (off unless given, on in deployed containers);
 * `secrets` seals the message-id key (every container of a deployment needs
 * the same one); `packSegments` (default on) lets multi-record segments be written packed
 * (segment-records.ts; every version of the readers takes both forms).
 */
export function createStores(
  doc: DynamoDBDocumentClient,
  table: string,
  options: {
    clock: Clock;
    secrets: SecretBox;
    catalog?: CatalogOptions;
    cursorCache?: CursorCacheOptions;
    packSegments?: boolean;
    contention?: Contention;
    /** Told each append's outcome (services/append-meter.ts); deployed containers count them. */
    observeAppends?: AppendObserver;
  },
): Stores {
  const history = new HistoryStore(doc, table);
  // Every ready-index write through `doc` covers its group's horizon first (ready-horizon.ts).
  const horizon = new ReadyHorizon(doc, table, options.clock);
  coverReadyWrites(doc, horizon);
  const catalog = new Catalog(doc, table, options.catalog);
  return {
    catalog,
    log: new StreamLog(doc, table, options.clock, wakeCheck(catalog), {
      packSegments: options.packSegments ?? true,
      ...(options.contention ? { contention: options.contention } : {}),
      ...(options.observeAppends ? { observe: options.observeAppends } : {}),
    }),
    cursors: new CursorStore(doc, table, history, new CursorCache({ now: options.clock.now.bind(options.clock), ...options.cursorCache })),
    history,
    readyIndex: new ReadyIndex(doc, table, horizon),
    outputs: new PendingOutputStore(doc, table),
    markers: new Markers(doc, table),
    deferred: new DeferredStore(doc, table),
    producers: new ProducerStore(doc, table),
    pushState: new PushStateStore(doc, table),
    writer: new BatchWriter(doc),
    redrives: new RedriveStore(doc, table),
    deadLetterCounts: new DeadLetterCounts(doc, table),
    ids: new MessageIdKeys(doc, table, options.secrets),
  };
}

/**
 * The appender's wake check: a segment carries `w` when one of its topics
 * has a push subscription or a consumer parked on it (domain/wake-flag.ts),
 * as the catalog's cached topic items say. Every append path read those
 * topics just before (validation), so with the data plane's cache this costs
 * no read; a topic cached before a consumer parked is seen parked at most
 * `cacheTtlMs` later, which the waiter covers with a full receive at least
 * that often (docs/design.md, "Waking pull consumers").
 */
function wakeCheck(catalog: Catalog) {
  return async (topics: readonly string[], now: number): Promise<boolean> => {
    const known = await catalog.topics(topics);
    return [...known.values()].some((topic) => segmentWantsWake(topic, now));
  };
}
