/**
 * Range claims where every record a grant can meet is past its retention (docs/design.md, Range
 * claims): the claim goes the ordinary way, which reads on past them in one go — a grant would take
 * n of them a receive, pass them all over and answer nothing (a review's probe).
 */
import { describe, expect, it } from 'vitest';
import { contendedClaims } from '../helpers/contended-claims.js';
import { FakeClock, harness, send, testTable } from '../helpers/stores.js';
import * as build from '../helpers/builders.js';

const SHARD = 't:t/k:k';
const contended = () => contendedClaims([`g\u0000${SHARD}`]);
const range = (from: number, count: number) => Array.from({ length: count }, (_, i) => `m${from + i}`);

describe('range claims after retention expired', () => {
  for (const [rangeClaims, wait] of [[false, 0], [true, 0]] as const) {
    it(`rangeClaims ${rangeClaims}, waitSeconds ${wait}: the messages sent after retention expired come with the next receive`, async () => {
      const { doc, table } = await testTable();
      const clock = new FakeClock();
      const a = harness(doc, table, rangeClaims ? { clock, claimContention: contended() } : { clock, rangeClaims: false, claimContention: contended() });
      await a.admin.putTopic('t', build.topic({ type: 'fifo', retentionSeconds: 300 }));
      await a.admin.putGroup('g', build.group('t', { deliveryMode: 'concurrent', visibilityTimeoutSeconds: 60 }));
      for (let i = 0; i < 10; i++) await a.queue.sendBatch('t', range(1 + 10 * i, 10).map((body) => send(body, { shardKey: 'k' })));
      clock.advance(200_000);
      await a.queue.sendBatch('t', ['new1', 'new2', 'new3'].map((body) => send(body, { shardKey: 'k' })));
      const first = await a.queue.receive('g', { maxMessages: 10, waitSeconds: 0 });
      expect(first.map((m) => m.body)).toEqual(range(1, 10));
      await a.queue.commit('g', first.map((m) => m.receiptHandle));
      // m11..m100 pass their retention (300 s from t0); new1..new3 (sent at t0 + 200 s) stay.
      clock.advance(101_000);
      const answers: string[][] = [];
      for (let i = 0; i < 3; i++) answers.push((await a.queue.receive('g', { maxMessages: 10, waitSeconds: wait })).map((m) => m.body));
      expect(answers[0]).toEqual(['new1', 'new2', 'new3']);
    }, 60_000);
  }
});
