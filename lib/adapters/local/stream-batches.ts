/**
 * How the local stream poller hands records to its handler, as a Lambda event
 * source mapping does (https://docs.aws.amazon.com/lambda/latest/dg/with-ddb.html,
 * .../services-ddb-batchfailurereporting.html): batches of at most
 * `batchSize` records and 6 MB of event; a batch that throws is split in two
 * (`bisectBatchOnError`, not counted as a retry), a batch of one is retried
 * `retryAttempts` times with back-off; a partial batch response retries from
 * the lowest failed record (an identifier not in the batch fails all of it);
 * records older than `maxRecordAgeMs` or out of retries go to `onFailure`.
 * Reading shards and checkpoints stay with the poller (stream-poller.ts).
 */
import type { _Record as SdkChangeRecord } from '@aws-sdk/client-dynamodb-streams';
import { matchesAny, type EventPattern } from '../../domain/event-pattern.js';
import type { ChangeBatchResponse, ChangeHandler, ChangeRecord } from '../../ports/change-stream.js';
import { changeRecordOf } from '../dynamodb/stream-records.js';

/** What the on-failure destination gets: the batch's place in the stream, not its records (as Lambda's `DDBStreamBatchInfo`). */
export interface FailedBatch {
  /** `RecordUnreadable` is local only: a record the poller could not turn into Lambda's shape. */
  condition: 'RetryAttemptsExhausted' | 'RecordAgeExceeded' | 'RecordUnreadable';
  streamArn: string;
  shardId: string;
  startSequenceNumber: string;
  endSequenceNumber: string;
  batchSize: number;
  /** The last error the handler threw, or the records a partial batch response named. */
  error: string | undefined;
}

export interface PollerLog {
  warn(message: string, details?: Record<string, unknown>): void;
  error(message: string, details?: Record<string, unknown>): void;
}

/** The counters of handing over (part of the poller's `stats`). */
export interface BatchStats {
  recordsPassed: number;
  invocations: number;
  /** The handler's time, each invocation rounded up to 1 ms as Lambda bills it (the benchmark prices it). */
  handlerBilledMs: number;
  failedInvocations: number;
  retries: number;
  bisections: number;
  failedBatches: number;
  recordsToFailure: number;
}

/** The event source mapping's settings that shape batches and retries (see `StreamPollerOptions`). */
export interface BatchSettings {
  streamArn: string;
  handler: ChangeHandler;
  filters: readonly EventPattern[];
  batchSize: number;
  bisectBatchOnError: boolean;
  retryAttempts: number;
  retryBaseDelayMs: number;
  maxRecordAgeMs?: number | undefined;
  onFailure?: ((batch: FailedBatch) => void) | undefined;
  log: PollerLog;
  now: () => number;
}

/** What the poller lends: its counters, its stoppable sleep, and whether it was stopped. */
export interface BatchRuntime {
  stats: BatchStats;
  sleep(ms: number): Promise<void>;
  stopped(): boolean;
}

/** A record as read from a shard. */
export interface Entry {
  record: ChangeRecord;
  sequenceNumber: string;
  readAt: number;
  bytes: number;
  passes: boolean;
  /** Why the record could not be mapped (it is given up rather than stall its shard). */
  unreadable?: string;
}

/** Thrown out of a hand-over when the poller stops: the batch in flight is not retried further. */
export class StoppedError extends Error {}

/** Lambda's synchronous invocation payload limit: a batch's event stays below it. */
const MAX_EVENT_BYTES = 6 * 1024 * 1024;
/** The longest wait between two attempts (the poller's read retries use it too). */
export const MAX_RETRY_DELAY_MS = 1000;

export class BatchInvoker {
  constructor(
    private readonly settings: BatchSettings,
    private readonly runtime: BatchRuntime,
  ) {}

  /** A record as read, mapped to Lambda's shape and matched against the filters. */
  entry(raw: SdkChangeRecord, readAt: number): Entry {
    let record: ChangeRecord;
    try {
      record = changeRecordOf(raw, this.settings.streamArn);
    } catch (error) {
      const sequenceNumber = raw.dynamodb?.SequenceNumber ?? '';
      return { record: {}, sequenceNumber, readAt, bytes: 0, passes: false, unreadable: String(error) };
    }
    const passes = this.settings.filters.length === 0 || matchesAny(this.settings.filters, record);
    // Only records that are handed over count toward the 6 MB event: skip the sizing of the rest.
    const bytes = passes ? Buffer.byteLength(JSON.stringify(record)) : 0;
    return { record, sequenceNumber: record.dynamodb?.SequenceNumber ?? '', readAt, bytes, passes };
  }

  /** Hands the passing records of `entries` over in batches (the caller then moves its checkpoint past all of them). */
  async deliver(shardId: string, entries: Entry[]): Promise<void> {
    for (const entry of entries.filter((e) => e.unreadable !== undefined)) this.fail(shardId, [entry], 'RecordUnreadable', entry.unreadable);
    const passing = entries.filter((e) => e.passes);
    this.runtime.stats.recordsPassed += passing.length;
    let batch: Entry[] = [];
    let bytes = 0;
    for (const entry of passing) {
      if (batch.length > 0 && (batch.length >= this.settings.batchSize || bytes + entry.bytes > MAX_EVENT_BYTES)) {
        await this.invoke(shardId, batch);
        batch = [];
        bytes = 0;
      }
      batch.push(entry);
      bytes += entry.bytes;
    }
    if (batch.length > 0) await this.invoke(shardId, batch);
  }

  /** Runs the handler on `batch` until it succeeds or the batch is given up (see the module comment). */
  private async invoke(shardId: string, batch: Entry[]): Promise<void> {
    let pending = batch;
    let retries = 0;
    for (;;) {
      if (this.runtime.stopped()) throw new StoppedError();
      const first = pending[0];
      const limit = this.settings.maxRecordAgeMs;
      if (first && limit !== undefined && this.settings.now() - first.readAt > limit) {
        return this.fail(shardId, pending, 'RecordAgeExceeded', undefined);
      }
      const outcome = await this.call(pending);
      if (outcome.failedFrom === undefined) return;
      this.runtime.stats.failedInvocations++;
      pending = pending.slice(outcome.failedFrom);
      if (this.settings.bisectBatchOnError && pending.length > 1) {
        this.runtime.stats.bisections++;
        const half = Math.ceil(pending.length / 2);
        await this.invoke(shardId, pending.slice(0, half));
        return this.invoke(shardId, pending.slice(half));
      }
      if (retries >= this.settings.retryAttempts) return this.fail(shardId, pending, 'RetryAttemptsExhausted', outcome.error);
      retries++;
      this.runtime.stats.retries++;
      await this.runtime.sleep(Math.min(MAX_RETRY_DELAY_MS, this.settings.retryBaseDelayMs * 2 ** (retries - 1)));
    }
  }

  /** One invocation: undefined `failedFrom` when every record was handled. */
  private async call(batch: Entry[]): Promise<{ failedFrom: number | undefined; error: string | undefined }> {
    this.runtime.stats.invocations++;
    let response: ChangeBatchResponse | void;
    const started = performance.now();
    try {
      response = await this.settings.handler({ Records: batch.map((e) => e.record) });
    } catch (error) {
      return { failedFrom: 0, error: error instanceof Error ? `${error.name}: ${error.message}` : String(error) };
    } finally {
      this.runtime.stats.handlerBilledMs += Math.max(1, Math.ceil(performance.now() - started));
    }
    const failures = response?.batchItemFailures ?? [];
    if (failures.length === 0) return { failedFrom: undefined, error: undefined };
    const indexes = failures.map((f) => batch.findIndex((e) => e.sequenceNumber !== '' && e.sequenceNumber === f?.itemIdentifier));
    // An identifier that names no record of the batch fails all of it, as on Lambda.
    const failedFrom = indexes.some((i) => i < 0) ? 0 : Math.min(...indexes);
    return { failedFrom, error: `partial batch response: ${failures.map((f) => f?.itemIdentifier).join(', ')}` };
  }

  private fail(shardId: string, records: Entry[], condition: FailedBatch['condition'], error: string | undefined): void {
    this.runtime.stats.failedBatches++;
    this.runtime.stats.recordsToFailure += records.length;
    const failed: FailedBatch = {
      condition,
      streamArn: this.settings.streamArn,
      shardId,
      startSequenceNumber: records[0]?.sequenceNumber ?? '',
      endSequenceNumber: records[records.length - 1]?.sequenceNumber ?? '',
      batchSize: records.length,
      error,
    };
    if (this.settings.onFailure) this.settings.onFailure(failed);
    else this.settings.log.error('stream batch given up (on-failure destination)', { ...failed });
  }
}
