/**
 * A receive's dead-letter appends start none after the receive's deadline (docs/design.md, Dead
 * letters): each append may wait out a contended dead-letter stream for up to its budget, so a
 * receive that moved one dead message past its `answerBy` leaves the rest — expired leases past
 * their deliveries — to the next receive instead of running past its function timeout.
 * The clock jumps past the deadline while the first dead-letter append is in flight.
 */
import { describe, expect, it } from 'vitest';
import { group, topic } from '../helpers/builders.js';
import { FakeClock, harness, send, testTable } from '../helpers/stores.js';

/** Is this call a dead-letter append (the copy's segment, in one transaction with the lease's close)? */
const isDeadLetterAppend = (command: string, input: unknown) => command === 'TransactWriteItemsCommand' && JSON.stringify(input).includes('S#t:billing-dlq/');

describe('dead letters and the receive deadline', () => {
  it('a receive past its deadline after one dead-letter append starts no other; the next receive moves the rest', async () => {
    const { client, doc, table } = await testTable('dead-letter-deadline');
    const clock = new FakeClock();
    const h = harness(doc, table, { clock });
    await h.admin.putTopic('orders', topic({ partitions: 1 }));
    await h.admin.putGroup('billing', group('orders', { maxDeliveries: 1, visibilityTimeoutSeconds: 30, retryPolicy: { initialSeconds: 0 } }));
    const sent = await Promise.all(['a', 'b', 'c'].map(async (body) => (await h.queue.send('orders', send(body))).messageId));
    expect(await h.queue.receive('billing', { maxMessages: 10, waitSeconds: 0 })).toHaveLength(3);
    clock.advance(30_001); // every lease expired at its last delivery: all three are due for the dead-letter topic

    // Each dead-letter append takes 2 s of the clock: the first one ends past the receive's deadline.
    let appends = 0;
    client.middlewareStack.add(
      (next, context) => async (args) => {
        if (isDeadLetterAppend(String(context.commandName), args.input)) {
          appends++;
          clock.advance(2_000);
        }
        return next(args);
      },
      { step: 'initialize', name: 'slow-dead-letters' },
    );
    const answerBy = clock.now() + 1_000;
    expect(await h.queue.receive('billing', { maxMessages: 10, waitSeconds: 0, answerBy })).toEqual([]);
    expect(appends).toBe(1); // without the rule: 3, the last two started after the deadline
    const states = async () => (await Promise.all(sent.map((id) => h.queue.getMessage('orders', id)))).map((m) => m.groups[0]?.state);
    expect((await states()).filter((s) => s === 'dead-lettered')).toHaveLength(1);

    // The next receive (a deadline far off) moves the two left, each once.
    expect(await h.queue.receive('billing', { maxMessages: 10, waitSeconds: 0, answerBy: clock.now() + 60_000 })).toEqual([]);
    expect(appends).toBe(3);
    expect(await states()).toEqual(['dead-lettered', 'dead-lettered', 'dead-lettered']);
  });
});
