/**
 * Partitions under load (issue 19, item 4) on DynamoDB Local: 64 producers and 64 consumers on one
 * topic lose nothing, in one container and with a container each (as on Lambda); raising
 * partitions while they run loses nothing; no 429 below the ceiling.
 */
import { describe, expect, it } from 'vitest';
import { SluiceError } from '../../lib/domain/errors.js';
import { LostRaceError } from '../../lib/adapters/dynamodb/stream-log.js';
import { harness, newHarness, send, type Harness } from '../helpers/stores.js';
import * as build from '../helpers/builders.js';

/** Every test here must finish within this (the brief: ≤ 60 s on a 2-core machine). */
const BOUND_MS = 60_000;

interface Load {
  sent: Set<string>;
  received: Set<string>;
  throttled: number;
  lostRaces: number;
  /** Commits that did not answer `committed` (none expected: visibility 60 s). */
  uncommitted: number;
  /** Calls repeated after a 503 (the machine, not the protocol). */
  unavailable: number;
}

/** Counts the lost races of this container's appends (the stream log throws one per lost single attempt). */
function countLostRaces(h: Harness, load: Load): void {
  const append = h.stores.log.append.bind(h.stores.log);
  h.stores.log.append = async (...args) => {
    try {
      return await append(...args);
    } catch (error) {
      if (error instanceof LostRaceError) load.lostRaces++;
      throw error;
    }
  };
}

/**
 * Repeats a call that answered 503 `Unavailable` (DynamoDB Local not answering within the SDK's
 * timeouts on a loaded machine), as a client does; counted.
 */
async function retried<T>(load: Load, call: () => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await call();
    } catch (error) {
      if (!(error instanceof SluiceError) || error.code !== 'ServiceUnavailable' || attempt >= 5) throw error;
      load.unavailable++;
    }
  }
}

/** `producers` in one container `h` each send `each` messages one by one ({@link produceAs}). */
async function produce(h: Harness, topic: string, producers: number, each: number, load: Load): Promise<void> {
  await Promise.all(Array.from({ length: producers }, (_, p) => produceAs(h, topic, p, each, load)));
}

/** One producer (its own container `h`) sends `each` messages one by one (a 429 is counted and the send repeated). */
async function produceAs(h: Harness, topic: string, producer: number, each: number, load: Load): Promise<void> {
  for (let i = 0; i < each; i++) {
    const body = `p${producer}-m${i}`;
    for (;;) {
      try {
        await retried(load, () => h.queue.send(topic, send(body)));
        break;
      } catch (error) {
        if (!(error instanceof SluiceError) || error.code !== 'Throttled') throw error;
        load.throttled++;
      }
    }
    load.sent.add(body);
  }
}

/** `consumers` receive and commit until `done()` and nothing more comes, or the deadline passes. */
async function consume(h: Harness, group: string, consumers: number, load: Load, done: () => boolean, deadline: number, emptyLooks = 10): Promise<void> {
  await Promise.all(
    Array.from({ length: consumers }, async () => {
      let empty = 0;
      while (Date.now() < deadline) {
        const got = await retried(load, () => h.queue.receive(group, { maxMessages: 10, waitSeconds: 0 }));
        if (got.length > 0) {
          empty = 0;
          got.forEach((m) => load.received.add(m.body));
          const results = await retried(load, () => h.queue.commit(group, got.map((m) => m.receiptHandle)));
          load.uncommitted += results.filter((r) => !('status' in r) || r.status !== 'committed').length;
          continue;
        }
        // Every partition is visited within 8 looks of one consumer (8 per look of 64; 32 of 256).
        if (done() && ++empty >= emptyLooks) return;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    }),
  );
}

/**
 * `count` messages were sent, every one was received, and every commit answered `committed`;
 * returns the run's figures (for failure messages).
 */
function expectAllDelivered(load: Load, count: number, started: number): string {
  const figures = JSON.stringify({ ms: Date.now() - started, throttled: load.throttled, lostRaces: load.lostRaces, unavailable: load.unavailable });
  expect(load.sent.size).toBe(count);
  expect([...load.sent].filter((b) => !load.received.has(b)), figures).toEqual([]);
  expect(load.received.size).toBe(count);
  expect(load.uncommitted).toBe(0);
  return figures;
}

const newLoad = (): Load => ({ sent: new Set(), received: new Set(), throttled: 0, lostRaces: 0, uncommitted: 0, unavailable: 0 });

/** A run's start: a new table, a standard topic of `partitions` partitions, group `g` on it (visibility 60 s), an empty load. */
async function loadedTopic(topic: string, partitions: number) {
  const started = Date.now();
  const h = await newHarness();
  await h.admin.putTopic(topic, build.topic({ partitions }));
  await h.admin.putGroup('g', build.group(topic, { visibilityTimeoutSeconds: 60 }));
  return { started, h, load: newLoad() };
}

describe('partitions under load', () => {
  it('64 producers and 64 consumers on one topic of 64 partitions: nothing lost, no 429, no lost race', async () => {
    const { started, h, load } = await loadedTopic('busy', 64);
    countLostRaces(h, load);
    let produced = false;
    const producing = produce(h, 'busy', 64, 5, load).then(() => (produced = true));
    await Promise.all([producing, consume(h, 'g', 64, load, () => produced, started + BOUND_MS - 5_000)]);
    expectAllDelivered(load, 320, started);
    // The modelled ceiling assumes no contention when partitions ≥ producers: one process here, so the
    // picker gives each concurrent append its own partition (docs/performance.md says what this proves).
    expect(load.throttled).toBe(0);
    expect(load.lostRaces).toBe(0);
    expect((await h.admin.getGroup('g')).backlog).toBe(0);
    expect(Date.now() - started).toBeLessThan(BOUND_MS);
  }, BOUND_MS + 10_000);

  it('64 producers and 64 consumers, each a container of its own as on Lambda, on 256 partitions: nothing lost, no 429, lost races ≤ 0.1 an append', async () => {
    // Above, one container's picker gives each of its concurrent appends its own partition. On AWS
    // each concurrent request has a container, a picker and caches of its own: they meet by chance.
    const { started, h, load } = await loadedTopic('spread', 256);
    const containers = (n: number) => Array.from({ length: n }, () => harness(h.doc, h.table, { clock: h.clock }));
    const producers = containers(64);
    const consumers = containers(64);
    producers.forEach((p) => countLostRaces(p, load));
    let produced = false;
    const each = 5;
    const producing = Promise.all(producers.map((p, i) => produceAs(p, 'spread', i, each, load))).then(() => (produced = true));
    await Promise.all([producing, ...consumers.map((c) => consume(c, 'g', 1, load, () => produced, started + BOUND_MS - 5_000, 33))]);
    const figures = expectAllDelivered(load, 64 * each, started);
    expect(load.throttled, figures).toBe(0);
    expect(load.lostRaces / (64 * each), figures).toBeLessThanOrEqual(0.1);
    expect((await h.admin.getGroup('g')).backlog).toBe(0);
    expect(Date.now() - started).toBeLessThan(BOUND_MS);
  }, BOUND_MS + 10_000);

  it('raising partitions while 16 producers and 16 consumers run loses nothing', async () => {
    const { started, h, load } = await loadedTopic('growing', 2);
    let produced = false;
    const producing = produce(h, 'growing', 16, 24, load).then(() => (produced = true));
    const raising = (async () => {
      for (const partitions of [4, 16, 32]) {
        await new Promise((resolve) => setTimeout(resolve, 1_000));
        await h.admin.patchTopic('growing', { partitions });
        // A group subscribing mid-load gets cursors on every partition too.
        if (partitions === 16) await h.admin.putGroup('late', build.group('growing', { visibilityTimeoutSeconds: 60 }));
      }
    })();
    await Promise.all([producing, raising, consume(h, 'g', 16, load, () => produced, started + BOUND_MS - 5_000)]);
    expect((await h.stores.catalog.getTopic('growing'))?.partitions).toBe(32);
    expect(load.sent.size).toBe(384);
    expect(load.uncommitted).toBe(0);
    const figures = { ms: Date.now() - started, throttled: load.throttled, unavailable: load.unavailable };
    expect([...load.sent].filter((b) => !load.received.has(b)), JSON.stringify(figures)).toEqual([]);
    expect((await h.admin.getGroup('g')).backlog).toBe(0);
    const cursors = (await h.stores.cursors.list('late', Date.now())).filter((c) => c.stream.startsWith('t:growing/p:'));
    expect(cursors).toHaveLength(32);
    expect(Date.now() - started).toBeLessThan(BOUND_MS);
  }, BOUND_MS + 10_000);
});
