/**
 * After test/reliability/activity-long-poll.test.ts: the HTTP long poll as it runs on AWS (SLUICE_NOTIFIER=activity), on
 * DynamoDB Local with the real stream path: an idle long poll parks once,
 * reads one activity item per look with back-off and looks for real every
 * 5 s; a send from another container (its own clients and catalog) carries
 * `w`, the dispatcher moves `A#<topic>`, and the long poll wakes well before
 * its next real look. Prints the calls it counted and the wake latency.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { cryptoRandom, type Random } from '../../lib/ports/random.js';
import { startDispatchPoller } from '../helpers/dispatch-poller.js';
import { group, topic } from '../helpers/builders.js';
import { harness, send, testTable } from '../helpers/stores.js';
import { consumerContainer, RealClock } from '../helpers/activity-consumer.js';
import { nudgeOnWrites } from '../../local/dispatcher.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});


async function setup(randoms: { sender?: Random; consumer?: Random } = {}) {
  const { endpoint, client, doc, table } = await testTable('longpoll');
  const clock = new RealClock();
  // The sender container: the harness's stores (catalog cache off: it sees a park at once).
  const sender = harness(doc, table, { clock, ...(randoms.sender ? { random: randoms.sender } : {}) });
  await sender.admin.putTopic('wide', topic({ type: 'fifo', partitions: 256 }));
  await sender.admin.putGroup('g', group('wide'));
  const dispatch = await startDispatchPoller(endpoint, client, doc, table);
  cleanups.push(dispatch.stop);
  // As in the local runtime: the sender's writes nudge the poller out of its idle back-off.
  cleanups.push(nudgeOnWrites(client, dispatch.poller));
  return { sender, consumer: consumerContainer(table, clock, sender.timers, cleanups, randoms.consumer), dispatch };
}

describe('long poll on a FIFO topic of 256 notice streams (AWS mode)', () => {
  it('wakes on a send from another container and answers it, well before the poll times out', async () => {
    const { sender, consumer } = await setup();
    const latencies: number[] = [];
    for (const [i, idleMs] of [300, 1200, 2600].entries()) {
      const waiting = consumer.queue.receive('g', { maxMessages: 10, waitSeconds: 12 });
      await new Promise((resolve) => setTimeout(resolve, idleMs));
      const sentAt = Date.now();
      await sender.queue.send('wide', send(`after ${idleMs} ms`, { shardKey: `k${i}` }));
      const got = await waiting;
      latencies.push(Date.now() - sentAt);
      if (got.length) await consumer.queue.commit('g', got.map((m) => m.receiptHandle));
      else await consumer.queue.receive('g', { maxMessages: 10, waitSeconds: 0 }).then((late) => consumer.queue.commit('g', late.map((m) => m.receiptHandle)));
    }
    console.log(`wide: send → long poll answered (ms): ${latencies.join(', ')}`);
    for (const ms of latencies) expect(ms).toBeLessThan(5000);
  });
});

describe('a message sent between two long polls, on a FIFO topic of 256 notice streams (AWS mode)', () => {
  it('is answered by the next long poll, not after it waited its full time', async () => {
    // Fixed draws, so the outcome does not depend on luck: the consumer's rotation over the 256 notice
    // streams starts at stream 0 (8 a look), the sender's notices go to the stream its picker draws at 0.5.
    const { sender, consumer, dispatch } = await setup({ sender: { ...cryptoRandom, fraction: () => 0.5 }, consumer: { ...cryptoRandom, fraction: () => 0 } });
    // A first long poll parks the topic and waits out its time (nothing sent), past the look at
    // park + the senders' catalog cache + 1 s (6 s): the park is settled, as for a steady consumer.
    expect(await consumer.queue.receive('g', { maxMessages: 10, waitSeconds: 7 })).toEqual([]);
    // The consumer is busy (or the send lands in the wait's last back-off step, after its last
    // activity read): the dispatcher stamps the notice stream before the next call begins.
    await sender.queue.send('wide', send('between polls', { shardKey: 'between' }));
    for (const until = Date.now() + 10_000; !dispatch.routed.flat().includes('wide') && Date.now() < until; ) await new Promise((resolve) => setTimeout(resolve, 20));
    const started = Date.now();
    const got = await consumer.queue.receive('g', { maxMessages: 10, waitSeconds: 10 });
    const tookMs = Date.now() - started;
    console.log(`between polls: answered after ${tookMs} ms with ${JSON.stringify(got.map((m) => m.body))}`);
    expect(got.map((m) => m.body)).toEqual(['between polls']);
    expect(tookMs).toBeLessThan(4000);
  });
});
