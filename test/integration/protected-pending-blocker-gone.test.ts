/**
 * A pending commit whose blocker is closed (found by a reviewer's random walk comparing the whole
 * and the active group figures, 2026-12-03): protected mode,
 * a1 and a2 leased on one shard, a2's commit goes pending behind a1; then a1's message stops being
 * deliverable (a purge here; retention does the same) and the next claim closes a1's expired lease
 * as `expired`. planClaims decides readiness from the lowest lease *as read* (a1, not pending), so
 * the claim took the shard off the ready index while a2 — now the lowest lease, a pending commit to
 * cascade — was left: no receive found the shard (until a new message on it), a2's commit never
 * completed, and past one page the group's figures no longer saw it (pending 1 → 0). The claim now
 * decides readiness from the lowest lease it leaves (claims.ts). On DynamoDB Local.
 */
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { beforeEach, describe, expect, it } from 'vitest';
import { toItem } from '../../lib/adapters/dynamodb/cursor-item.js';
import { DoneOutcome, type CursorState, type DoneEntry } from '../../lib/domain/cursor.js';
import { GroupFigures } from '../../lib/services/group-figures.js';
import { newHarness, send, type Harness } from '../helpers/stores.js';
import { group, topic } from '../helpers/builders.js';

let h: Harness;

beforeEach(async () => {
  h = await newHarness();
  await h.admin.putTopic('ledger', topic({ type: 'fifo' }));
  await h.admin.putGroup('g', group('ledger', { deliveryMode: 'protected', visibilityTimeoutSeconds: 30 }));
});

/** Idle cursors of an unsubscribed namespace, ≈ 60 KB each: the group's cursors take 2 pages. */
async function pad() {
  const now = h.clock.now();
  const done = new Map<number, DoneEntry>();
  for (let seq = 1; seq <= 5_000; seq++) done.set(seq, { seq, at: now, outcome: DoneOutcome.committed, deliveries: 1 });
  for (let i = 0; i < 18; i++) {
    const cursor: CursorState = {
      group: 'g', stream: `t:pad/k:${i}`, next: 5_001, segmentStart: 5_001, leases: new Map(), done,
      committed: 0, deadLettered: 0, known: 5_000, readyAt: undefined, createdAt: now,
    };
    await h.doc.send(new PutCommand({ TableName: h.table, Item: toItem(cursor) }));
  }
}

describe('a pending commit whose blocker is closed as expired', () => {
  it('keeps the shard on the ready index, and the pending commit completes', async () => {
    await h.queue.sendBatch('ledger', ['a1', 'a2'].map((b) => send(b, { shardKey: 'A' })));
    const got = await h.queue.receive('g', { maxMessages: 10, waitSeconds: 0 });
    expect(got.map((m) => m.body)).toEqual(['a1', 'a2']);
    expect((await h.queue.commit('g', [got[1]!.receiptHandle]))[0]).toMatchObject({ status: 'pending' });
    h.clock.advance(1_000);
    await h.admin.purgeTopic('ledger');
    h.clock.advance(31_000);
    // This receive closes a1's expired lease (its message was purged) and answers nothing.
    expect(await h.queue.receive('g', { maxMessages: 10, waitSeconds: 0 })).toEqual([]);
    const stream = (await h.stores.ids.codec()).openReceipt(got[1]!.receiptHandle).stream;
    const cursor = (await h.stores.cursors.get('g', stream, h.clock.now()))!;
    const a2 = [...cursor.leases.values()];
    await pad();
    const g = (await h.stores.catalog.getGroup('g'))!;
    const whole = await new GroupFigures(h.stores, h.clock, 100).of(g);
    const active = await h.admin.getGroup('g');
    // More receives: the pending commit should be cascaded (completed) by one of them.
    for (let i = 0; i < 3; i++) await h.queue.receive('g', { maxMessages: 10, waitSeconds: 0 });
    const after = (await h.stores.cursors.get('g', stream, h.clock.now()))!;
    expect({
      leftPending: a2.map((l) => l.pending),
      readyKey: cursor.readyKey ?? 'none',
      pending: { whole: whole.pending, active: active.pending },
      leasesAfterReceives: after.leases.size,
    }).toEqual({ leftPending: [true], readyKey: expect.any(String), pending: { whole: 1, active: 1 }, leasesAfterReceives: 0 });
  }, 120_000);
});
