/**
 * Found by an audit (2026-12-04): the saved outputs of a pending protected commit (pending-outputs.ts) are the publish
 * entries as JSON, in parts of ≤ 395 KB — "a larger entry alone". One publish entry within every API
 * limit (body ≤ 256 KiB, message ≤ 400,000 B, request ≤ 1 MiB) can be more JSON than a DynamoDB item holds:
 * JSON escapes `"`, `\` and control characters.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { newHarness, send, type Harness } from '../helpers/stores.js';
import { group, topic } from '../helpers/builders.js';

let h: Harness;
beforeEach(async () => {
  h = await newHarness();
  await h.admin.putTopic('in', topic({ type: 'fifo' }));
  await h.admin.putTopic('out', topic({ type: 'fifo' }));
  await h.admin.putGroup('p', group('in', { deliveryMode: 'protected' }));
  await h.admin.putGroup('reader', group('out', { deliveryMode: 'concurrent' }));
});

describe('a pending protected commit whose one publish entry is JSON-heavy', () => {
  for (const [label, body] of [
    ['256 KiB of quotes (JSON: 512 KiB)', '"'.repeat(256 * 1024)],
    ['150,000 control characters (JSON: 900,000 B)', '\u0001'.repeat(150_000)],
    ['a JSON document body of 256 KiB', JSON.stringify(Array.from({ length: 20_000 }, (_, i) => ({ k: `v${i}` }))).slice(0, 256 * 1024)],
  ] as const) {
    it(`${label}: the commit answers pending and the output is published when the head commits`, async () => {
      // The request as the HTTP edge sees it stays within its 1 MiB.
      expect(Buffer.byteLength(JSON.stringify({ entries: [{ receiptHandle: 'x'.repeat(1000), publish: [{ topic: 'out', body, shardKey: 's' }] }] }))).toBeLessThan(1024 * 1024);
      await h.queue.sendBatch('in', [send('head', { shardKey: 'a' }), send('second', { shardKey: 'a' })]);
      const got = await h.queue.receive('p', { maxMessages: 10, waitSeconds: 0 });
      expect(got.map((m) => m.body)).toEqual(['head', 'second']);
      const second = await h.queue.commit('p', [{ receiptHandle: got[1]!.receiptHandle, publish: [{ ...send(body, { shardKey: 's' }), topic: 'out' }] }]);
      expect(second.map((r) => ('status' in r ? r.status : `${r.error.code}: ${r.error.message}`))).toEqual(['pending']);
      const head = await h.queue.commit('p', [got[0]!.receiptHandle]);
      expect(head.map((r) => ('status' in r ? r.status : r.error.code))).toEqual(['committed']);
      const out = await h.queue.receive('reader', { maxMessages: 10, waitSeconds: 0 });
      expect(out.map((m) => m.body === body)).toEqual([true]);
    });
  }
});
