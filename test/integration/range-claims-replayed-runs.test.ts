/**
 * After a seek, a replay commits part of a range an earlier epoch committed whole (its run, one entry
 * of `dn`); a spill whose cut ends inside that run must not remove the replay's own completions and
 * leave the run, which then read as theirs again (a review's probe, 2026-12-05; docs/design.md,
 * Range claims, "One completion a range"). On DynamoDB Local.
 */
/**
 * Audit probe: a spill whose cut ends at a replay's own completion inside the numbers of an
 * earlier epoch's run leaves that run in `dn` (not all its members were removed); the spilled
 * numbers then read from `dn` as the earlier epoch's run members again.
 */
import { describe, expect, it } from 'vitest';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { createDynamoClients } from '../../lib/adapters/dynamodb/client.js';
import { dynamoEndpoint } from '../helpers/dynamo-endpoint.js';
import { cursorPk } from '../../lib/adapters/dynamodb/keys.js';
import { contendedClaims } from '../helpers/contended-claims.js';
import { FakeClock, harness, send, testTable, type Harness } from '../helpers/stores.js';
import * as build from '../helpers/builders.js';
import { Seeker } from '../../lib/services/seeker.js';

const SHARD = 't:t/k:k';
const KEY = `g\u0000${SHARD}`;
const bodies = (messages: Array<{ body: string }>) => messages.map((m) => m.body);
const range = (from: number, count: number) => Array.from({ length: count }, (_, i) => `m${from + i}`);
const statuses = (results: Array<{ status?: string; error?: { code: string } }>) => results.map((r) => r.status ?? r.error?.code);

async function cursorItem(h: Harness): Promise<Record<string, unknown>> {
  const { Item } = await h.doc.send(new GetCommand({ TableName: h.table, Key: { pk: cursorPk('g'), sk: SHARD }, ConsistentRead: true }));
  return Item ?? {};
}

async function shard() {
  const { doc, table } = await testTable();
  const clock = new FakeClock();
  const plain = harness(doc, table, { clock });
  await plain.admin.putTopic('t', build.topic({ type: 'fifo' }));
  await plain.admin.putGroup('g', build.group('t', { deliveryMode: 'concurrent', visibilityTimeoutSeconds: 60 }));
  for (let i = 0; i < 60; i += 10) await plain.queue.sendBatch('t', range(1 + i, 10).map((body) => send(body, { shardKey: 'k' })));
  const mine = createDynamoClients({ endpoint: dynamoEndpoint(), requestTimeoutMs: 10_000 });
  const c = harness(mine.doc, table, { clock, claimContention: contendedClaims([KEY]) });
  return { plain, c };
}

describe('range claims: a spill cut inside an earlier epoch\'s run', () => {
  it('a repeated commit of a replay part-commit answers committed after a spill', async () => {
    const { plain, c } = await shard();
    // Epoch 0: four whole ranges committed (40 completions, four runs).
    for (let i = 0; i < 4; i++) {
      const got = await c.queue.receive('g', { maxMessages: 10, waitSeconds: 0 });
      expect(bodies(got)).toEqual(range(1 + 10 * i, 10));
      expect(statuses(await c.queue.commit('g', got.map((m) => m.receiptHandle)))).toEqual(Array(10).fill('committed'));
    }
    await new Seeker(plain.stores, plain.clock).seek('g', 'earliest', undefined);
    // Epoch 1: replay m1–m20 as whole ranges, m21–m30 committed in part (m21–m25).
    const r1 = await c.queue.receive('g', { maxMessages: 10, waitSeconds: 0 });
    const r2 = await c.queue.receive('g', { maxMessages: 10, waitSeconds: 0 });
    const r3 = await c.queue.receive('g', { maxMessages: 10, waitSeconds: 0 });
    expect([bodies(r1), bodies(r2), bodies(r3)]).toEqual([range(1, 10), range(11, 10), range(21, 10)]);
    expect(statuses(await c.queue.commit('g', r1.map((m) => m.receiptHandle)))).toEqual(Array(10).fill('committed'));
    expect(statuses(await c.queue.commit('g', r2.map((m) => m.receiptHandle)))).toEqual(Array(10).fill('committed'));
    const part = r3.slice(0, 5).map((m) => m.receiptHandle);
    expect(statuses(await c.queue.commit('g', part))).toEqual(Array(5).fill('committed'));
    // Before any spill the repeat answers committed.
    expect(statuses(await plain.queue.commit('g', part))).toEqual(Array(5).fill('committed'));
    // m31–m40 (replay) and m41–m50 (new); committing m41–m50 whole takes dn from 40 to 50: it spills.
    const r4 = await c.queue.receive('g', { maxMessages: 10, waitSeconds: 0 });
    const r5 = await c.queue.receive('g', { maxMessages: 10, waitSeconds: 0 });
    expect([bodies(r4), bodies(r5)]).toEqual([range(31, 10), range(41, 10)]);
    expect(statuses(await c.queue.commit('g', r5.map((m) => m.receiptHandle)))).toEqual(Array(10).fill('committed'));
    const item = await cursorItem(plain);
    // The spill moved the mark past m21–m25 (hw set), their replay's completions spilled.
    expect(item.hw).toBeDefined();
    // Repeats of the epoch-1 part commit: they took effect, so they answer committed.
    expect(statuses(await plain.queue.commit('g', part))).toEqual(Array(5).fill('committed'));
  });
});
