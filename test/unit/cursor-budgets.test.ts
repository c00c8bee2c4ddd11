/**
 * Limits by construction (docs/design.md): every cursor write keeps its
 * UpdateExpression and ConditionExpression within 4,000 bytes (DynamoDB
 * refuses more than 4 KB) and the item within its budget — checked here at
 * the maximum a single write can carry.
 */
import { describe, expect, it } from 'vitest';
import {
  CURSOR_ITEM_BUDGET_BYTES,
  EXPRESSION_BUDGET_BYTES,
  claimFits,
  claimUpdate,
  completionChunks,
  completionUpdate,
  cursorAfterClaim,
  expressionBytes,
  type ClaimChange,
  type UpdateParts,
} from '../../lib/adapters/dynamodb/cursor-updates.js';
import { storedLease, toItem, toState } from '../../lib/adapters/dynamodb/cursor-item.js';
import { itemBytes } from '../../lib/adapters/dynamodb/item-size.js';
import { READY_BUCKETS_MAX, readyNowKey } from '../../lib/adapters/dynamodb/keys.js';
import { MAX_IN_FLIGHT_PER_STREAM, type CursorState, type DoneEntry, type Lease } from '../../lib/domain/cursor.js';
import { CHUNK_MAX_ENTRIES, SPILL_AT, SPILL_HOLES_AT, STRAGGLERS_MAX, planSpill, spilledSeqs } from '../../lib/domain/history.js';
import { Limits } from '../../lib/domain/model.js';

const SHARD = 't:orders/k:customer-0001';
const PARTITION = 't:orders/p:0';
const NOW = 1_800_000_000_000;
/** FIFO sequence numbers may be large (epochs start at now_ms × 1000): the worst case for digits. */
const BIG = 1_800_000_000_000_000;
const LONG_TOPIC = 'x'.repeat(Limits.nameMaxLength);
const LONG_GROUP = 'g'.repeat(Limits.nameMaxLength);
/** A wide topic's ready-index key at its longest (`rk`, and `g1pk` with it): the longest group name, a two-digit bucket. */
const LONG_BUCKET = `R#${LONG_GROUP}#${READY_BUCKETS_MAX - 1}`;

const lease = (seq: number, deliveries = 1, extra: Partial<Lease> = {}): Lease => ({
  seq,
  expiresAt: NOW - 1,
  token: `${deliveries}.AbCdEfGh.r`,
  deliveries,
  segment: seq,
  topic: LONG_TOPIC,
  pending: false,
  ...extra,
});

const cursor = (leases: Lease[], done = SPILL_AT): CursorState => ({
  group: LONG_GROUP,
  stream: SHARD,
  next: BIG + 1000,
  segmentStart: BIG + 1000,
  leases: new Map(leases.map((l) => [l.seq, l])),
  done: new Map(
    Array.from({ length: done }, (_, i): [number, DoneEntry] => [BIG - i, { seq: BIG - i, at: NOW, outcome: 'committed', deliveries: 3 }]),
  ),
  committed: 1e12,
  deadLettered: 1e9,
  known: BIG + 5000,
  readyAt: 0,
  readyKey: readyNowKey(SHARD),
  readyPk: LONG_BUCKET,
});

const sizes = (parts: UpdateParts) => ({ update: expressionBytes(parts.UpdateExpression), condition: expressionBytes(parts.ConditionExpression) });

describe('claim budget', () => {
  const inFlight = Array.from({ length: MAX_IN_FLIGHT_PER_STREAM }, (_, i) => lease(BIG + i, 7));
  // The worst shard claim also carries a raise that moves the cursor to another bucket (rk and g1pk written).
  const shard = {
    expectKnown: BIG + 5000,
    expectInFlight: MAX_IN_FLIGHT_PER_STREAM,
    known: BIG + 6000,
    index: { from: readyNowKey(SHARD), to: '0001800000030000' },
    rekey: { pk: `R#${LONG_GROUP}#${READY_BUCKETS_MAX - 2}`, entry: false },
    now: NOW,
  };

  it('a ready-index key at its longest is far below DynamoDB\'s 2,048-byte partition key limit', () => {
    expect(Buffer.byteLength(LONG_BUCKET)).toBe(2 + 128 + 1 + 2);
    expect(Buffer.byteLength(LONG_BUCKET)).toBeLessThan(2048);
  });

  it('100 renewals (a full cursor, long topic names, FIFO-sized sequence numbers) fit one write', () => {
    const read = cursor(inFlight);
    const change: ClaimChange = {
      expectNext: read.next,
      next: read.next,
      segmentStart: read.segmentStart,
      grant: inFlight.map((l) => ({ lease: { ...l, deliveries: 8, token: '8.ZyXwVuTs.r', expiresAt: NOW + 43_200_000 }, replaces: l })),
      close: [],
      forgetDone: [],
      shard,
    };
    const s = sizes(claimUpdate(read.group, change));
    expect(s.update).toBeLessThanOrEqual(EXPRESSION_BUDGET_BYTES);
    expect(s.condition).toBeLessThanOrEqual(EXPRESSION_BUDGET_BYTES);
    expect(claimFits(read, change)).toBe(true);
    // Before issue 14 a renewal's condition was ~61 bytes: 100 of them passed 6 KB.
    expect(s.condition).toBeLessThan(2500);
  });

  it('100 renewals or 100 closes plus the largest spill (a full chunk and every straggler leaving dn, the mark moving) fit one write', () => {
    // A cursor just before its largest spill: stragglers below the mark, more than a chunk above it.
    const stragglers = Array.from({ length: STRAGGLERS_MAX }, (_, i): [number, DoneEntry] => [BIG - 900 + i, { seq: BIG - 900 + i, at: NOW, outcome: 'committed', deliveries: 1000 }]);
    // The most a cursor holds between spills: a chunk's worth held back by leases below it (SPILL_HOLES_AT,
    // less than a chunk), then a commit of every lease in flight.
    expect(CHUNK_MAX_ENTRIES).toBeGreaterThanOrEqual(SPILL_HOLES_AT);
    const above = Array.from({ length: CHUNK_MAX_ENTRIES + MAX_IN_FLIGHT_PER_STREAM }, (_, i): [number, DoneEntry] => [BIG - 500 + i, { seq: BIG - 500 + i, at: NOW, outcome: 'dead-lettered', deliveries: 1000 }]);
    const read: CursorState = { ...cursor(inFlight), done: new Map([...stragglers, ...above]), historyMark: BIG - 800 };
    const spill = planSpill(read);
    expect(spill?.chunk?.entries).toHaveLength(CHUNK_MAX_ENTRIES);
    expect(spill?.stragglers).toHaveLength(STRAGGLERS_MAX);
    const history = { expectMark: read.historyMark, mark: spill?.chunk?.last ?? 0 };
    const renew: ClaimChange = {
      expectNext: read.next,
      next: read.next,
      segmentStart: read.segmentStart,
      grant: inFlight.map((l) => ({ lease: { ...l, deliveries: 8, token: '8.ZyXwVuTs.r', expiresAt: NOW + 43_200_000 }, replaces: l })),
      close: [],
      forgetDone: spill ? spilledSeqs(spill).map(String) : [],
      history,
      shard,
    };
    const close: ClaimChange = {
      ...renew,
      grant: [],
      close: inFlight.map((l) => ({ done: { seq: l.seq, at: NOW, outcome: 'expired', deliveries: l.deliveries }, replaces: l })),
    };
    for (const change of [renew, close]) {
      const s = sizes(claimUpdate(read.group, change));
      expect(s.update).toBeLessThanOrEqual(EXPRESSION_BUDGET_BYTES);
      expect(s.condition).toBeLessThanOrEqual(EXPRESSION_BUDGET_BYTES);
      expect(claimFits(read, change)).toBe(true);
    }
    // The cursor before that spill (100 leases, 208 completions) is still far below the item budget.
    expect(itemBytes(toItem(read))).toBeLessThan(CURSOR_ITEM_BUDGET_BYTES / 2);
  });

  it('100 closes plus forgetting a full completion memory fit one write', () => {
    const read = cursor(inFlight);
    const change: ClaimChange = {
      expectNext: read.next,
      next: read.next,
      segmentStart: read.segmentStart,
      grant: [],
      close: inFlight.map((l) => ({ done: { seq: l.seq, at: NOW, outcome: 'expired', deliveries: l.deliveries }, replaces: l })),
      forgetDone: [...read.done.keys()].map(String),
      shard,
    };
    expect(claimFits(read, change)).toBe(true);
    const s = sizes(claimUpdate(read.group, change));
    expect(Math.max(s.update, s.condition)).toBeLessThanOrEqual(EXPRESSION_BUDGET_BYTES);
  });

  it('100 new leases fit one write, and the item after it stays far below its budget', () => {
    const read = cursor([]);
    const grant = Array.from({ length: MAX_IN_FLIGHT_PER_STREAM }, (_, i) => ({ lease: lease(read.next + i, 1, { expiresAt: NOW + 1000 }), replaces: undefined }));
    const change: ClaimChange = { expectNext: read.next, next: read.next + 100, segmentStart: read.next + 100, grant, close: [], forgetDone: [], shard };
    expect(claimFits(read, change)).toBe(true);
    const bytes = itemBytes(toItem(cursorAfterClaim(read, change)));
    expect(bytes).toBeLessThan(CURSOR_ITEM_BUDGET_BYTES / 2);
  });

  it('100 carried commits folded into a claim of 100 renewals (standard partition, the worst case) fit one write', () => {
    const read: CursorState = { ...cursor([...inFlight, ...Array.from({ length: 100 }, (_, i) => lease(BIG + 200 + i, 999, { expiresAt: NOW + 1000 }))]), stream: PARTITION };
    const change: ClaimChange = {
      expectNext: read.next,
      next: read.next,
      segmentStart: read.segmentStart,
      grant: inFlight.map((l) => ({ lease: { ...l, deliveries: 8, token: '8.ZyXwVuTs.r', expiresAt: NOW + 43_200_000 }, replaces: l })),
      close: [],
      forgetDone: [],
      commit: { entries: Array.from({ length: 100 }, (_, i) => ({ seq: BIG + 200 + i, token: '999.AbCdEfGh' })), now: NOW },
      // A partition claim is conditional on the seek epoch it read (the longer form: none yet).
      seekEpoch: { expect: undefined },
    };
    const s = sizes(claimUpdate(read.group, change));
    expect(claimUpdate(read.group, change).ConditionExpression).toContain('attribute_not_exists(se)');
    expect(s.update).toBeLessThanOrEqual(EXPRESSION_BUDGET_BYTES);
    expect(s.condition).toBeLessThanOrEqual(EXPRESSION_BUDGET_BYTES);
    expect(claimFits(read, change)).toBe(true);
    // The commits leave the lease map for the completion map.
    const after = cursorAfterClaim(read, change);
    expect(after.leases.size).toBe(100);
    expect(after.done.get(BIG + 200)).toMatchObject({ outcome: 'committed', deliveries: 999, at: NOW });
    // More carried commits than one write takes are refused (the receiver commits the rest on their own).
    const more = { ...change, commit: { entries: Array.from({ length: 300 }, (_, i) => ({ seq: BIG + 200 + i, token: '999.AbCdEfGh' })), now: NOW } };
    expect(claimFits(read, more)).toBe(false);
  });

  it('refuses what does not fit: more renewals than one write carries, or an item past its budget', () => {
    const many = Array.from({ length: 300 }, (_, i) => lease(BIG + i, 2));
    const read = cursor(many);
    const change = (leases: Lease[]): ClaimChange => ({
      expectNext: read.next,
      next: read.next,
      segmentStart: read.segmentStart,
      grant: leases.map((l) => ({ lease: { ...l, token: '3.x' }, replaces: l })),
      close: [],
      forgetDone: [],
    });
    expect(claimFits(read, change(many))).toBe(false);
    const huge = lease(BIG, 1, { topic: 'y'.repeat(CURSOR_ITEM_BUDGET_BYTES) });
    expect(claimFits(cursor([]), { ...change([]), grant: [{ lease: huge, replaces: undefined }] })).toBe(false);
  });
});

describe('completion budget', () => {
  const entries = (n: number) => Array.from({ length: n }, (_, i) => ({ seq: BIG + i, token: `12.AbCdEfGh.k` }));

  it('a commit of 100 leases of one stream is one write with any ready-index decision', () => {
    for (const stream of [SHARD, PARTITION]) {
      expect(completionChunks('g', stream, entries(Limits.batchMaxEntries), NOW)).toHaveLength(1);
      for (const readiness of ['ready', 'drop', 'keep'] as const) {
        const s = sizes(completionUpdate('g', stream, { complete: entries(100), now: NOW, readiness: { readiness, guarded: true, head: BIG + 500 } }));
        expect(Math.max(s.update, s.condition)).toBeLessThanOrEqual(EXPRESSION_BUDGET_BYTES);
      }
    }
  });

  it('splits more than one write carries into chunks that each fit, in order', () => {
    const all = entries(400);
    const chunks = completionChunks('g', SHARD, all, NOW);
    expect(chunks.length).toBeGreaterThan(1);
    expect(chunks.flat()).toEqual(all);
    for (const chunk of chunks) {
      const s = sizes(completionUpdate('g', SHARD, { complete: chunk, now: NOW, readiness: { readiness: 'keep', guarded: true, head: BIG } }));
      expect(Math.max(s.update, s.condition)).toBeLessThanOrEqual(EXPRESSION_BUDGET_BYTES);
    }
  });

  it('a protected commit at the maximum (100 pending marks, a cascade, the blocker) fits its transaction item', () => {
    const s = sizes(
      completionUpdate('g', SHARD, {
        complete: entries(20),
        markPending: entries(100).map((e) => ({ ...e, seq: e.seq + 1000 })),
        blocker: { seq: BIG - 1, token: '1.AbCdEfGh.r' },
        now: NOW,
        readiness: { readiness: 'keep', guarded: true, head: BIG - 1 },
      }),
    );
    expect(Math.max(s.update, s.condition)).toBeLessThanOrEqual(EXPRESSION_BUDGET_BYTES);
  });
});

describe('stored cursor form', () => {
  it('round-trips, so a renewal condition on the lease as read matches the stored lease exactly', () => {
    // Released (r = 1) and released then extended (r = 0) leases too: a claim could never renew them before.
    const read = cursor([
      lease(BIG, 2),
      lease(BIG + 1, 1, { topic: undefined, pending: true }),
      lease(BIG + 2, 1, { released: true }),
      lease(BIG + 3, 1, { released: false }),
    ]);
    const item = toItem(read);
    const back = toState(item);
    expect(back).toEqual(read);
    for (const [seq, l] of back.leases) expect(storedLease(l)).toEqual((item.fl as Record<string, unknown>)[String(seq)]);
  });

  it('counts item bytes as DynamoDB does (names + values; maps 3 + 1 per element)', () => {
    expect(itemBytes({ pk: 'ab' })).toBe(4);
    expect(itemBytes({ n: 12345 })).toBe(1 + 4);
    expect(itemBytes({ m: { a: 'xy' } })).toBe(1 + 3 + 1 + 2 + 1);
  });
});
