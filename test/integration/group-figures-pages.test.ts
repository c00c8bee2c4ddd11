/**
 * A group's figures over more than one Query page of cursors (docs/design.md, Per-group metrics): a
 * FIFO group keeps a cursor per shard it touched, idle ones for 15 days, so `GET /v1/groups/{g}`
 * and the per-minute metrics fold the cursors page by page (a page is at most 1 MB) and leave the
 * completions (`dn`, the bulk of an idle shard's cursor) out of what they hold. On DynamoDB Local,
 * with cursor items written as the table stores them, large enough that the group's take 2 pages.
 */
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { beforeEach, describe, expect, it } from 'vitest';
import { toItem } from '../../lib/adapters/dynamodb/cursor-item.js';
import { DoneOutcome, type CursorState, type DoneEntry, type Lease } from '../../lib/domain/cursor.js';
import { newHarness, type Harness } from '../helpers/stores.js';
import { group, topic } from '../helpers/builders.js';

let h: Harness;

const SHARDS = 24;
const LEASES = 100;
/** ≈ 60 KB of completions per cursor: 24 cursors ≈ 1.4 MB, more than one Query page. */
const COMPLETIONS = 5_000;

/** A shard cursor of group `g` on topic `f` as a busy shard leaves it: 100 leases, many completions. */
function busyShardCursor(i: number, now: number): CursorState {
  const leases = new Map<number, Lease>();
  for (let seq = COMPLETIONS + 1; seq <= COMPLETIONS + LEASES; seq++) {
    leases.set(seq, { seq, expiresAt: now + 600_000, token: `1.t${seq}`, deliveries: 1, segment: seq, topic: undefined, pending: false });
  }
  const done = new Map<number, DoneEntry>();
  for (let seq = 1; seq <= COMPLETIONS; seq++) done.set(seq, { seq, at: now, outcome: DoneOutcome.committed, deliveries: 1 });
  return {
    group: 'g',
    stream: `t:f/k:s${i}`,
    next: COMPLETIONS + LEASES + 1,
    segmentStart: COMPLETIONS + LEASES + 1,
    leases,
    done,
    committed: COMPLETIONS,
    deadLettered: i,
    known: COMPLETIONS + LEASES + 2, // two messages wait after the leases
    readyAt: undefined,
    createdAt: now,
  };
}

beforeEach(async () => {
  h = await newHarness();
  await h.admin.putTopic('f', topic({ type: 'fifo' }));
  await h.admin.putGroup('g', group('f', { deliveryMode: 'concurrent' }));
  const now = h.clock.now();
  for (let i = 0; i < SHARDS; i++) await h.doc.send(new PutCommand({ TableName: h.table, Item: toItem(busyShardCursor(i, now)) }));
});

describe('group figures over many cursors', () => {
  it('reads the cursors page by page, without their completions', async () => {
    const pages: number[] = [];
    for await (const page of h.stores.cursors.figurePages('g', h.clock.now())) {
      pages.push(page.length);
      for (const cursor of page) {
        expect(cursor.done.size).toBe(0);
        if (cursor.stream.startsWith('t:f/k:')) expect(cursor.leases.size).toBe(LEASES);
      }
    }
    expect(pages.length).toBeGreaterThanOrEqual(2);
    // The 24 shard cursors and the group's notice-stream cursors, each once.
    expect(pages.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(SHARDS);
  });

  it('GET group adds up every page: in flight, waiting, committed and dead-lettered', async () => {
    const figures = await h.admin.getGroup('g');
    expect(figures).toMatchObject({
      inFlight: SHARDS * LEASES,
      backlog: SHARDS * 2,
      committed: SHARDS * COMPLETIONS,
      deadLettered: (SHARDS * (SHARDS - 1)) / 2,
    });
  });
});
