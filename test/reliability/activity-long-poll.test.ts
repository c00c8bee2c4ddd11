/**
 * The HTTP long poll as it runs on AWS (SLUICE_NOTIFIER=activity), on
 * DynamoDB Local with the real stream path: an idle long poll parks once,
 * reads one activity item per look with back-off and looks for real every
 * 5 s; a send from another container (its own clients and catalog) carries
 * `w`, the dispatcher moves `A#<topic>`, and the long poll wakes well before
 * its next real look. Prints the calls it counted and the wake latency.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startDispatchPoller } from '../helpers/dispatch-poller.js';
import { group, topic } from '../helpers/builders.js';
import { harness, send, testTable } from '../helpers/stores.js';
import { consumerContainer, RealClock } from '../helpers/activity-consumer.js';
import { FULL_RECEIVE_EVERY_MS } from '../../lib/services/activity-waiter.js';
import { nudgeOnWrites } from '../../local/dispatcher.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});


async function setup() {
  const { endpoint, client, doc, table } = await testTable('longpoll');
  const clock = new RealClock();
  // The sender container: the harness's stores (catalog cache off: it sees a park at once).
  const sender = harness(doc, table, { clock });
  await sender.admin.putTopic('orders', topic());
  await sender.admin.putGroup('g', group('orders'));
  const dispatch = await startDispatchPoller(endpoint, client, doc, table);
  cleanups.push(dispatch.stop);
  // As in the local runtime: the sender's writes nudge the poller out of its idle back-off.
  cleanups.push(nudgeOnWrites(client, dispatch.poller));
  return { sender, consumer: consumerContainer(table, clock, sender.timers, cleanups), dispatch };
}

describe('long poll on activity items (AWS mode)', () => {
  it('waits idle with one activity read per look and one park; real looks only at the start, after the park and when pre-park sender caches expired; none at the end', async () => {
    const { consumer } = await setup();
    const started = Date.now();
    expect(await consumer.queue.receive('g', { maxMessages: 10, waitSeconds: 12 })).toEqual([]);
    const took = Date.now() - started;
    expect(took).toBeGreaterThanOrEqual(12_000);
    const activityReads = consumer.count('GetItemCommand A#');
    const parks = consumer.count('UpdateItemCommand');
    const queries = consumer.count('QueryCommand');
    const firstLook = consumer.calls.slice(0, consumer.calls.indexOf('UpdateItemCommand'));
    const queriesPerLook = firstLook.filter((c) => c === 'QueryCommand').length;
    console.log(`idle 12 s long poll: ${took} ms, ${consumer.units.read} RRU, ${consumer.units.write} WRU, ${consumer.calls.length} calls: ${activityReads} activity reads, ${parks} park, ${queries} queries (${queriesPerLook} a look): ${JSON.stringify(consumer.calls)}`);
    // Real looks: at 0 s, once more right after the park (what came before it carries no `w`) and
    // at park + 6 s (senders' 5 s catalog caches from before the park expired). None at the
    // deadline: the wait ran out with nothing to look for, and the next call looks at once.
    // Before, a look every 5 s: five (0, park, 5, 10, 12 s); then four, with one at the deadline.
    expect(queriesPerLook).toBeGreaterThan(0);
    expect(queries % queriesPerLook).toBe(0);
    const looks = queries / queriesPerLook;
    expect(looks).toBeGreaterThanOrEqual(2);
    expect(looks).toBeLessThanOrEqual(3);
    // The call ends on an activity read, not on a look.
    expect(consumer.calls.at(-1)).toBe('GetItemCommand A#');
    // In between, one GetItem of the activity item per look: at .25, .75, 1.75, 3.75 and 5.75 s of
    // each of the two ~6 s waits, a few fewer when a wait ends early.
    expect(activityReads).toBeGreaterThanOrEqual(6);
    expect(activityReads).toBeLessThanOrEqual(12);
    expect(parks).toBe(1);
  });

  it('wakes on a send from another container through the stream, before its next real look', async () => {
    const { sender, consumer, dispatch } = await setup();
    const latencies: number[] = [];
    for (const idleMs of [300, 1200, 2600]) {
      const waiting = consumer.queue.receive('g', { maxMessages: 10, waitSeconds: 20 });
      await new Promise((resolve) => setTimeout(resolve, idleMs));
      const sentAt = Date.now();
      await sender.queue.send('orders', send(`after ${idleMs} ms`));
      const got = await waiting;
      latencies.push(Date.now() - sentAt);
      expect(got.map((m) => m.body)).toEqual([`after ${idleMs} ms`]);
      await consumer.queue.commit('g', got.map((m) => m.receiptHandle));
    }
    console.log(`send → long poll answered (ms), after 0.3/1.2/2.6 s idle: ${latencies.join(', ')}`);
    // The activity item moves inside the dispatcher's invocation, which is recorded when it returns.
    for (const until = Date.now() + 10_000; dispatch.routed.flat().length < 3 && Date.now() < until; ) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(dispatch.routed.flat()).toEqual(['orders', 'orders', 'orders']);
    // Each woke on its activity item (back-off ≤ 2 s, plus the stream), not on a real look: the
    // stale-sender look comes 6 s after the park, the next cadence look 20 s into the wait.
    expect(FULL_RECEIVE_EVERY_MS).toBeGreaterThanOrEqual(20_000);
    for (const ms of latencies) expect(ms).toBeLessThan(4000);
  });

  it('looks again when a lease this container handed out expires, not at the next cadence look', async () => {
    const { sender, consumer } = await setup();
    await sender.queue.send('orders', send('not committed'));
    const [first] = await consumer.queue.receive('g', { maxMessages: 1, waitSeconds: 5, visibilityTimeoutSeconds: 2 });
    expect(first?.body).toBe('not committed');
    const started = Date.now();
    const again = await consumer.queue.receive('g', { maxMessages: 1, waitSeconds: 20 });
    const tookMs = Date.now() - started;
    console.log(`lease of 2 s expired → redelivered to the waiting receive after ${tookMs} ms`);
    expect(again.map((m) => m.body)).toEqual(['not committed']);
    // At the expiry (2 s of visibility + the first retry back-off, 1 s), well before the 20 s cadence look
    // and before the stale-sender look at park + 6 s.
    expect(tookMs).toBeLessThan(5000);
  });

  it('looks again when a release made in this container ends its back-off', async () => {
    const { sender, consumer } = await setup();
    await sender.queue.send('orders', send('released'));
    const [first] = await consumer.queue.receive('g', { maxMessages: 1, waitSeconds: 5 });
    expect(first?.body).toBe('released');
    // Visibility 0: a failed attempt, claimable again after the first retry back-off (1 s).
    await consumer.queue.changeVisibility('g', first?.receiptHandle ?? '', 0);
    const started = Date.now();
    const again = await consumer.queue.receive('g', { maxMessages: 1, waitSeconds: 20 });
    const tookMs = Date.now() - started;
    console.log(`released with a 1 s back-off → received again by the waiting receive after ${tookMs} ms`);
    expect(again.map((m) => m.body)).toEqual(['released']);
    expect(tookMs).toBeLessThan(5000);
  });
});

