/**
 * Crashes between steps: a fault injector on the DynamoDB client fails writes
 * either before they reach the table or after they took effect (the answer is
 * lost, as when a Lambda dies mid-request). Producers and consumers retry like
 * real clients. Afterwards nothing acknowledged is lost and no order is broken.
 */
import { describe, expect, it } from 'vitest';
import { harness, testTable, send, FakeClock } from '../helpers/stores.js';
import { group, topic } from '../helpers/builders.js';
import type { DeliveredMessage, DeliveryMode } from '../../lib/domain/model.js';

const SHARDS = 6;
const PER_SHARD = 25;

/** Deterministic pseudo-random numbers (mulberry32). */
function seeded(seed: number) {
  let a = seed;
  return () => {
    a |= 0;
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WRITES = new Set(['PutItemCommand', 'UpdateItemCommand', 'TransactWriteItemsCommand', 'DeleteItemCommand']);

describe('FIFO under injected crashes', () => {
  it('loses nothing and breaks no order in any mode', async () => {
    const { client, doc, table } = await testTable();
    const clock = new FakeClock();
    const h = harness(doc, table, { clock });
    const random = seeded(42);
    let armed = false;
    const injected = { before: 0, after: 0 };
    client.middlewareStack.add(
      (next, context) => async (args) => {
        const write = WRITES.has(String(context.commandName));
        if (armed && write && random() < 0.08) {
          injected.before++;
          throw Object.assign(new Error('injected: crash before the write'), { name: 'InjectedFault' });
        }
        const result = await next(args);
        if (armed && write && random() < 0.08) {
          injected.after++;
          throw Object.assign(new Error('injected: crash after the write'), { name: 'InjectedFault' });
        }
        return result;
      },
      { step: 'initialize', name: 'faultInjector' },
    );

    await h.admin.putTopic('in', topic({ type: 'fifo' }));
    await h.admin.putTopic('out', topic({ type: 'fifo' }));
    const modes: DeliveryMode[] = ['serialized', 'concurrent', 'protected'];
    for (const mode of modes) {
      await h.admin.putGroup(mode, group('in', { deliveryMode: mode, visibilityTimeoutSeconds: 5, maxDeliveries: 1000 }));
    }
    await h.admin.putGroup('reader', group('out', { deliveryMode: 'concurrent', visibilityTimeoutSeconds: 5, maxDeliveries: 1000 }));
    armed = true;

    const retry = async <T>(op: () => Promise<T>): Promise<T> => {
      for (let i = 0; ; i++) {
        try {
          return await op();
        } catch (error) {
          if (i > 50) throw error;
        }
      }
    };

    // Produce with dedup ids, retrying until acknowledged.
    const acknowledged = new Map<string, number>(); // body → sequence
    for (let i = 0; i < PER_SHARD; i++) {
      for (let s = 0; s < SHARDS; s++) {
        const body = `s${s}-${i}`;
        const result = await retry(() => h.queue.send('in', send(body, { shardKey: `s${s}`, dedupId: body })));
        acknowledged.set(body, result.sequence ?? -1);
      }
    }
    for (let s = 0; s < SHARDS; s++) {
      const seqs = Array.from({ length: PER_SHARD }, (_, i) => acknowledged.get(`s${s}-${i}`));
      // Gap-free, in order, from the shard's first sequence (it comes from the clock: docs/design.md, Idle shards expire).
      expect(seqs).toEqual(Array.from({ length: PER_SHARD }, (_, i) => (seqs[0] ?? 0) + i));
      expect(seqs[0]).toBeGreaterThan(0);
    }

    // Consume: every mode, commits in reverse order within a batch, retrying lost answers.
    const violations: string[] = [];
    for (const mode of modes) {
      const committed = new Set<string>();
      for (let round = 0; round < 2000 && committed.size < acknowledged.size; round++) {
        clock.advance(500);
        let got: DeliveredMessage[] = [];
        try {
          got = await h.queue.receive(mode, { maxMessages: 10, waitSeconds: 0 });
        } catch {
          continue; // the leases it took (if any) expire and are delivered again
        }
        for (const m of got) {
          const seq = m.sequence ?? 0;
          // Serialized: a message is only ever delivered once every older one of its shard is committed.
          if (mode === 'serialized') {
            // Message i of a shard has sequence first + i (the first comes from the clock).
            const first = acknowledged.get(`${m.shardKey}-0`) ?? 1;
            for (let older = 0; older < seq - first; older++) {
              if (!committed.has(`${m.shardKey}-${older}`)) {
                violations.push(`${mode}: ${m.body} delivered before ${m.shardKey}#${first + older} was committed`);
                break;
              }
            }
          }
        }
        for (const m of [...got].reverse()) {
          const publish = mode === 'protected' ? [{ topic: 'out', ...send(m.body, { shardKey: m.shardKey ?? '' }) }] : [];
          const [result] = await retry(() => h.queue.commit(mode, [{ receiptHandle: m.receiptHandle, publish }]));
          if (result && 'status' in result) committed.add(m.body);
        }
      }
      const stats = await retry(() => h.admin.getGroup(mode));
      expect(stats, mode).toMatchObject({ backlog: 0, inFlight: 0, pending: 0 });
      expect(committed.size, mode).toBe(acknowledged.size);
    }
    expect(violations).toEqual([]);

    // Protected outputs: per shard, in input order, each once. Order is the outputs' sequence numbers:
    // the reader is a concurrent group, so a lease lost with a failed receive is redelivered after
    // newer messages (at-least-once), which says nothing about the order the outputs were published in.
    const outputs = new Map<string, Map<number, string>>(); // shard → sequence → body
    for (let round = 0; round < 2000; round++) {
      clock.advance(500);
      let got: DeliveredMessage[] = [];
      try {
        got = await h.queue.receive('reader', { maxMessages: 50, waitSeconds: 0 });
      } catch {
        continue;
      }
      for (const m of got) {
        const bySeq = outputs.get(m.shardKey ?? '') ?? new Map<number, string>();
        if (bySeq.has(m.sequence ?? 0) && bySeq.get(m.sequence ?? 0) !== m.body) violations.push(`out: #${m.sequence} of ${m.shardKey} is both ${bySeq.get(m.sequence ?? 0)} and ${m.body}`);
        bySeq.set(m.sequence ?? 0, m.body);
        outputs.set(m.shardKey ?? '', bySeq);
        await retry(() => h.queue.commit('reader', [m.receiptHandle]));
      }
      if ([...outputs.values()].reduce((n, l) => n + l.size, 0) >= acknowledged.size) break;
    }
    for (let s = 0; s < SHARDS; s++) {
      const bySeq = outputs.get(`s${s}`) ?? new Map<number, string>();
      expect([...bySeq].sort(([a], [b]) => a - b).map(([, body]) => body)).toEqual(Array.from({ length: PER_SHARD }, (_, i) => `s${s}-${i}`));
    }
    expect(violations).toEqual([]);
    armed = false;
    expect(injected.before + injected.after).toBeGreaterThan(50);
    console.log(`fifo-faults: injected ${injected.before} faults before and ${injected.after} after writes`);
  }, 300_000);
});
