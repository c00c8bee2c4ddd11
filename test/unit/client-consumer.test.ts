/** The Consumer's scheduling against a fake client: shard lanes, concurrency, release on error, extension, stop. */
import { describe, expect, it } from 'vitest';
import { Consumer, SluiceApiError, type ConsumerOptions, type Delivered } from '../../lib/client/index.js';
import { deliveredMessage } from '../helpers/delivered.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let counter = 0;
function message(shardKey: string | null, sequence: number | null, body = `${shardKey}#${sequence}`): Delivered {
  counter++;
  return deliveredMessage({ messageId: `m${counter}`, body, shardKey, sequence });
}

/** A client whose receives hand out the given batches, then nothing (after a short "long poll"). */
function fakeClient(batches: Delivered[][], options: { visibilityTimeoutSeconds?: number; refuseExtension?: boolean } = {}) {
  const log: string[] = [];
  const client = {
    log,
    receive: async (_group: string, input: { maxMessages?: number } = {}) => {
      const next = batches[0];
      if (next) {
        const taken = next.splice(0, input.maxMessages ?? 10);
        if (next.length === 0) batches.shift();
        return taken;
      }
      await sleep(5);
      return [];
    },
    /** The receive that carries commits: logged as `carry <handle>`, then a receive as above. */
    receiveAndCommit: async (group: string, handles: string[], input: { maxMessages?: number; waitSeconds?: number } = {}) => {
      for (const h of handles) log.push(`carry ${h} wait=${input.waitSeconds}`);
      const messages = await client.receive(group, input);
      return { messages, commitResults: handles.map((receiptHandle) => ({ receiptHandle, status: 'committed' as const })) };
    },
    commit: async (_group: string, entries: Array<string | { receiptHandle: string; publish?: unknown[] }>) => {
      for (const e of entries) log.push(typeof e === 'string' ? `commit ${e}` : `commit ${e.receiptHandle} +${e.publish?.length ?? 0}`);
      return { results: entries.map((e) => ({ receiptHandle: typeof e === 'string' ? e : e.receiptHandle, status: 'committed' as const })) };
    },
    changeVisibility: async (_group: string, handle: string, seconds: number) => {
      log.push(`visibility ${handle} ${seconds}`);
      if (seconds > 0 && options.refuseExtension) {
        throw new SluiceApiError(
          { type: 'urn:sluice:problem:ReceiptHandleExpired', title: 'Receipt handle expired', status: 409, detail: 'expired', code: 'ReceiptHandleExpired' },
          { method: 'POST', url: '/visibility' },
        );
      }
    },
    getGroup: async (name: string) => ({ name, visibilityTimeoutSeconds: options.visibilityTimeoutSeconds ?? 30 }),
  };
  return client;
}

async function run(client: ReturnType<typeof fakeClient>, options: Omit<ConsumerOptions, 'group'>, until: () => boolean) {
  const consumer = new Consumer(client as never, { group: 'g', waitSeconds: 1, ...options });
  await consumer.start();
  const deadline = Date.now() + 10_000;
  while (!until()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await sleep(5);
  }
  await consumer.stop();
  return consumer;
}

describe('Consumer', () => {
  it('runs a shard’s messages one at a time in sequence order, shards in parallel, within the concurrency', async () => {
    const batch: Delivered[] = [];
    for (let seq = 1; seq <= 4; seq++) for (const shard of ['a', 'b', 'c']) batch.push(message(shard, seq));
    batch.push(message(null, null, 'std-1'), message(null, null, 'std-2'));
    const client = fakeClient([batch]);
    const handled: string[] = [];
    const running = new Set<string>();
    let active = 0;
    let peak = 0;
    const overlaps: string[] = [];
    await run(
      client,
      {
        concurrency: 3,
        maxBuffered: 20,
        handler: async (m) => {
          const lane = m.shardKey ?? m.messageId;
          if (running.has(lane)) overlaps.push(m.body);
          running.add(lane);
          peak = Math.max(peak, ++active);
          await sleep(2 + Math.random() * 8);
          handled.push(m.body);
          active--;
          running.delete(lane);
        },
      },
      () => client.log.filter((l) => l.startsWith('commit')).length === 14,
    );
    expect(overlaps).toEqual([]);
    expect(peak).toBe(3);
    for (const shard of ['a', 'b', 'c']) {
      expect(handled.filter((b) => b.startsWith(`${shard}#`))).toEqual([1, 2, 3, 4].map((n) => `${shard}#${n}`));
      // …and each is committed before the next one of its shard starts.
      const commits = client.log.filter((l) => l.startsWith(`commit h:${shard}#`));
      expect(commits).toEqual([1, 2, 3, 4].map((n) => `commit h:${shard}#${n}`));
    }
  });

  it('runs a shard’s messages in parallel when told that order does not matter', async () => {
    const client = fakeClient([[message('a', 1), message('a', 2), message('a', 3)]]);
    let active = 0;
    let peak = 0;
    let done = 0;
    await run(
      client,
      {
        concurrency: 3,
        preserveShardOrder: false,
        handler: async () => {
          peak = Math.max(peak, ++active);
          await sleep(20);
          active--;
          done++;
        },
      },
      () => done === 3,
    );
    expect(peak).toBe(3);
  });

  it('puts a redelivered older message of a shard before the newer ones it holds', async () => {
    const client = fakeClient([[message('a', 3), message('a', 2), message('a', 4)]]);
    const handled: string[] = [];
    await run(client, { concurrency: 2, handler: async (m) => void handled.push(m.body) }, () => handled.length === 3);
    expect(handled).toEqual(['a#2', 'a#3', 'a#4']);
  });

  it('commits with the handler’s publish entries', async () => {
    const client = fakeClient([[message('a', 1)]]);
    await run(
      client,
      { handler: () => ({ publish: [{ topic: 'out', body: 'x', shardKey: 'a' }] }) },
      () => client.log.some((l) => l.startsWith('commit')),
    );
    expect(client.log).toContain('commit h:a#1 +1');
  });

  it('releases a failed message and the rest of its shard, leaving other shards alone', async () => {
    const client = fakeClient([[message('a', 1), message('a', 2), message('a', 3), message('b', 1)]]);
    const errors: string[] = [];
    await run(
      client,
      {
        concurrency: 1,
        maxBuffered: 10,
        handler: async (m) => {
          if (m.body === 'a#1') throw new Error('boom');
        },
        onError: (_error, kind, m) => errors.push(`${kind} ${m?.body}`),
      },
      () => client.log.includes('commit h:b#1') && client.log.filter((l) => l.startsWith('visibility')).length === 3,
    );
    expect(errors).toEqual(['handler a#1']);
    expect(client.log.filter((l) => l.startsWith('visibility'))).toEqual(['visibility h:a#1 0', 'visibility h:a#2 0', 'visibility h:a#3 0']);
    expect(client.log.filter((l) => l.startsWith('commit'))).toEqual(['commit h:b#1']);
  });

  it('extends the lease of a long handler every half visibility timeout; a refused extension aborts the handler', async () => {
    const client = fakeClient([[message('a', 1)]], { visibilityTimeoutSeconds: 1 });
    await run(client, { handler: async () => void (await sleep(1600)) }, () => client.log.some((l) => l.startsWith('commit')));
    expect(client.log.filter((l) => l === 'visibility h:a#1 1').length).toBeGreaterThanOrEqual(2);

    const refusing = fakeClient([[message('a', 1)]], { visibilityTimeoutSeconds: 1, refuseExtension: true });
    let aborted = false;
    await run(
      refusing,
      {
        handler: async (_m, { signal }) => {
          await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
          aborted = signal.aborted;
        },
        onError: () => undefined,
      },
      () => aborted,
    );
    expect(aborted).toBe(true);
  });

  it('lets the next receive carry the commits when it holds all it may, and a shard’s lane waits for their answer', async () => {
    const client = fakeClient([[message('a', 1), message('a', 2)], [message('a', 3)], [message('b', 1)]]);
    const handled: string[] = [];
    const committed: string[] = [];
    await run(
      client,
      { concurrency: 1, maxBuffered: 2, handler: async (m) => void handled.push(`${m.body} after ${committed.join(',')}`), onCommitted: (m) => committed.push(m.body) },
      () => committed.length === 4,
    );
    // Full after the first receive: a#1's commit rides on the receive that brings a#3 (without a long poll),
    // and a#2 runs only once that commit was answered.
    expect(client.log.slice(0, 2)).toEqual(['carry h:a#1 wait=0', 'carry h:a#2 wait=0']);
    expect(handled.slice(0, 2)).toEqual(['a#1 after ', 'a#2 after a#1']);
    expect(committed.sort()).toEqual(['a#1', 'a#2', 'a#3', 'b#1']);
    // The last one finishes while the consumer has room and a long poll is pending: committed on its own.
    expect(client.log.filter((l) => l.startsWith('commit'))).toEqual(['commit h:b#1']);
  });

  it('commits on their own with carryCommits false, with publish entries, and while a long poll is pending', async () => {
    const off = fakeClient([[message('a', 1), message('a', 2)]]);
    await run(off, { concurrency: 1, maxBuffered: 2, carryCommits: false, handler: () => undefined }, () => off.log.length === 2);
    expect(off.log).toEqual(['commit h:a#1', 'commit h:a#2']);
    const polling = fakeClient([[message('a', 1)]]);
    await run(polling, { handler: () => undefined }, () => polling.log.length === 1);
    expect(polling.log).toEqual(['commit h:a#1']);
  });

  it('stop() waits for the running handler and its commit, and releases what is queued', async () => {
    const client = fakeClient([[message('a', 1), message('a', 2), message('a', 3)]]);
    let finished = false;
    const consumer = new Consumer(client as never, {
      group: 'g',
      waitSeconds: 1,
      handler: async () => {
        await sleep(100);
        finished = true;
      },
    });
    await consumer.start();
    while (consumer.inFlight < 3) await sleep(2);
    await consumer.stop();
    expect(finished).toBe(true);
    expect(consumer.inFlight).toBe(0);
    expect(client.log).toEqual(['commit h:a#1', 'visibility h:a#2 0', 'visibility h:a#3 0']);
  });
});
