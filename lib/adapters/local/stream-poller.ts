/**
 * The local twin of a Lambda event source mapping on a DynamoDB stream: it
 * reads DynamoDB Local's real stream (DescribeStream, GetShardIterator,
 * GetRecords), filters the records with the mapping's filter patterns, and
 * invokes the handler the Lambda runs with the event Lambda would build
 * (`DynamoDBStreamEvent`: lib/ports/change-stream.ts). What it copies from
 * the event source mapping (https://docs.aws.amazon.com/lambda/latest/dg/with-ddb.html,
 * .../services-ddb-params.html, .../services-ddb-batchfailurereporting.html):
 *
 *  - shard lineage: a shard is read only after its parent was read to its
 *    end; shards that appear later (DynamoDB, and DynamoDB Local, roll shards
 *    every 4 hours) start at their first record; the shards of one stream are
 *    read in parallel, each one batch at a time, records in order;
 *  - the starting position (TRIM_HORIZON or LATEST) applies to a stream with
 *    no checkpoint; with one, reading resumes after the last handled record;
 *  - batches of at most `batchSize` records and 6 MB of event, formed within
 *    `maxBatchingWindowMs` (0: as soon as records are read);
 *  - filtered-out records never reach the handler but do move the checkpoint;
 *  - at least once: the checkpoint moves only past records whose batch the
 *    handler finished (or that went to the failure sink); a batch that throws
 *    is split in two (`bisectBatchOnError`, which does not count as a retry),
 *    a batch of one is retried `retryAttempts` times with back-off; a partial
 *    batch response retries from the lowest failed record (an identifier that
 *    is not in the batch fails the whole batch); records older than
 *    `maxRecordAgeMs` or out of retries go to `onFailure` (Lambda's on-failure
 *    destination: metadata of the batch, logged and counted here) and the
 *    shard moves on.
 *
 * Deviations, all local-only: a record's age is counted from when the poller
 * read it (DynamoDB Local truncates ApproximateCreationDateTime to the
 * minute); iterators are re-acquired after errors from the last checkpoint;
 * a caught-up shard is read every `pollIntervalMs`, backing off to
 * `idlePollIntervalMs` while it stays empty (each GetRecords costs DynamoDB
 * Local about as much CPU as a GetItem), and {@link StreamPoller.nudge} ends
 * the back-off when the caller knows it just wrote.
 * Timers are unref'd and cleared by `stop()`, which waits for in-flight work:
 * after it, the poller keeps nothing alive.
 */
import {
  DescribeStreamCommand,
  GetRecordsCommand,
  GetShardIteratorCommand,
  type DescribeStreamCommandInput,
  type DescribeStreamCommandOutput,
  type DynamoDBStreamsClient,
  type GetRecordsCommandInput,
  type GetRecordsCommandOutput,
  type GetShardIteratorCommandInput,
  type GetShardIteratorCommandOutput,
  type _Record as SdkChangeRecord,
} from '@aws-sdk/client-dynamodb-streams';
import { matchesAny, checkPattern, type EventPattern } from '../../domain/event-pattern.js';
import type { ChangeBatchResponse, ChangeHandler, ChangeRecord } from '../../ports/change-stream.js';
import { changeRecordOf } from '../dynamodb/stream-records.js';
import { MemoryCheckpoints, type CheckpointStore, type ShardCheckpoint } from './stream-checkpoints.js';

/** The DynamoDB Streams calls the poller makes: the SDK client, or a fake that plays shard lineage in tests. */
export interface StreamsApi {
  describeStream(input: DescribeStreamCommandInput): Promise<Pick<DescribeStreamCommandOutput, 'StreamDescription'>>;
  getShardIterator(input: GetShardIteratorCommandInput): Promise<Pick<GetShardIteratorCommandOutput, 'ShardIterator'>>;
  getRecords(input: GetRecordsCommandInput): Promise<Pick<GetRecordsCommandOutput, 'Records' | 'NextShardIterator'>>;
}

export const streamsApiOf = (client: DynamoDBStreamsClient): StreamsApi => ({
  describeStream: (input) => client.send(new DescribeStreamCommand(input)),
  getShardIterator: (input) => client.send(new GetShardIteratorCommand(input)),
  getRecords: (input) => client.send(new GetRecordsCommand(input)),
});

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

export interface StreamPollerOptions {
  streams: StreamsApi;
  streamArn: string;
  handler: ChangeHandler;
  /** ORed, as an event source mapping's `FilterCriteria.Filters`; none passes every record. */
  filters: readonly EventPattern[];
  startingPosition: 'TRIM_HORIZON' | 'LATEST';
  /** @default 100 */
  batchSize?: number;
  /** @default 0 */
  maxBatchingWindowMs?: number;
  /** How long a shard that returned nothing waits before the next GetRecords, while records come. @default 50 */
  pollIntervalMs?: number;
  /**
   * A shard that keeps returning nothing waits longer, doubling from `pollIntervalMs` up to this,
   * until records come again or {@link StreamPoller.nudge} is called. @default 500
   */
  idlePollIntervalMs?: number;
  /** How often DescribeStream looks for new shards (also right after a shard closes). @default 5000 */
  shardRefreshMs?: number;
  /** @default false */
  bisectBatchOnError?: boolean;
  /** @default 2 */
  retryAttempts?: number;
  /** @default - no limit */
  maxRecordAgeMs?: number;
  /** First retry delay, doubled per retry up to 1 s. @default 20 */
  retryBaseDelayMs?: number;
  /** The on-failure destination. @default - logs the batch (`log.error`); it is counted in `stats` either way */
  onFailure?: (batch: FailedBatch) => void;
  /** @default - in memory */
  checkpoints?: CheckpointStore;
  /** @default console */
  log?: PollerLog;
  /** @default Date.now */
  now?: () => number;
}

/** Counters for tests, the benchmark and logs. */
export interface PollerStats {
  getRecordsCalls: number;
  recordsRead: number;
  recordsPassed: number;
  invocations: number;
  failedInvocations: number;
  retries: number;
  bisections: number;
  failedBatches: number;
  recordsToFailure: number;
  shardsFinished: number;
}

/** Lambda's synchronous invocation payload limit: a batch's event stays below it. */
const MAX_EVENT_BYTES = 6 * 1024 * 1024;
const MAX_RETRY_DELAY_MS = 1000;

interface Entry {
  record: ChangeRecord;
  sequenceNumber: string;
  readAt: number;
  bytes: number;
  passes: boolean;
  /** Why the record could not be mapped (it is given up rather than stall its shard). */
  unreadable?: string;
}

interface Shard {
  id: string;
  parentId: string | undefined;
  status: 'waiting' | 'reading' | 'done';
  /** Where reading starts when there is no checkpoint. */
  start: 'TRIM_HORIZON' | 'LATEST';
  /** An iterator taken before reading began (LATEST at start: records put after `start()` are seen). */
  iterator: string | undefined;
  checkpoint: ShardCheckpoint;
}

class StoppedError extends Error {}

export class StreamPoller {
  readonly stats: PollerStats = {
    getRecordsCalls: 0,
    recordsRead: 0,
    recordsPassed: 0,
    invocations: 0,
    failedInvocations: 0,
    retries: 0,
    bisections: 0,
    failedBatches: 0,
    recordsToFailure: 0,
    shardsFinished: 0,
  };

  private readonly options: Required<Omit<StreamPollerOptions, 'maxRecordAgeMs' | 'onFailure'>> &
    Pick<StreamPollerOptions, 'maxRecordAgeMs' | 'onFailure'>;
  private readonly shards = new Map<string, Shard>();
  private readonly readers = new Set<Promise<void>>();
  private readonly abort = new AbortController();
  private coordinator: Promise<void> | undefined;
  private refreshNow: (() => void) | undefined;
  /** Wakes each reader sleeping on a caught-up shard. */
  private readonly idleWakes = new Set<() => void>();
  private nudges = 0;
  private started = false;

  constructor(options: StreamPollerOptions) {
    options.filters.forEach((pattern, i) => checkPattern(pattern, `filters[${i}]`));
    this.options = {
      batchSize: 100,
      maxBatchingWindowMs: 0,
      pollIntervalMs: 50,
      idlePollIntervalMs: 500,
      shardRefreshMs: 5000,
      bisectBatchOnError: false,
      retryAttempts: 2,
      retryBaseDelayMs: 20,
      checkpoints: new MemoryCheckpoints(),
      log: console,
      now: Date.now,
      ...options,
    };
    if (!(Number.isInteger(this.options.batchSize) && this.options.batchSize >= 1 && this.options.batchSize <= 10_000)) {
      throw new RangeError(`batchSize ${this.options.batchSize} must be 1–10,000`);
    }
  }

  /** The checkpoint of each shard seen so far (for tests and logs). */
  checkpoints(): Record<string, ShardCheckpoint> {
    return Object.fromEntries([...this.shards].map(([id, shard]) => [id, { ...shard.checkpoint }]));
  }

  /**
   * Lists the shards and positions the first ones, then reads in the
   * background. Records written after this resolves are delivered whatever the
   * starting position.
   */
  async start(): Promise<void> {
    if (this.started) throw new Error('the stream poller was already started');
    this.started = true;
    const saved = await this.options.checkpoints.load(this.options.streamArn);
    await this.refresh(saved, true);
    this.coordinator = this.coordinate();
  }

  /** Stops reading, waits for the batch in flight (it is not retried further) and leaves no timer behind. */
  async stop(): Promise<void> {
    this.abort.abort();
    this.refreshNow?.();
    await this.coordinator;
    await Promise.all([...this.readers]);
  }

  /**
   * Says that the table was probably just written to (the local runtime calls it after each
   * write of its own): caught-up shards are read again now — though never sooner than
   * `pollIntervalMs` after their last read — instead of after their idle back-off.
   */
  nudge(): void {
    this.nudges++;
    for (const wake of this.idleWakes) wake();
  }

  private get stopped(): boolean {
    return this.abort.signal.aborted;
  }

  /** Resolves after `ms`, at `stop()`, or when the function handed to `wakeable` is called. */
  private sleep(ms: number, wakeable?: (wake: () => void) => void): Promise<void> {
    return new Promise((resolve) => {
      if (this.stopped || ms <= 0) return resolve();
      const done = () => {
        clearTimeout(timer);
        this.abort.signal.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      // Background work: never the reason a process stays up.
      timer.unref();
      this.abort.signal.addEventListener('abort', done, { once: true });
      wakeable?.(done);
    });
  }

  /** Re-lists the shards every `shardRefreshMs`, or at once when a reader finished a shard. */
  private async coordinate(): Promise<void> {
    while (!this.stopped) {
      await this.sleep(this.options.shardRefreshMs, (wake) => (this.refreshNow = wake));
      this.refreshNow = undefined;
      if (this.stopped) break;
      try {
        await this.refresh({}, false);
      } catch (error) {
        this.options.log.warn('stream poller could not list shards', { streamArn: this.options.streamArn, error: String(error) });
      }
    }
  }

  private async describeShards() {
    const shards: NonNullable<NonNullable<DescribeStreamCommandOutput['StreamDescription']>['Shards']> = [];
    let exclusiveStartShardId: string | undefined;
    do {
      const { StreamDescription } = await this.options.streams.describeStream({
        StreamArn: this.options.streamArn,
        ...(exclusiveStartShardId ? { ExclusiveStartShardId: exclusiveStartShardId } : {}),
      });
      shards.push(...(StreamDescription?.Shards ?? []));
      exclusiveStartShardId = StreamDescription?.LastEvaluatedShardId;
    } while (exclusiveStartShardId);
    return shards;
  }

  private async refresh(saved: Record<string, ShardCheckpoint>, initial: boolean): Promise<void> {
    for (const described of await this.describeShards()) {
      const id = described.ShardId;
      if (!id || this.shards.has(id)) continue;
      const closed = described.SequenceNumberRange?.EndingSequenceNumber !== undefined;
      const checkpoint = saved[id] ?? {};
      // LATEST concerns the shards open when reading starts; every later shard starts at its beginning.
      const latest = initial && this.options.startingPosition === 'LATEST' && saved[id] === undefined;
      const shard: Shard = {
        id,
        parentId: described.ParentShardId,
        status: checkpoint.done || (latest && closed) ? 'done' : 'waiting',
        start: latest ? 'LATEST' : 'TRIM_HORIZON',
        iterator: undefined,
        checkpoint,
      };
      if (latest && !closed) {
        shard.iterator = (await this.options.streams.getShardIterator({ StreamArn: this.options.streamArn, ShardId: id, ShardIteratorType: 'LATEST' })).ShardIterator;
      }
      this.shards.set(id, shard);
    }
    for (const shard of this.shards.values()) {
      if (shard.status !== 'waiting') continue;
      const parent = shard.parentId === undefined ? undefined : this.shards.get(shard.parentId);
      // A parent the stream no longer lists was trimmed (older than 24 h): nothing of it is left to read first.
      if (parent && parent.status !== 'done') continue;
      shard.status = 'reading';
      const reader = this.read(shard)
        .catch((error: unknown) => {
          // Unexpected (a checkpoint that could not be saved, a throwing failure sink): the next
          // refresh starts the shard again from its checkpoint.
          this.options.log.error('stream poller stopped reading a shard; it restarts from its checkpoint', { shardId: shard.id, error: String(error) });
          if (shard.status === 'reading') shard.status = 'waiting';
        })
        .finally(() => this.readers.delete(reader));
      this.readers.add(reader);
    }
  }

  private async saveCheckpoints(): Promise<void> {
    await this.options.checkpoints.save(this.options.streamArn, this.checkpoints());
  }

  private async iteratorFor(shard: Shard): Promise<string | undefined> {
    const position = shard.checkpoint.sequenceNumber
      ? { ShardIteratorType: 'AFTER_SEQUENCE_NUMBER' as const, SequenceNumber: shard.checkpoint.sequenceNumber }
      : { ShardIteratorType: shard.start };
    const { ShardIterator } = await this.options.streams.getShardIterator({ StreamArn: this.options.streamArn, ShardId: shard.id, ...position });
    return ShardIterator;
  }

  /** Reads one shard to its end (or until stopped), handing its records over in order. */
  private async read(shard: Shard): Promise<void> {
    let iterator = shard.iterator;
    shard.iterator = undefined;
    let buffer: Entry[] = [];
    let failures = 0;
    let emptyReads = 0;
    let lastRead = 0;
    let nudgesAtRead = 0;
    while (!this.stopped) {
      let next: string | undefined;
      let records: SdkChangeRecord[];
      try {
        iterator ??= await this.iteratorFor(shard);
        if (iterator === undefined) {
          records = [];
          next = undefined;
        } else {
          this.stats.getRecordsCalls++;
          lastRead = this.options.now();
          nudgesAtRead = this.nudges;
          const result = await this.options.streams.getRecords({ ShardIterator: iterator, Limit: 1000 });
          records = result.Records ?? [];
          next = result.NextShardIterator;
        }
        failures = 0;
      } catch (error) {
        if (this.stopped) return;
        // Expired or trimmed iterator, throttling, a restarting DynamoDB Local: start again from the checkpoint.
        this.options.log.warn('stream poller could not read a shard; retrying from its checkpoint', { shardId: shard.id, error: String(error) });
        iterator = undefined;
        buffer = [];
        await this.sleep(Math.min(MAX_RETRY_DELAY_MS, this.options.pollIntervalMs * 2 ** failures++));
        continue;
      }
      this.stats.recordsRead += records.length;
      const now = this.options.now();
      for (const raw of records) buffer.push(this.entry(raw, now));
      const closed = next === undefined;
      const passed = buffer.filter((e) => e.passes).length;
      const windowOver = buffer.length > 0 && now - (buffer[0]?.readAt ?? now) >= this.options.maxBatchingWindowMs;
      if (buffer.length > 0 && (closed || windowOver || passed >= this.options.batchSize)) {
        try {
          await this.deliver(shard, buffer);
        } catch (error) {
          if (error instanceof StoppedError) return;
          throw error;
        }
        buffer = [];
      }
      if (closed) {
        shard.status = 'done';
        shard.checkpoint = { ...shard.checkpoint, done: true };
        this.stats.shardsFinished++;
        await this.saveCheckpoints();
        this.refreshNow?.();
        return;
      }
      iterator = next;
      // An empty answer: the shard is caught up. A full one: read on at once.
      if (records.length > 0) emptyReads = 0;
      else if (buffer.length > 0) await this.sleep(Math.min(this.options.pollIntervalMs, this.options.maxBatchingWindowMs));
      else {
        const { pollIntervalMs, idlePollIntervalMs } = this.options;
        let wake: (() => void) | undefined;
        // A nudge since this read began (a write it may have missed) skips the back-off.
        if (this.nudges === nudgesAtRead) {
          await this.sleep(Math.min(idlePollIntervalMs, pollIntervalMs * 2 ** Math.min(emptyReads++, 16)), (w) => this.idleWakes.add((wake = w)));
        }
        if (wake) this.idleWakes.delete(wake);
        if (this.nudges !== nudgesAtRead) {
          // Woken by a write: read again, but keep to the active polling rate.
          emptyReads = 0;
          await this.sleep(lastRead + pollIntervalMs - this.options.now());
        }
      }
    }
  }

  private entry(raw: SdkChangeRecord, readAt: number): Entry {
    let record: ChangeRecord;
    try {
      record = changeRecordOf(raw, this.options.streamArn);
    } catch (error) {
      const sequenceNumber = raw.dynamodb?.SequenceNumber ?? '';
      return { record: {}, sequenceNumber, readAt, bytes: 0, passes: false, unreadable: String(error) };
    }
    const passes = this.options.filters.length === 0 || matchesAny(this.options.filters, record);
    // Only records that are handed over count toward the 6 MB event: skip the sizing of the rest.
    const bytes = passes ? Buffer.byteLength(JSON.stringify(record)) : 0;
    return { record, sequenceNumber: record.dynamodb?.SequenceNumber ?? '', readAt, bytes, passes };
  }

  /** Hands the passing records over in batches; then moves the checkpoint past every record read. */
  private async deliver(shard: Shard, entries: Entry[]): Promise<void> {
    for (const entry of entries.filter((e) => e.unreadable !== undefined)) this.fail(shard, [entry], 'RecordUnreadable', entry.unreadable);
    const passing = entries.filter((e) => e.passes);
    this.stats.recordsPassed += passing.length;
    let batch: Entry[] = [];
    let bytes = 0;
    for (const entry of passing) {
      if (batch.length > 0 && (batch.length >= this.options.batchSize || bytes + entry.bytes > MAX_EVENT_BYTES)) {
        await this.invoke(shard, batch);
        batch = [];
        bytes = 0;
      }
      batch.push(entry);
      bytes += entry.bytes;
    }
    if (batch.length > 0) await this.invoke(shard, batch);
    const last = entries[entries.length - 1];
    if (last) shard.checkpoint = { sequenceNumber: last.sequenceNumber };
    await this.saveCheckpoints();
  }

  /** Runs the handler on `batch` until it succeeds or the batch is given up (see the module comment). */
  private async invoke(shard: Shard, batch: Entry[]): Promise<void> {
    let pending = batch;
    let retries = 0;
    for (;;) {
      if (this.stopped) throw new StoppedError();
      const first = pending[0];
      const limit = this.options.maxRecordAgeMs;
      if (first && limit !== undefined && this.options.now() - first.readAt > limit) {
        return this.fail(shard, pending, 'RecordAgeExceeded', undefined);
      }
      const outcome = await this.call(pending);
      if (outcome.failedFrom === undefined) return;
      this.stats.failedInvocations++;
      pending = pending.slice(outcome.failedFrom);
      if (this.options.bisectBatchOnError && pending.length > 1) {
        this.stats.bisections++;
        const half = Math.ceil(pending.length / 2);
        await this.invoke(shard, pending.slice(0, half));
        return this.invoke(shard, pending.slice(half));
      }
      if (retries >= this.options.retryAttempts) return this.fail(shard, pending, 'RetryAttemptsExhausted', outcome.error);
      retries++;
      this.stats.retries++;
      await this.sleep(Math.min(MAX_RETRY_DELAY_MS, this.options.retryBaseDelayMs * 2 ** (retries - 1)));
    }
  }

  /** One invocation: undefined `failedFrom` when every record was handled. */
  private async call(batch: Entry[]): Promise<{ failedFrom: number | undefined; error: string | undefined }> {
    this.stats.invocations++;
    let response: ChangeBatchResponse | void;
    try {
      response = await this.options.handler({ Records: batch.map((e) => e.record) });
    } catch (error) {
      return { failedFrom: 0, error: error instanceof Error ? `${error.name}: ${error.message}` : String(error) };
    }
    const failures = response?.batchItemFailures ?? [];
    if (failures.length === 0) return { failedFrom: undefined, error: undefined };
    const indexes = failures.map((f) => batch.findIndex((e) => e.sequenceNumber !== '' && e.sequenceNumber === f?.itemIdentifier));
    // An identifier that names no record of the batch fails all of it, as on Lambda.
    const failedFrom = indexes.some((i) => i < 0) ? 0 : Math.min(...indexes);
    return { failedFrom, error: `partial batch response: ${failures.map((f) => f?.itemIdentifier).join(', ')}` };
  }

  private fail(shard: Shard, records: Entry[], condition: FailedBatch['condition'], error: string | undefined): void {
    this.stats.failedBatches++;
    this.stats.recordsToFailure += records.length;
    const failed: FailedBatch = {
      condition,
      streamArn: this.options.streamArn,
      shardId: shard.id,
      startSequenceNumber: records[0]?.sequenceNumber ?? '',
      endSequenceNumber: records[records.length - 1]?.sequenceNumber ?? '',
      batchSize: records.length,
      error,
    };
    if (this.options.onFailure) this.options.onFailure(failed);
    else this.options.log.error('stream batch given up (on-failure destination)', { ...failed });
  }
}
