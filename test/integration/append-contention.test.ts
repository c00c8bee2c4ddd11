/**
 * Lost append races on DynamoDB Local (docs/design.md, Append: "Lost races: a time budget and full
 * jitter"): many writers on one stream all land, however many races each loses, while the budget
 * allows; a stream kept contended for the whole budget answers 429, one contended for less does not.
 * A rival stands for the other writers: it puts the very segment an append is about to put, just
 * before it, so the append's real `attribute_not_exists` condition fails.
 */
import { describe, expect, it } from 'vitest';
import { PutCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { RoundTrip } from '../../bench/round-trip.js';
import { APPEND_BUDGET_MS, APPEND_MIN_TRIES, Contention } from '../../lib/adapters/dynamodb/append-contention.js';
import { StreamLog } from '../../lib/adapters/dynamodb/stream-log.js';
import { ThrottledError } from '../../lib/domain/errors.js';
import { realStopwatch } from '../../lib/ports/stopwatch.js';
import { FakeStopwatch } from '../helpers/fake-stopwatch.js';
import { record } from '../helpers/records.js';
import { cyclingRandom } from '../helpers/random.js';
import { FakeClock, harness, send, testTable } from '../helpers/stores.js';
import * as build from '../helpers/builders.js';

/** One DynamoDB call in a region, in fake time. */
const CALL_MS = 7.5;

/**
 * A document client whose every call takes CALL_MS of `watch`'s time and whose segment puts lose
 * to a rival while `rivalUntil` (fake ms) is ahead: the rival puts the same item first.
 */
function rivalled(doc: DynamoDBDocumentClient, watch: FakeStopwatch) {
  const state = { rivalUntil: Number.POSITIVE_INFINITY, stolen: 0, puts: 0 };
  const wrapped = Object.create(doc) as DynamoDBDocumentClient;
  wrapped.send = (async (command: unknown) => {
    watch.advance(CALL_MS);
    if (command instanceof PutCommand && String(command.input.Item?.pk).startsWith('S#')) {
      state.puts++;
      if (watch.now() < state.rivalUntil) {
        // Another writer's try: its own token (a put that landed is retried on its own token only).
        await doc.send(new PutCommand({ TableName: command.input.TableName, Item: { ...command.input.Item, tk: 'rival' } }));
        state.stolen++;
      }
    }
    return doc.send(command as never);
  }) as DynamoDBDocumentClient['send'];
  return { doc: wrapped, state };
}

const failure = (p: Promise<unknown>) => p.then(() => undefined, (error: unknown) => error);

describe('a FIFO-like stream (the stream log retries it)', () => {
  const clock = new FakeClock();

  /**
   * A stream log on a rivalled client, its waits at `fraction` of their range, and `stream` opened
   * by a first append the rival lets through (the epoch opens: a transaction).
   */
  async function rivalledLog(stream: string, fraction: number) {
    const { doc, table } = await testTable('contention');
    const watch = new FakeStopwatch();
    const rival = rivalled(doc, watch);
    const log = new StreamLog(rival.doc, table, clock, undefined, { contention: new Contention(watch, () => fraction) });
    rival.state.rivalUntil = 0;
    await log.append(stream, () => ({ records: [record(clock, 'first')] }));
    return { watch, rival, log };
  }

  it('answers 429 only when the stream stayed contended for the whole budget', async () => {
    // Waits at a fifth of their range: APPEND_MIN_TRIES tries fit in the budget, so the budget is what ends it.
    const { watch, rival, log } = await rivalledLog('s1', 0.2);
    rival.state.rivalUntil = Number.POSITIVE_INFINITY;
    const start = watch.now();
    const error = await failure(log.append('s1', () => ({ records: [record(clock, 'm')] })));
    expect(error).toBeInstanceOf(ThrottledError);
    // Every try lost, and the tries went on for the whole budget: the last one started at its end at the latest.
    expect(rival.state.stolen).toBe(rival.state.puts);
    expect(rival.state.puts).toBeGreaterThanOrEqual(APPEND_MIN_TRIES);
    expect(watch.now() - start).toBeGreaterThanOrEqual(APPEND_BUDGET_MS);
    expect(watch.now() - start).toBeLessThanOrEqual(APPEND_BUDGET_MS + 2 * CALL_MS);
    // The losers waited: full jitter, not a spin.
    expect(watch.waits.length).toBe(rival.state.puts - 1);
  });

  it('lands an append whose stream stays contended for most of the budget, without a gap', async () => {
    const { watch, rival, log } = await rivalledLog('s2', 0.999);
    const start = watch.now();
    rival.state.rivalUntil = start + APPEND_BUDGET_MS - 300;
    const { seq } = await log.append('s2', () => ({ records: [record(clock, 'mine')] }));
    expect(watch.now() - start).toBeGreaterThanOrEqual(APPEND_BUDGET_MS - 300);
    expect(rival.state.stolen).toBeGreaterThan(1);
    // The rival's segments (copies of the loser's attempts) hold 2 … seq − 1; this one landed right after them.
    expect(seq).toBe(rival.state.stolen + 2);
    const segments = await log.read('s2', 0, 100);
    expect(segments.map((s) => s.seq)).toEqual(Array.from({ length: seq }, (_, i) => i + 1));
  });
});

describe('a standard topic (the sender moves between partitions, then waits)', () => {
  it('answers 429 only after every partition stayed contended for the whole budget; lands when contention ends earlier', async () => {
    const { doc, table } = await testTable('contention');
    const watch = new FakeStopwatch();
    const rival = rivalled(doc, watch);
    rival.state.rivalUntil = 0;
    // Waits at a fifth of their range: APPEND_MIN_TRIES tries fit in the budget, so the budget is what ends it.
    const h = harness(rival.doc, table, { random: cyclingRandom(), contention: new Contention(watch, () => 0.2) });
    await h.admin.putTopic('orders', build.topic({ partitions: 2 }));
    // Open both partitions (a stream's first append is a transaction the rival does not meet).
    await Promise.all([h.queue.send('orders', send('a')), h.queue.send('orders', send('b'))]);
    for (const p of [0, 1]) expect((await h.stores.log.head(`t:orders/p:${p}`)).kind).toBe('segment');

    rival.state.rivalUntil = Number.POSITIVE_INFINITY;
    let start = watch.now();
    const error = await failure(h.queue.send('orders', send('c')));
    expect(error).toBeInstanceOf(ThrottledError);
    expect(watch.now() - start).toBeGreaterThanOrEqual(APPEND_BUDGET_MS);
    // The send's look-ups before its budget starts (topic, message-id key) and its last try.
    expect(watch.now() - start).toBeLessThanOrEqual(APPEND_BUDGET_MS + 4 * CALL_MS);
    // The first lost race moved the send to the other partition at once; waits came only after both were lost on.
    expect(rival.state.puts).toBeGreaterThanOrEqual(APPEND_MIN_TRIES);
    expect(watch.waits.length).toBe(rival.state.puts - 2);

    start = watch.now();
    rival.state.rivalUntil = start + APPEND_BUDGET_MS - 300;
    const result = await h.queue.send('orders', send('d'));
    expect(result.state).toBe('deliverable');
    expect(watch.now() - start).toBeGreaterThanOrEqual(APPEND_BUDGET_MS - 300);
  });
});

describe('many writers on one stream under an AWS-like round trip', () => {
  it('every append lands, none answered 429 while the budget allows, however many races it lost', async () => {
    const { client, doc, table } = await testTable('contention');
    const roundTrip = new RoundTrip(5, 10);
    roundTrip.install(client);
    const clock = new FakeClock();
    const puts = { all: 0 };
    const counted = Object.create(doc) as DynamoDBDocumentClient;
    counted.send = ((command: unknown) => {
      if (command instanceof PutCommand) puts.all++;
      return doc.send(command as never);
    }) as DynamoDBDocumentClient['send'];
    // Real time; a budget no writer here can run out of on a busy machine: an attempt count (12 tries,
    // as before) is what ran out with 32 writers.
    const log = new StreamLog(counted, table, clock, undefined, { contention: new Contention(realStopwatch, Math.random, 60_000) });
    await log.append('hot', () => ({ records: [record(clock, 'first')] }));
    const writers = 32;
    const each = 2;
    roundTrip.enabled = true;
    puts.all = 0;
    const outcomes = await Promise.allSettled(
      Array.from({ length: writers }, async (_, w) => {
        for (let i = 0; i < each; i++) await log.append('hot', () => ({ records: [record(clock, `w${w}-${i}`)] }));
      }),
    );
    roundTrip.enabled = false;
    expect(outcomes.filter((o) => o.status === 'rejected')).toEqual([]);
    const segments = await log.read('hot', 0, 200);
    expect(segments.map((s) => s.seq)).toEqual(Array.from({ length: writers * each + 1 }, (_, i) => i + 1));
    const lostPerAppend = (puts.all - writers * each) / (writers * each);
    console.log(`${writers} writers × ${each} appends on one stream: ${lostPerAppend.toFixed(2)} lost races per append`);
  }, 120_000);
});
