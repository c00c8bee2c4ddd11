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
 *    handler finished (or that went to the failure sink); batching, bisecting,
 *    retries, partial batch responses and the on-failure destination are
 *    stream-batches.ts.
 *
 * Deviations, all local-only: a record's age is counted from when the poller
 * read it (DynamoDB Local truncates ApproximateCreationDateTime to the
 * minute); iterators are re-acquired after errors from the last checkpoint;
 * a caught-up shard is read every `pollIntervalMs`, backing off to
 * `idlePollIntervalMs` while it stays empty (each GetRecords costs DynamoDB
 * Local about as much CPU as a GetItem), and {@link StreamPoller.nudge} ends
 * the back-off when the caller knows it just wrote. DynamoDB Local answers
 * one request at a time, and its GetRecords costs time in proportion to every
 * stream record it holds — of all its tables, deleted ones included, for 24
 * hours (measured: an empty GetRecords takes 14–27 ms on a fresh instance and
 * 160–200 ms on one holding ~80,000 records). So a shard is never read more
 * often than `readShare` allows: after a GetRecords that took d ms, the next
 * one waits until d / readShare ms after the last one began. A long-running
 * `npm start`, or a test run that wrote a lot, then delivers stream records
 * later instead of starving every other request.
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
} from '@aws-sdk/client-dynamodb-streams';
import { checkPattern, type EventPattern } from '../../domain/event-pattern.js';
import type { ChangeHandler } from '../../ports/change-stream.js';
import { BatchInvoker, MAX_RETRY_DELAY_MS, StoppedError, type BatchStats, type Entry, type FailedBatch, type PollerLog } from './stream-batches.js';
import { MemoryCheckpoints, type CheckpointStore, type ShardCheckpoint } from './stream-checkpoints.js';

export type { BatchStats, FailedBatch, PollerLog } from './stream-batches.js';

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
  /**
   * The largest share of wall time one shard's GetRecords calls may take: after a call that took
   * d ms, the next one begins no sooner than d / readShare ms after it began. @default 0.2
   */
  readShare?: number;
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
export interface PollerStats extends BatchStats {
  getRecordsCalls: number;
  recordsRead: number;
  shardsFinished: number;
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

export class StreamPoller {
  readonly stats: PollerStats = {
    getRecordsCalls: 0,
    recordsRead: 0,
    recordsPassed: 0,
    invocations: 0,
    handlerBilledMs: 0,
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
  private readonly batches: BatchInvoker;

  constructor(options: StreamPollerOptions) {
    options.filters.forEach((pattern, i) => checkPattern(pattern, `filters[${i}]`));
    this.options = {
      batchSize: 100,
      maxBatchingWindowMs: 0,
      pollIntervalMs: 50,
      idlePollIntervalMs: 500,
      readShare: 0.2,
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
    if (!(this.options.readShare > 0 && this.options.readShare <= 1)) {
      throw new RangeError(`readShare ${this.options.readShare} must be above 0 and at most 1`);
    }
    this.batches = new BatchInvoker(this.options, {
      stats: this.stats,
      sleep: (ms) => this.sleep(ms),
      stopped: () => this.stopped,
    });
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
    let lastReadTook = 0;
    let nudgesAtRead = 0;
    while (!this.stopped) {
      let next: string | undefined;
      let records: NonNullable<GetRecordsCommandOutput['Records']>;
      try {
        iterator ??= await this.iteratorFor(shard);
        if (iterator === undefined) {
          records = [];
          next = undefined;
        } else {
          // Keep this shard's reads within their share of DynamoDB Local's time (see above).
          await this.sleep(lastRead + lastReadTook / this.options.readShare - this.options.now());
          if (this.stopped) return;
          this.stats.getRecordsCalls++;
          lastRead = this.options.now();
          nudgesAtRead = this.nudges;
          const result = await this.options.streams.getRecords({ ShardIterator: iterator, Limit: 1000 });
          lastReadTook = this.options.now() - lastRead;
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
      for (const raw of records) buffer.push(this.batches.entry(raw, now));
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

  /** Hands the records over; then moves the checkpoint past every record read. */
  private async deliver(shard: Shard, entries: Entry[]): Promise<void> {
    await this.batches.deliver(shard.id, entries);
    const last = entries[entries.length - 1];
    if (last) shard.checkpoint = { sequenceNumber: last.sequenceNumber };
    await this.saveCheckpoints();
  }
}
