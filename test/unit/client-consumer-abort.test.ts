import { describe, expect, it } from 'vitest';
import { Consumer, type Delivered } from '../../lib/client/index.js';
import { deliveredMessage } from '../helpers/delivered.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * `stop({ abort: true })` aborts every running handler's `signal` (HandlerContext.signal: "aborted
 * when … the consumer is stopping hard"), so a handler that waits on it lets the stop end (until
 * 2026-12-04 it was never aborted and such a stop hung; found by an audit).
 */
describe('Consumer.stop({ abort: true })', () => {
  it('aborts the signal of a running handler (HandlerContext.signal: "aborted when … the consumer is stopping hard")', async () => {
    let batches: Delivered[][] = [[deliveredMessage({ messageId: 'm1', body: 'x', shardKey: null, sequence: null })]];
    const client = {
      receive: async () => { const b = batches.shift(); if (b) return b; await sleep(5); return []; },
      receiveAndCommit: async () => ({ messages: batches.shift() ?? [], commitResults: [] }),
      commit: async (_g: string, e: string[]) => ({ results: e.map((receiptHandle) => ({ receiptHandle, status: 'committed' as const })) }),
      changeVisibility: async () => undefined,
      getGroup: async (name: string) => ({ name, visibilityTimeoutSeconds: 30 }),
    };
    let started = false;
    let handlerSignal: AbortSignal | undefined;
    const consumer = new Consumer(client as never, {
      group: 'g', waitSeconds: 1, doorbell: false, onError: () => undefined,
      handler: async (_m, { signal }) => {
        started = true;
        handlerSignal = signal;
        // a well-behaved handler: gives up when its signal aborts
        await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
      },
    });
    await consumer.start();
    while (!started) await sleep(5);
    const stopped = consumer.stop({ abort: true });
    const outcome = await Promise.race([stopped.then(() => 'stopped'), sleep(2000).then(() => 'still stopping after 2 s')]);
    expect(handlerSignal?.aborted).toBe(true);
    expect(outcome).toBe('stopped');
    batches = [];
  });
});
