/**
 * A seeded walk (a review's probe, 2026-12-05) of several contended containers on one hot FIFO shard, with sends
 * between receives (notices read → raises on their own), grants overtaken by other containers'
 * grants (wider windows), whole and part commits. Checks: every message delivered once (no lease
 * expires: the clock never moves), first deliveries in shard order, nothing lost at the end.
 */
import { describe, expect, it, vi } from 'vitest';
import { createDynamoClients } from '../../lib/adapters/dynamodb/client.js';
import { dynamoEndpoint } from '../helpers/dynamo-endpoint.js';
import { contendedClaims } from '../helpers/contended-claims.js';
import { FakeStopwatch } from '../helpers/fake-stopwatch.js';
import { FakeClock, harness, send, testTable, type Harness } from '../helpers/stores.js';
import * as build from '../helpers/builders.js';

const SHARD = 't:t/k:k';
const statuses = (results: Array<{ status?: string; error?: { code: string } }>) => results.map((r) => r.status ?? r.error?.code);
const KEY = `g\u0000${SHARD}`;

function rng(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

for (const seed of [1, 6]) {
  describe(`range claims walk, seed ${seed}`, () => {
    it('every message once, in order, none lost', async () => {
      const rand = rng(seed);
      const { doc, table } = await testTable();
      const clock = new FakeClock();
      const plain = harness(doc, table, { clock });
      await plain.admin.putTopic('t', build.topic({ type: 'fifo' }));
      await plain.admin.putGroup('g', build.group('t', { deliveryMode: 'concurrent', visibilityTimeoutSeconds: 600 }));
      const watches: FakeStopwatch[] = [];
      const cs: Harness[] = [];
      const hooks: Array<(() => Promise<void>) | undefined> = [];
      for (let i = 0; i < 4; i++) {
        const mine = createDynamoClients({ endpoint: dynamoEndpoint(), requestTimeoutMs: 10_000 });
        const watch = new FakeStopwatch();
        watches.push(watch);
        cs.push(harness(mine.doc, table, { clock, claimContention: contendedClaims([KEY], watch) }));
        hooks.push(undefined);
        mine.client.middlewareStack.add(
          (next, context) => async (args) => {
            const update = String((args.input as { UpdateExpression?: string }).UpdateExpression ?? '');
            const hook = hooks[i];
            if (hook && context.commandName === 'UpdateItemCommand' && /ADD nx/.test(update)) {
              hooks[i] = undefined;
              await hook();
            }
            return next(args);
          },
          { step: 'initialize', name: `hook${i}` },
        );
      }
      const stats = { grantsOk: 0, grantsFailed: 0, raises: 0, spills: 0, wide: 0, claims: 0 };
      for (const c of cs) {
        const g = c.stores.cursors.grant.bind(c.stores.cursors);
        vi.spyOn(c.stores.cursors, 'grant').mockImplementation(async (...a) => { const o = await g(...a); if (o.ok) stats.grantsOk++; else stats.grantsFailed++; return o; });
        const rk = c.stores.cursors.raiseKnown.bind(c.stores.cursors);
        vi.spyOn(c.stores.cursors, 'raiseKnown').mockImplementation(async (...a) => { stats.raises++; return rk(...a); });
        const sp = c.stores.cursors.spill.bind(c.stores.cursors);
        vi.spyOn(c.stores.cursors, 'spill').mockImplementation(async (...a) => { stats.spills++; return sp(...a); });
        const cl = c.stores.cursors.claim.bind(c.stores.cursors);
        vi.spyOn(c.stores.cursors, 'claim').mockImplementation(async (...a) => { stats.claims++; return cl(...a); });
        const sc = c.stores.log.segmentsCovering.bind(c.stores.log);
        vi.spyOn(c.stores.log, 'segmentsCovering').mockImplementation(async (st, f, t, cons) => { if (t - f + 1 > 60) stats.wide++; return sc(st, f, t, cons); });
      }
      let sent = 0;
      const sendSome = async (k: number) => {
        for (let left = k; left > 0; left -= 10) {
          const bodies = Array.from({ length: Math.min(10, left) }, () => `m${++sent}`);
          await plain.queue.sendBatch('t', bodies.map((b) => send(b, { shardKey: 'k' })));
        }
      };
      await sendSome(10);
      await sendSome(10);
      const seen = new Set<string>();
      let highest = 0;
      const outstanding: Array<{ body: string; receiptHandle: string }> = [];
      const log: string[] = [];
      const take = (who: string, got: Array<{ body: string; receiptHandle: string; deliveryCount: number }>) => {
        log.push(`${who}: ${got.map((m) => m.body).join(',')}`);
        for (const m of got) {
          const n = Number(m.body.slice(1));
          expect(seen.has(m.body), `${m.body} delivered twice\n${log.join('\n')}`).toBe(false);
          expect(m.deliveryCount).toBe(1);
          expect(n, `${m.body} after m${highest}\n${log.join('\n')}`).toBeGreaterThan(highest);
          highest = n;
          seen.add(m.body);
          outstanding.push(m);
        }
      };
      const receive = async (i: number) => take(`c${i}`, await cs[i]!.queue.receive('g', { maxMessages: rand() < 0.7 ? 10 : 1 + Math.floor(rand() * 10), waitSeconds: 0 }));
      for (let step = 0; step < 200; step++) {
        const r = rand();
        if (r < 0.25) await sendSome(1 + Math.floor(rand() * 40));
        else if (r < 0.75) {
          const i = Math.floor(rand() * 4);
          if (rand() < 0.4) {
            const j = (i + 1 + Math.floor(rand() * 3)) % 4;
            const times = 3 + Math.floor(rand() * 6);
            hooks[i] = async () => {
              for (let t = 0; t < times; t++) await receive(j);
            };
          }
          await receive(i);
          hooks[i] = undefined;
        } else if (outstanding.length > 0) {
          // Commit some: a prefix (whole ranges or parts), by a random container.
          const k = 1 + Math.floor(rand() * outstanding.length);
          const batch = outstanding.splice(0, k);
          const who = rand() < 0.2 ? plain : cs[Math.floor(rand() * 4)]!;
          const res = await who.queue.commit('g', batch.map((m) => m.receiptHandle));
          expect(statuses(res)).toEqual(batch.map(() => 'committed'));
          // And repeat half of them sometimes.
          if (rand() < 0.3) {
            const again = await who.queue.commit('g', batch.map((m) => m.receiptHandle));
            expect(statuses(again)).toEqual(batch.map(() => 'committed'));
          }
        }
        for (const w of watches) w.advance(1000);
      }
      // Drain.
      for (let round = 0; round < 200 && seen.size < sent; round++) {
        const i = round % 5;
        if (i === 4) take('plain', await plain.queue.receive('g', { maxMessages: 10, waitSeconds: 0 }));
        else await receive(i);
        for (const w of watches) w.advance(1000);
        if (outstanding.length > 0) {
          const batch = outstanding.splice(0);
          const res = await plain.queue.commit('g', batch.map((m) => m.receiptHandle));
          expect(statuses(res)).toEqual(batch.map(() => 'committed'));
        }
      }
      console.log(`seed ${seed}`, sent, JSON.stringify(stats));
      expect(seen.size, log.join('\n')).toBe(sent);
    }, 300_000);
  });
}
