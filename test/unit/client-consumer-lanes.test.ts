/**
 * The Consumer's FIFO lanes are per shard key *of a topic* — or of a time-order group, whose topics
 * share one sequence per shard key. A failing handler releases what waits behind it in its lane
 * (order first); until 2026-12-04 lanes were per shard key alone, so a failing `payments` handler
 * released an unrelated `orders` message with the same customer id, unhandled, a failed attempt
 * counted against it (found by an audit).
 */
import { describe, expect, it } from 'vitest';
import { Consumer, type Delivered } from '../../lib/client/index.js';
import { deliveredMessage } from '../helpers/delivered.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A fake client answering one receive with `batch`, logging commits and releases; `orderGroup` per topic. */
const fakeClient = (batch: Delivered[], log: string[], orderGroups: Record<string, string | null>) => {
  const batches = [batch];
  return {
    receive: async () => batches.shift() ?? (await sleep(5), []),
    receiveAndCommit: async (_g: string, handles: string[]) => {
      for (const h of handles) log.push(`commit ${h}`);
      const next = batches.shift();
      if (!next) await sleep(5);
      return { messages: next ?? [], commitResults: handles.map((receiptHandle) => ({ receiptHandle, status: 'committed' as const })) };
    },
    commit: async (_g: string, entries: string[]) => {
      for (const h of entries) log.push(`commit ${h}`);
      return { results: entries.map((receiptHandle) => ({ receiptHandle, status: 'committed' as const })) };
    },
    changeVisibility: async (_g: string, h: string, s: number) => void log.push(`visibility ${h} ${s}`),
    getGroup: async (name: string) => ({ name, visibilityTimeoutSeconds: 30, subscriptions: Object.keys(orderGroups).map((topic) => ({ topic })) }),
    getTopic: async (name: string) => ({ name, type: 'fifo', orderGroup: orderGroups[name] ?? null }),
  };
};

/**
 * Runs a Consumer over one receive of a `payments` and an `orders` message with the same shard key,
 * the `payments` handler failing; `getTopic` replaces the fake client's (a denied read).
 */
const run = async (orderGroups: Record<string, string | null>, getTopic?: () => Promise<never>) => {
  const batch = [
    deliveredMessage({ messageId: 'p1', body: 'payment', topic: 'payments', shardKey: 'customer-1', sequence: 5 }),
    deliveredMessage({ messageId: 'o1', body: 'order', topic: 'orders', shardKey: 'customer-1', sequence: 6 }),
  ];
  const log: string[] = [];
  const handled: string[] = [];
  const errors: string[] = [];
  const client = { ...fakeClient(batch, log, orderGroups), ...(getTopic ? { getTopic } : {}) };
  const consumer = new Consumer(client as never, {
    group: 'g',
    waitSeconds: 1,
    doorbell: false,
    concurrency: 4,
    onError: (_error, kind) => void errors.push(kind),
    handler: async (m) => {
      handled.push(m.topic);
      if (m.topic === 'payments') throw new Error('payment provider down');
    },
  });
  await consumer.start();
  await sleep(300);
  await consumer.stop();
  return { log, handled, errors, handles: batch.map((m) => m.receiptHandle) };
};

describe('Consumer lanes across FIFO topics', () => {
  it('a topic it cannot read keeps the shared lane of its shard keys (order kept), reported as a `topic` error', async () => {
    const { log, handled, errors, handles } = await run({ payments: null, orders: null }, () => Promise.reject(new Error('AccessDenied')));
    expect(errors.filter((k) => k === 'topic')).toHaveLength(2);
    expect(handled).toEqual(['payments']);
    expect(log).toContain(`visibility ${handles[1]} 0`);
  });

  it('unrelated topics sharing a shard key value: a failing handler on one leaves the other to run and commit', async () => {
    const { log, handled, handles } = await run({ payments: null, orders: null });
    expect(handled.sort()).toEqual(['orders', 'payments']);
    expect(log).toContain(`visibility ${handles[0]} 0`);
    expect(log).not.toContain(`visibility ${handles[1]} 0`);
    expect(log).toContain(`commit ${handles[1]}`);
  });

  it('topics of one time-order group share the lane: the message behind the failed one goes back unhandled (order first)', async () => {
    const { log, handled, handles } = await run({ payments: 'ledger', orders: 'ledger' });
    expect(handled).toEqual(['payments']);
    expect(log).toContain(`visibility ${handles[0]} 0`);
    expect(log).toContain(`visibility ${handles[1]} 0`);
  });
});
