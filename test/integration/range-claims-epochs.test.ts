/**
 * Range claims on a shard whose next messages are in a later epoch (the numbers jumped to
 * now_ms × 1000: docs/design.md, Idle shards expire): a grant reads the numbers it can meet first,
 * and a number without a stored segment makes the claim an ordinary one, which reads on past the
 * gap — a grant would take numbers of the gap, 10 at a time (docs/design.md, Range claims).
 */
import { describe, expect, it } from 'vitest';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { cursorPk } from '../../lib/adapters/dynamodb/keys.js';
import { contendedClaims } from '../helpers/contended-claims.js';
import { FakeClock, harness, send, testTable } from '../helpers/stores.js';
import * as build from '../helpers/builders.js';

const shard = (key: string) => `t:t/k:${key}`;
const contended = (keys: string[]) => contendedClaims(keys.map((k) => `g\u0000${shard(k)}`));

describe('range claims after a new epoch', () => {
  it("a contended consumer gets the new epoch's messages of a shard that was idle", async () => {
    const { doc, table } = await testTable();
    const clock = new FakeClock();
    const plain = harness(doc, table, { clock, rangeClaims: false });
    const a = harness(doc, table, { clock, claimContention: contended(['j', 'k']) });
    await plain.admin.putTopic('t', build.topic({ type: 'fifo', retentionSeconds: 300 }));
    await plain.admin.putGroup('g', build.group('t', { deliveryMode: 'concurrent', visibilityTimeoutSeconds: 60 }));
    // Each shard had one message, received and committed.
    for (const key of ['j', 'k']) await plain.queue.send('t', send(`old-${key}`, { shardKey: key }));
    const old = [...(await plain.queue.receive('g', { maxMessages: 10, waitSeconds: 0 }))];
    expect(old).toHaveLength(2);
    await plain.queue.commit('g', old.map((m) => m.receiptHandle));
    // Idle until their head segments are within a minute of their ttl: the next send opens a new epoch.
    clock.advance(250_000);
    for (const key of ['j', 'k']) await plain.queue.sendBatch('t', Array.from({ length: 30 }, (_, i) => send(`${key}${i}`, { shardKey: key })));
    // One receive of 1 message claims one shard; the other is raised on its own.
    const first = await plain.queue.receive('g', { maxMessages: 1, waitSeconds: 0 });
    expect(first).toHaveLength(1);
    const claimedKey = first[0]!.body[0]!;
    const target = claimedKey === 'j' ? 'k' : 'j';
    const { Item } = await doc.send(new GetCommand({ TableName: table, Key: { pk: cursorPk('g'), sk: shard(target) }, ConsistentRead: true }));
    expect(Number(Item?.kn)).toBeGreaterThan(Number(Item?.nx) + 1_000_000);
    // A (which lost claims there lately) receives: the target shard's 30 messages are deliverable.
    const got: string[] = [];
    for (let i = 0; i < 6; i++) {
      const answer = await a.queue.receive('g', { maxMessages: 10, waitSeconds: 0 });
      got.push(...answer.map((m) => m.body));
      await a.queue.commit('g', answer.map((m) => m.receiptHandle));
    }
    expect(got.filter((b) => b.startsWith(target)).length).toBe(30);
  });
});
