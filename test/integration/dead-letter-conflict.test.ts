/**
 * A busy store while dead-lettering (a reviewer's probe, 2026-12-03): the dead-letter counters are
 * 8 items every dead-letter transaction of the group writes. DynamoDB cancels a TransactWriteItems that meets another one in progress on the same item
 * (reason `TransactionConflict`; not retried by the SDK). Injected here on the counter item: the
 * receive that claimed m2 and had to dead-letter m1 answers 429 after its claim landed, so m2 is
 * leased (deliveryCount 1 spent) and answered to no one until its visibility timeout ends.
 */
import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { beforeEach, describe, expect, it } from 'vitest';
import { newHarness, send, type Harness } from '../helpers/stores.js';
import { group, topic } from '../helpers/builders.js';

let h: Harness;

beforeEach(async () => {
  h = await newHarness();
  await h.admin.putTopic('orders', topic({ partitions: 1 }));
  await h.admin.putGroup('g', group('orders', { maxDeliveries: 1, visibilityTimeoutSeconds: 30 }));
});

describe('a transaction conflict on a dead-letter counter', () => {
  it('does not fail the receive that claimed other messages (the dead letter waits for the next receive)', async () => {
    await h.queue.send('orders', send('m1'));
    expect((await h.queue.receive('g', { maxMessages: 10, waitSeconds: 0 })).map((m) => m.body)).toEqual(['m1']);
    h.clock.advance(31_000);
    await h.queue.send('orders', send('m2'));
    let injected = 0;
    h.doc.middlewareStack.add(
      (next, context) => async (args) => {
        const counterAt = String(context.commandName).startsWith('TransactWrite')
          ? ((args.input as { TransactItems?: unknown[] }).TransactItems ?? []).findIndex((item) => JSON.stringify(item).includes('"L#g#'))
          : -1;
        if (counterAt >= 0 && injected === 0) {
          injected++;
          const n = ((args.input as { TransactItems: unknown[] }).TransactItems).length;
          throw new TransactionCanceledException({
            message: 'Transaction cancelled, please refer cancellation reasons for specific reasons',
            $metadata: { httpStatusCode: 400 },
            CancellationReasons: Array.from({ length: n }, (_, i) => ({ Code: i === counterAt ? 'TransactionConflict' : 'None' })),
          });
        }
        return next(args);
      },
      { step: 'initialize', name: 'counterConflict' },
    );
    const first = await h.queue.receive('g', { maxMessages: 10, waitSeconds: 0 }).then(
      (got) => got.map((m) => m.body),
      (error: Error) => `${error.name}: ${error.message}`,
    );
    h.doc.middlewareStack.remove('counterConflict');
    expect(injected).toBe(1);
    // The next receive dead-letters m1; m2 stays leased by the failed receive (30 s, delivery 1 spent).
    const second = (await h.queue.receive('g', { maxMessages: 10, waitSeconds: 0 })).map((m) => m.body);
    // m2 was claimed by the first receive: it must be answered there (m1 stays an expired lease past its deliveries).
    expect({ first, second }).toEqual({ first: ['m2'], second: [] });
    expect((await h.admin.getGroup('g')).deadLettered).toBe(1);
  });
});
