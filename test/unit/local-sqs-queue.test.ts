/**
 * The local SQS stand-in behind the delay, check-back and push queues behaves like an SQS queue with
 * a Lambda event source (ReportBatchItemFailures) and a redrive policy: failed records come back
 * after the visibility timeout with a higher receive count, dead letters after maxReceiveCount,
 * events of at most batchSize records, at most maxConcurrency runs at once.
 */
import { describe, expect, it, vi } from 'vitest';
import { useQuietFakeTimers } from '../helpers/quiet-fake-timers.js';
import { LocalSqsQueue, type SqsLikeEvent } from '../../lib/adapters/local/sqs-like-queue.js';
import { LocalTimerBus } from '../../lib/adapters/local/timer-bus.js';
import { LocalCheckDispatcher } from '../../lib/adapters/local/check-dispatcher.js';
import { CHECK_QUEUE_VISIBILITY_MS, DELAY_QUEUE_VISIBILITY_MS, WORK_QUEUE_MAX_RECEIVES } from '../../lib/ports/work-queues.js';

const VISIBILITY_MS = 60_000;
const bodiesOf = (event: SqsLikeEvent) => event.Records.map((r) => r.body);
const queue = (options: Partial<ConstructorParameters<typeof LocalSqsQueue>[0]> = {}) =>
  new LocalSqsQueue({ name: 'test', visibilityMs: VISIBILITY_MS, maxReceiveCount: 3, batchSize: 10, ...options });

useQuietFakeTimers();

describe('LocalSqsQueue', () => {
  it('splits a send into events of at most batchSize records, after the delay', async () => {
    const q = queue({ batchSize: 10 });
    const runs: string[][] = [];
    q.setTarget(async (event) => void runs.push(bodiesOf(event)));
    await q.send(Array.from({ length: 23 }, (_, i) => `m${i}`), 500);
    await vi.advanceTimersByTimeAsync(499);
    expect(runs).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(runs.map((r) => r.length)).toEqual([10, 10, 3]);
    expect(runs.flat()).toEqual(Array.from({ length: 23 }, (_, i) => `m${i}`));
  });

  it('redelivers failed records after the visibility timeout, counting receives, and dead-letters them at maxReceiveCount', async () => {
    const q = queue({ maxReceiveCount: 3 });
    const counts: Array<Array<[string, string | undefined]>> = [];
    q.setTarget(async (event) => {
      counts.push(event.Records.map((r) => [r.body, r.attributes.ApproximateReceiveCount]));
      return { batchItemFailures: event.Records.filter((r) => r.body === 'poison').map((r) => ({ itemIdentifier: r.messageId })) };
    });
    await q.send(['fine', 'poison']);
    await vi.advanceTimersByTimeAsync(0);
    await vi.advanceTimersByTimeAsync(VISIBILITY_MS);
    await vi.advanceTimersByTimeAsync(VISIBILITY_MS);
    await vi.advanceTimersByTimeAsync(10 * VISIBILITY_MS);
    expect(counts).toEqual([
      [
        ['fine', '1'],
        ['poison', '1'],
      ],
      [['poison', '2']],
      [['poison', '3']],
    ]);
    expect(q.deadLetters.map((d) => [d.body, d.receives])).toEqual([['poison', 3]]);
  });

  it('a handler that throws gets every record back', async () => {
    const q = queue();
    let runs = 0;
    q.setTarget(async () => {
      if (++runs === 1) throw new Error('injected');
    });
    await q.send(['a', 'b']);
    await vi.advanceTimersByTimeAsync(0);
    expect(runs).toBe(1);
    await vi.advanceTimersByTimeAsync(VISIBILITY_MS);
    expect(runs).toBe(2);
    await vi.advanceTimersByTimeAsync(10 * VISIBILITY_MS);
    expect(runs).toBe(2);
  });

  it('runs at most maxConcurrency handlers at once; awaitRun resolves when the first run ended', async () => {
    const q = queue({ batchSize: 1, maxConcurrency: 2 });
    let running = 0;
    let most = 0;
    q.setTarget(async () => {
      running++;
      most = Math.max(most, running);
      await new Promise((resolve) => setTimeout(resolve, 100));
      running--;
    });
    let done = false;
    const sent = q.send(['1', '2', '3', '4', '5'], 0, true).then(() => (done = true));
    await vi.advanceTimersByTimeAsync(250);
    expect(done).toBe(false);
    await vi.advanceTimersByTimeAsync(50);
    await sent;
    expect(done).toBe(true);
    expect(most).toBe(2);
  });

  it('clear() cancels waiting messages and redeliveries', async () => {
    const q = queue();
    const runs: string[][] = [];
    q.setTarget(async (event) => {
      runs.push(bodiesOf(event));
      return { batchItemFailures: event.Records.map((r) => ({ itemIdentifier: r.messageId })) };
    });
    await q.send(['now']);
    await q.send(['later'], 1000);
    await vi.advanceTimersByTimeAsync(0);
    q.clear();
    await vi.advanceTimersByTimeAsync(5 * VISIBILITY_MS);
    expect(runs).toEqual([['now']]);
  });
});

describe('the local delay and check-back queues', () => {
  it('redeliver a release wake-up the handler reports as failed after the delay queue visibility timeout', async () => {
    const bus = new LocalTimerBus();
    const seen: string[] = [];
    let fail = true;
    bus.setTargets({
      minute: async () => undefined,
      release: async (event) => {
        seen.push(event.Records[0]!.attributes.ApproximateReceiveCount ?? '?');
        if (!fail) return { batchItemFailures: [] };
        fail = false;
        return { batchItemFailures: [{ itemIdentifier: event.Records[0]!.messageId }] };
      },
    });
    await bus.send({ kind: 'release', minute: 1, second: 1, ids: ['x'] }, 1000);
    await vi.advanceTimersByTimeAsync(1000);
    expect(seen).toEqual(['1']);
    await vi.advanceTimersByTimeAsync(DELAY_QUEUE_VISIBILITY_MS);
    expect(seen).toEqual(['1', '2']);
    bus.clear();
  });

  it('redeliver a failed check-back after the check queue visibility timeout, up to the redrive limit', async () => {
    const checks = new LocalCheckDispatcher();
    let runs = 0;
    checks.setTarget(async () => {
      runs++;
      throw new Error('checker down');
    });
    await checks.dispatch(['tx-1']);
    expect(runs).toBe(1);
    await vi.advanceTimersByTimeAsync(WORK_QUEUE_MAX_RECEIVES * CHECK_QUEUE_VISIBILITY_MS);
    expect(runs).toBe(WORK_QUEUE_MAX_RECEIVES);
    expect(checks.queue.deadLetters).toHaveLength(1);
  });
});
