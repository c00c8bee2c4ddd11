import type { BatchWriter } from '../adapters/dynamodb/write-batch.js';
import type { Catalog } from '../adapters/dynamodb/catalog.js';
import type { CursorStore } from '../adapters/dynamodb/cursors.js';
import type { DeferredStore } from '../adapters/dynamodb/deferred.js';
import type { Markers } from '../adapters/dynamodb/markers.js';
import type { PendingOutputStore } from '../adapters/dynamodb/pending-outputs.js';
import type { ProducerStore } from '../adapters/dynamodb/producers.js';
import type { ReadyIndex } from '../adapters/dynamodb/ready-index.js';
import type { StreamLog } from '../adapters/dynamodb/stream-log.js';

/** The DynamoDB stores the services work with (one table, see docs/design.md). */
export interface Stores {
  catalog: Catalog;
  log: StreamLog;
  cursors: CursorStore;
  readyIndex: ReadyIndex;
  outputs: PendingOutputStore;
  markers: Markers;
  deferred: DeferredStore;
  producers: ProducerStore;
  /** Named write batches written without a stream segment. */
  writer: BatchWriter;
}
