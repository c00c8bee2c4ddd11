/**
 * A dead-lettering claim planned from a cached (or eventually consistent) cursor is conditional on
 * the lease's expiry as it read it: a lease its holder extended in another container meanwhile is
 * not dead-lettered, and the holder's commit takes effect (found by review of the cursor cache).
 */
import { describe, expect, it } from 'vitest';
import { FakeClock, harness, send, testTable, type Harness } from '../helpers/stores.js';
import * as build from '../helpers/builders.js';

async function setup(cacheMs: number) {
  const { doc, table } = await testTable();
  const clock = new FakeClock();
  const a: Harness = harness(doc, table, { clock, cursorCacheMs: cacheMs });
  const b: Harness = harness(doc, table, { clock, cursorCacheMs: 2000 });
  await a.admin.putTopic('t', build.topic({ partitions: 1 }));
  await a.admin.putTopic('dlq', build.topic({ partitions: 1 }));
  await a.admin.putGroup('g', build.group('t', { visibilityTimeoutSeconds: 30, maxDeliveries: 1, deadLetterTopic: 'dlq' }));
  return { a, b, clock };
}

describe('dead-lettering from a cached cursor', () => {
  for (const cacheMs of [0, 2000]) {
    it(`leaves a lease extended in another container alone (this container's cursor cache ${cacheMs} ms)`, async () => {
      const { a, b, clock } = await setup(cacheMs);
      await a.queue.send('t', send('m'));
      const [held] = await a.queue.receive('g', { maxMessages: 1, waitSeconds: 0 });
      expect(held?.body).toBe('m');
      clock.advance(29_000);
      // A looks: it reads (and with a cache keeps) the cursor, whose lease ends at +30 s.
      expect(await a.queue.receive('g', { maxMessages: 1, waitSeconds: 0 })).toEqual([]);
      clock.advance(500);
      // The holder extends its lease through container B, to +89.5 s.
      await b.queue.changeVisibility('g', held!.receiptHandle, 60);
      clock.advance(700); // +30.2 s: A's copy (1.2 s old) shows the lease expired on its last delivery.
      expect(await a.queue.receive('g', { maxMessages: 1, waitSeconds: 0 })).toEqual([]);
      const [result] = await b.queue.commit('g', [held!.receiptHandle]);
      expect(result && 'status' in result ? result.status : result?.error.code).toBe('committed');
      expect(await a.queue.receive('g', { maxMessages: 1, waitSeconds: 0 })).toEqual([]);
    });
  }
});
