/**
 * The local push queue behaves like the SQS event source it stands in for:
 * records a run reports as failed (or every record, when the run throws) come
 * back after the queue's visibility timeout; records that succeeded do not.
 */
import { describe, expect, it, vi } from 'vitest';
import { useQuietFakeTimers } from '../helpers/quiet-fake-timers.js';
import { LocalPushBus } from '../../lib/adapters/local/push-bus.js';
import type { SqsLikeEvent } from '../../lib/adapters/local/sqs-like-queue.js';

const VISIBILITY_MS = 60_000;
const groupsOf = (event: SqsLikeEvent) => event.Records.map((r) => (JSON.parse(r.body) as { group: string }).group);

useQuietFakeTimers();

describe('LocalPushBus', () => {
  it('delivers after the delay and redelivers only the records answered as failed, after the visibility timeout', async () => {
    const bus = new LocalPushBus(VISIBILITY_MS);
    const runs: string[][] = [];
    let failNext = true;
    bus.setTarget(async (event) => {
      runs.push(groupsOf(event));
      if (!failNext) return { batchItemFailures: [] };
      failNext = false;
      return { batchItemFailures: [{ itemIdentifier: event.Records[1]!.messageId }] };
    });
    await bus.send([{ group: 'a' }, { group: 'b' }], 1000);
    await vi.advanceTimersByTimeAsync(999);
    expect(runs).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(runs).toEqual([['a', 'b']]);
    await vi.advanceTimersByTimeAsync(VISIBILITY_MS - 1);
    expect(runs).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(runs).toEqual([['a', 'b'], ['b']]);
    await vi.advanceTimersByTimeAsync(10 * VISIBILITY_MS);
    expect(runs).toHaveLength(2);
  });

  it('redelivers every record of a run that throws', async () => {
    const bus = new LocalPushBus(VISIBILITY_MS);
    const runs: string[][] = [];
    bus.setTarget(async (event) => {
      runs.push(groupsOf(event));
      if (runs.length === 1) throw new Error('injected');
      return undefined;
    });
    await bus.send([{ group: 'a' }, { group: 'b' }]);
    await vi.advanceTimersByTimeAsync(0);
    expect(runs).toEqual([['a', 'b']]);
    await vi.advanceTimersByTimeAsync(VISIBILITY_MS);
    expect(runs).toEqual([['a', 'b'], ['a', 'b']]);
  });

  it('a stop cancels waiting jobs and redeliveries', async () => {
    const bus = new LocalPushBus(VISIBILITY_MS);
    const runs: string[][] = [];
    bus.setTarget(async (event) => {
      runs.push(groupsOf(event));
      return { batchItemFailures: event.Records.map((r) => ({ itemIdentifier: r.messageId })) };
    });
    await bus.send([{ group: 'a' }]);
    await vi.advanceTimersByTimeAsync(0);
    bus.clear();
    await vi.advanceTimersByTimeAsync(2 * VISIBILITY_MS);
    expect(runs).toEqual([['a']]);
  });
});
