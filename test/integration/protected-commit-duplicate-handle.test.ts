/**
 * Found by an audit (2026-12-04): a protected-mode commit request that names one receipt handle twice (a client retrying an
 * entry inside one batch) while the message is not the shard's head.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { newHarness, send, type Harness } from '../helpers/stores.js';
import { group, topic } from '../helpers/builders.js';

let h: Harness;
beforeEach(async () => {
  h = await newHarness();
  await h.admin.putTopic('t', topic());
  await h.admin.putTopic('f', topic({ type: 'fifo' }));
  await h.admin.putGroup('pg', group('f', { deliveryMode: 'protected' }));
  await h.admin.putGroup('reader', group('t'));
});

describe('protected commit naming one handle twice', () => {
  for (const withPublish of [true, false]) {
    it(`${withPublish ? 'with' : 'without'} publish: answers (pending, pending), not a 500; the head's commit completes it once`, async () => {
      await h.queue.sendBatch('f', [send('head', { shardKey: 'a' }), send('second', { shardKey: 'a' })]);
      const got = await h.queue.receive('pg', { maxMessages: 10, waitSeconds: 0 });
      const entry = { receiptHandle: got[1]!.receiptHandle, publish: withPublish ? [{ ...send('out'), topic: 't' }] : [] };
      const r = await h.queue.commit('pg', [entry, entry]);
      expect(r.map((x) => ('status' in x ? x.status : x.error.code))).toEqual(['pending', 'pending']);
      expect((await h.queue.commit('pg', [got[0]!.receiptHandle])).map((x) => ('status' in x ? x.status : x.error.code))).toEqual(['committed']);
      expect((await h.queue.commit('pg', [got[1]!.receiptHandle])).map((x) => ('status' in x ? x.status : x.error.code))).toEqual(['committed']);
      const out = await h.queue.receive('reader', { maxMessages: 10, waitSeconds: 0 });
      expect(out.map((m) => m.body)).toEqual(withPublish ? ['out'] : []);
    });
  }
});
