/**
 * The local event source mapping on a fake Streams API: shard lineage,
 * starting positions, batching, filtering, and the error handling of the
 * Lambda event source mapping (retries, bisect, partial batch responses,
 * maximum record age, on-failure destination), with checkpoints that move
 * only past handled records. The real DynamoDB Local stream is exercised in
 * test/integration/dispatcher-stream.test.ts.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { ChangeBatchResponse, ChangeEvent } from '../../lib/ports/change-stream.js';
import { StreamPoller, type FailedBatch, type StreamPollerOptions } from '../../lib/adapters/local/stream-poller.js';
import { MemoryCheckpoints } from '../../lib/adapters/local/stream-checkpoints.js';
import { DISPATCH_FILTERS } from '../../lib/adapters/dynamodb/dispatch-source.js';
import { eventually, FakeStreams, segmentImage } from '../helpers/fake-streams.js';

const silentLog = { warn: () => undefined, error: () => undefined };
const pollers: StreamPoller[] = [];

afterEach(async () => {
  await Promise.all(pollers.splice(0).map((p) => p.stop()));
});

interface Harness {
  streams: FakeStreams;
  poller: StreamPoller;
  events: ChangeEvent[];
  /** Sequence numbers of every record handed to the handler, in order (repeats included). */
  seen: string[];
  failures: FailedBatch[];
}

async function harness(
  setup: (streams: FakeStreams) => void,
  options: Partial<StreamPollerOptions> & { respond?: (event: ChangeEvent) => Promise<ChangeBatchResponse | void> } = {},
): Promise<Harness> {
  const streams = new FakeStreams();
  setup(streams);
  const events: ChangeEvent[] = [];
  const seen: string[] = [];
  const failures: FailedBatch[] = [];
  const { respond, ...rest } = options;
  const poller = new StreamPoller({
    streams,
    streamArn: streams.arn,
    filters: DISPATCH_FILTERS,
    startingPosition: 'TRIM_HORIZON',
    pollIntervalMs: 5,
    shardRefreshMs: 20,
    retryBaseDelayMs: 1,
    log: silentLog,
    onFailure: (batch) => failures.push(batch),
    handler: async (event) => {
      events.push(structuredClone(event));
      seen.push(...event.Records.map((r) => r.dynamodb?.SequenceNumber ?? '?'));
      return respond?.(event);
    },
    ...rest,
  });
  pollers.push(poller);
  await poller.start();
  return { streams, poller, events, seen, failures };
}

const seqs = (streams: FakeStreams, shardId: string) =>
  streams.shards.find((s) => s.id === shardId)?.records.map((r) => r.dynamodb?.SequenceNumber ?? '') ?? [];

describe('stream poller: reading', () => {
  it('hands over flagged segment inserts in order, in Lambda-shaped events, and skips the rest', async () => {
    const h = await harness((s) => {
      s.addShard('a');
      s.put('a', segmentImage('t', 1));
      s.put('a', segmentImage('t', 2, {})); // unflagged: filtered out
      s.put('a', { pk: { S: 'C#g' }, sk: { S: 't:t/p:0' }, w: { N: '1' } }); // not a segment
      s.put('a', segmentImage('t', 3, { nf: { N: '2' } }));
    });
    const [first, , , fourth] = seqs(h.streams, 'a');
    await eventually(() => h.seen.length === 2, 3000, 'two records');
    expect(h.seen).toEqual([first, fourth]);
    const record = h.events[0]?.Records[0];
    expect(record).toMatchObject({ eventName: 'INSERT', eventSource: 'aws:dynamodb', eventSourceARN: h.streams.arn });
    expect(typeof record?.dynamodb?.ApproximateCreationDateTime).toBe('number');
    // Filtered records move the checkpoint too.
    await eventually(() => h.poller.checkpoints().a?.sequenceNumber === fourth, 3000, 'checkpoint');
    expect(h.poller.stats).toMatchObject({ recordsRead: 4, recordsPassed: 2 });
  });

  it('reads a parent shard to its end before its child, across DescribeStream pages', async () => {
    const h = await harness(
      (s) => {
        s.addShard('root');
        s.addShard('parent');
        s.addShard('child', 'parent');
        s.addShard('grandchild', 'child');
        for (let i = 0; i < 250; i++) s.put('parent', segmentImage('t', i + 1));
        s.close('parent');
        for (let i = 0; i < 30; i++) s.put('child', segmentImage('t', 1000 + i));
        s.close('child');
        for (let i = 0; i < 5; i++) s.put('grandchild', segmentImage('t', 2000 + i));
        s.put('root', segmentImage('u', 1));
      },
      { batchSize: 100 },
    );
    const lineage = [...seqs(h.streams, 'parent'), ...seqs(h.streams, 'child'), ...seqs(h.streams, 'grandchild')];
    await eventually(() => h.seen.length === lineage.length + 1, 5000, 'every record');
    expect(h.seen.filter((s) => lineage.includes(s))).toEqual(lineage);
    expect(h.seen).toContain(seqs(h.streams, 'root')[0]);
    // Batches never mix shards and never exceed the batch size.
    expect(Math.max(...h.events.map((e) => e.Records.length))).toBeLessThanOrEqual(100);
    expect(h.poller.checkpoints()).toMatchObject({ parent: { done: true }, child: { done: true } });
    expect(h.streams.calls.describeStream).toBeGreaterThanOrEqual(2);
  });

  it('follows new shards as they appear, from their first record', async () => {
    const h = await harness((s) => s.addShard('s1'));
    h.streams.put('s1', segmentImage('t', 1));
    await eventually(() => h.seen.length === 1, 3000, 'first record');
    h.streams.put('s1', segmentImage('t', 2));
    h.streams.close('s1');
    h.streams.addShard('s2', 's1');
    h.streams.put('s2', segmentImage('t', 3));
    h.streams.put('s2', segmentImage('t', 4));
    await eventually(() => h.seen.length === 4, 3000, 'records of the new shard');
    expect(h.seen).toEqual([...seqs(h.streams, 's1'), ...seqs(h.streams, 's2')]);
  });

  it('LATEST skips what was there before start (and closed shards), then delivers everything after', async () => {
    const h = await harness(
      (s) => {
        s.addShard('old');
        s.put('old', segmentImage('t', 1));
        s.close('old');
        s.addShard('open', 'old');
        s.put('open', segmentImage('t', 2));
      },
      { startingPosition: 'LATEST' },
    );
    const after = h.streams.put('open', segmentImage('t', 3));
    await eventually(() => h.seen.length === 1, 3000, 'the record put after start');
    expect(h.seen).toEqual([after]);
  });

  it('resumes after its checkpoint when restarted, without replaying', async () => {
    const checkpoints = new MemoryCheckpoints();
    const first = await harness(
      (s) => {
        s.addShard('a');
        s.put('a', segmentImage('t', 1));
        s.put('a', segmentImage('t', 2));
      },
      { checkpoints },
    );
    await eventually(() => first.seen.length === 2, 3000, 'first run');
    await first.poller.stop();
    first.streams.put('a', segmentImage('t', 3));
    const seen: string[] = [];
    const second = new StreamPoller({
      streams: first.streams,
      streamArn: first.streams.arn,
      filters: DISPATCH_FILTERS,
      startingPosition: 'TRIM_HORIZON',
      pollIntervalMs: 5,
      log: silentLog,
      checkpoints,
      handler: async (event) => void seen.push(...event.Records.map((r) => r.dynamodb?.SequenceNumber ?? '')),
    });
    pollers.push(second);
    await second.start();
    await eventually(() => seen.length === 1, 3000, 'the new record');
    expect(seen).toEqual([seqs(first.streams, 'a')[2]]);
  });

  it('survives failing GetRecords calls without losing or repeating records', async () => {
    const h = await harness((s) => {
      s.addShard('a');
      s.failGetRecords = 3;
      for (let i = 0; i < 5; i++) s.put('a', segmentImage('t', i + 1));
    });
    await eventually(() => h.seen.length === 5, 5000, 'all records');
    expect(h.seen).toEqual(seqs(h.streams, 'a'));
  });

  it('backs off while a shard stays empty, and reads at once when nudged', async () => {
    const h = await harness((s) => s.addShard('a'), { pollIntervalMs: 5, idlePollIntervalMs: 5_000 });
    await new Promise((resolve) => setTimeout(resolve, 400));
    // Fixed 5 ms polling would have read ~80 times; doubling from 5 ms reads ~8 times in 400 ms.
    expect(h.poller.stats.getRecordsCalls).toBeLessThan(15);
    const put = h.streams.put('a', segmentImage('t', 1));
    const nudged = Date.now();
    h.poller.nudge();
    await eventually(() => h.seen.length === 1, 1000, 'the record after a nudge');
    expect(Date.now() - nudged).toBeLessThan(500);
    expect(h.seen).toEqual([put]);
  });

  it('keeps its GetRecords calls within their share of a slow DynamoDB Local, and still delivers', async () => {
    const h = await harness((s) => {
      s.addShard('a');
      s.getRecordsMs = 40;
    }, { pollIntervalMs: 1, idlePollIntervalMs: 1, readShare: 0.2 });
    const put = h.streams.put('a', segmentImage('t', 1));
    await new Promise((resolve) => setTimeout(resolve, 1000));
    // Each call takes 40 ms: at most one call begins every 200 ms (≤ 6 in 1 s), not one every ~41 ms (~24).
    expect(h.poller.stats.getRecordsCalls).toBeGreaterThanOrEqual(3);
    expect(h.poller.stats.getRecordsCalls).toBeLessThanOrEqual(7);
    expect(h.seen).toEqual([put]);
  });

  it('refuses a read share outside (0, 1]', () => {
    for (const readShare of [0, -0.5, 1.5, Number.NaN]) {
      expect(() => new StreamPoller({ streams: new FakeStreams(), streamArn: 'arn', filters: [], startingPosition: 'LATEST', handler: async () => undefined, readShare })).toThrow(/readShare/);
    }
  });

  it('gives up a record it cannot map instead of stalling the shard', async () => {
    const h = await harness((s) => {
      s.addShard('a');
      s.put('a', { ...segmentImage('t', 1), odd: { $unknown: ['X', 1] } as never });
      s.put('a', segmentImage('t', 2));
    });
    const [bad, good] = seqs(h.streams, 'a');
    await eventually(() => h.seen.length === 1, 3000, 'the readable record');
    expect(h.seen).toEqual([good]);
    expect(h.failures).toEqual([expect.objectContaining({ condition: 'RecordUnreadable', startSequenceNumber: bad, batchSize: 1 })]);
  });

  it('splits batches at 6 MB of event, like Lambda', async () => {
    const big = 'x'.repeat(2_500_000);
    const h = await harness((s) => {
      s.addShard('a');
      for (let i = 0; i < 3; i++) s.put('a', { ...segmentImage('t', i + 1), m: { S: big } });
    });
    await eventually(() => h.seen.length === 3, 5000, 'all records');
    expect(h.events.map((e) => e.Records.length)).toEqual([2, 1]);
  });
});

describe('stream poller: at least once', () => {
  it('retries a batch whose handler throws; the checkpoint stays until it succeeds', async () => {
    let failing = true;
    const h = await harness(
      (s) => {
        s.addShard('a');
        s.put('a', segmentImage('t', 1));
        s.put('a', segmentImage('t', 2));
      },
      {
        retryAttempts: 10_000,
        respond: async () => {
          if (failing) throw new Error('downstream is down');
        },
      },
    );
    await eventually(() => h.poller.stats.retries >= 3, 3000, 'retries');
    expect(h.poller.checkpoints().a?.sequenceNumber).toBeUndefined();
    failing = false;
    const last = seqs(h.streams, 'a')[1];
    await eventually(() => h.poller.checkpoints().a?.sequenceNumber === last, 3000, 'checkpoint after success');
    expect(h.failures).toEqual([]);
  });

  it('bisects a failing batch down to the bad record, gives that one up, delivers the others', async () => {
    let poison = '';
    const h = await harness(
      (s) => {
        s.addShard('a');
        for (let i = 0; i < 8; i++) s.put('a', segmentImage('t', i + 1));
        poison = s.shards[0]?.records[5]?.dynamodb?.SequenceNumber ?? '';
      },
      {
        bisectBatchOnError: true,
        retryAttempts: 2,
        respond: async (event) => {
          if (event.Records.some((r) => r.dynamodb?.SequenceNumber === poison)) throw new Error('poison');
        },
      },
    );
    const all = seqs(h.streams, 'a');
    await eventually(() => h.failures.length === 1, 3000, 'the on-failure batch');
    expect(h.failures[0]).toMatchObject({ condition: 'RetryAttemptsExhausted', shardId: 'a', startSequenceNumber: poison, endSequenceNumber: poison, batchSize: 1 });
    expect(h.failures[0]?.error).toContain('poison');
    // Every other record was handled exactly once, in order, by invocations that succeeded.
    const succeeded = h.events.filter((e) => !e.Records.some((r) => r.dynamodb?.SequenceNumber === poison)).flatMap((e) => e.Records.map((r) => r.dynamodb?.SequenceNumber));
    expect(succeeded).toEqual(all.filter((s) => s !== poison));
    // The poison record alone: first try + 2 retries.
    expect(h.events.filter((e) => e.Records.length === 1 && e.Records[0]?.dynamodb?.SequenceNumber === poison)).toHaveLength(3);
    await eventually(() => h.poller.checkpoints().a?.sequenceNumber === all[7], 3000, 'checkpoint past the batch');
    expect(h.poller.stats.bisections).toBeGreaterThan(0);
  });

  it('retries from the lowest record a partial batch response names, and all of it for an unknown id', async () => {
    let calls = 0;
    const h = await harness(
      (s) => {
        s.addShard('a');
        for (let i = 0; i < 5; i++) s.put('a', segmentImage('t', i + 1));
      },
      {
        respond: async (event) => {
          calls++;
          const ids = event.Records.map((r) => r.dynamodb?.SequenceNumber ?? '');
          if (calls === 1) return { batchItemFailures: [{ itemIdentifier: ids[3] ?? '' }, { itemIdentifier: ids[2] ?? '' }] };
          if (calls === 2) return { batchItemFailures: [{ itemIdentifier: 'not-in-this-batch' }] };
          return { batchItemFailures: [] };
        },
      },
    );
    const all = seqs(h.streams, 'a');
    await eventually(() => h.events.length === 3, 3000, 'three invocations');
    expect(h.events.map((e) => e.Records.map((r) => r.dynamodb?.SequenceNumber))).toEqual([all, all.slice(2), all.slice(2)]);
    await eventually(() => h.poller.checkpoints().a?.sequenceNumber === all[4], 3000, 'checkpoint');
  });

  it('gives up records older than the maximum record age', async () => {
    let now = 1_000_000;
    const h = await harness(
      (s) => {
        s.addShard('a');
        s.put('a', segmentImage('t', 1));
      },
      {
        now: () => now,
        maxRecordAgeMs: 60_000,
        retryAttempts: 10_000,
        respond: async () => {
          now += 30_000;
          throw new Error('slow and failing');
        },
      },
    );
    await eventually(() => h.failures.length === 1, 3000, 'the expired batch');
    expect(h.failures[0]).toMatchObject({ condition: 'RecordAgeExceeded', batchSize: 1 });
    expect(h.events.length).toBe(3);
  });

  it('stops cleanly in the middle of retries and leaves no timer running', async () => {
    const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    const before = timers();
    const h = await harness(
      (s) => {
        s.addShard('a');
        s.put('a', segmentImage('t', 1));
      },
      {
        retryAttempts: 10_000,
        retryBaseDelayMs: 500,
        respond: async () => {
          throw new Error('always');
        },
      },
    );
    await eventually(() => h.poller.stats.retries >= 1, 3000, 'a retry');
    await h.poller.stop();
    expect(timers()).toBeLessThanOrEqual(before);
    expect(h.poller.checkpoints().a?.sequenceNumber).toBeUndefined();
    const invocations = h.poller.stats.invocations;
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(h.poller.stats.invocations).toBe(invocations);
  });
});
