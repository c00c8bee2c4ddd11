import { describe, expect, it } from 'vitest';
import { planClaims, type PlanInput } from '../../lib/domain/claims.js';
import { deliveriesOfToken, type CursorState, type Lease } from '../../lib/domain/cursor.js';
import { combinedHint, readinessAfterCompletion, readinessHint } from '../../lib/domain/readiness.js';
import type { MessageRecord } from '../../lib/domain/model.js';
import type { RetryPolicy } from '../../lib/domain/retry-policy.js';

const NOW = 1_000_000;
const record = (body: string, extra: Partial<MessageRecord> = {}): MessageRecord => ({
  messageId: body,
  topic: 't',
  body,
  encoding: 'utf8',
  tag: undefined,
  keys: [],
  properties: {},
  shardKey: 'k',
  sentAt: 0,
  deliverableAt: 0,
  expiresAt: NOW + 1e9,
  generation: 1,
  ...extra,
});
const lease = (seq: number, expiresAt: number, extra: Partial<Lease> = {}): Lease => ({
  seq,
  expiresAt,
  token: `1.${seq}`,
  deliveries: 1,
  segment: seq,
  topic: 't',
  pending: false,
  ...extra,
});
const cursor = (next: number, leases: Lease[] = []): CursorState => ({
  group: 'g',
  stream: 's',
  next,
  segmentStart: next,
  leases: new Map(leases.map((l) => [l.seq, l])),
  done: new Map(),
  committed: 0,
  deadLettered: 0,
  known: undefined,
  readyAt: undefined,
});
/** One segment per message, seq 1..n. */
const segments = (from: number, bodies: string[]) => bodies.map((b, i) => ({ seq: from + i, count: 1, records: [record(b)] }));

/** Redelivery at once: the tests below that are not about the retry policy. */
const AT_ONCE: RetryPolicy = { initialSeconds: 0, multiplier: 1, maxSeconds: 0 };

const plan = (overrides: Partial<PlanInput>) =>
  planClaims({
    cursor: cursor(1),
    mode: 'concurrent',
    now: NOW,
    want: 10,
    visibilityMs: 30_000,
    maxDeliveries: 3,
    retryPolicy: AT_ONCE,
    leaseRecords: new Map(),
    segments: [],
    truncated: false,
    live: (r) => r.expiresAt > NOW,
    verdict: () => 'deliver',
    token: () => 'x',
    ...overrides,
  });

describe('claim planning', () => {
  it('concurrent: leases new messages in order up to the request', () => {
    const p = plan({ segments: segments(1, ['a', 'b', 'c']), want: 2 });
    expect(p.deliveries.map((d) => [d.record.body, d.lease.seq])).toEqual([
      ['a', 1],
      ['b', 2],
    ]);
    expect(p.next).toBe(3);
    expect(p.readyAt).toBe(NOW); // more to take
  });

  it('serialized: nothing new while a lease is out; the expired one comes back first', () => {
    const held = plan({ mode: 'serialized', cursor: cursor(2, [lease(1, NOW + 5)]), segments: segments(2, ['b']) });
    expect(held.deliveries).toEqual([]);
    expect(held.readyAt).toBe(NOW + 5);
    const expired = plan({
      mode: 'serialized',
      cursor: cursor(2, [lease(1, NOW - 1)]),
      leaseRecords: new Map([[1, record('a')]]),
      segments: segments(2, ['b']),
    });
    expect(expired.deliveries.map((d) => [d.record.body, d.lease.deliveries])).toEqual([['a', 2]]);
    expect(expired.grant[0]?.replaces?.token).toBe('1.1');
  });

  it('redelivers expired leases ahead of newer messages', () => {
    const p = plan({
      cursor: cursor(3, [lease(1, NOW - 1), lease(2, NOW + 1000)]),
      leaseRecords: new Map([[1, record('a')]]),
      segments: segments(3, ['c']),
    });
    expect(p.deliveries.map((d) => d.record.body)).toEqual(['a', 'c']);
  });

  it('stops at the first expired lease the claim did not read: nothing after it, new or again, is leased', () => {
    const p = plan({
      cursor: cursor(4, [lease(1, NOW - 1), lease(2, NOW - 1), lease(3, NOW - 1)]),
      // Lease 2's segment is gone (an entry, undefined: closed); lease 3 was not read (no entry).
      leaseRecords: new Map([
        [1, record('a')],
        [2, undefined],
      ]),
      segments: segments(4, ['d']),
    });
    expect(p.deliveries.map((d) => [d.record.body, d.lease.seq])).toEqual([['a', 1]]);
    expect(p.close.map((c) => c.replaces.seq)).toEqual([2]);
    expect(p.next).toBe(4);
    expect(p.readyAt).toBe(NOW); // more to take: the unread lease
  });

  it('dead-letters after maxDeliveries and closes leases of expired messages', () => {
    const p = plan({
      cursor: cursor(3, [lease(1, NOW - 1, { deliveries: 3 }), lease(2, NOW - 1)]),
      leaseRecords: new Map([
        [1, record('poison')],
        [2, record('old', { expiresAt: NOW - 1 })],
      ]),
    });
    expect(p.dead.map((d) => d.record.body)).toEqual(['poison']);
    expect(p.close.map((c) => [c.done.seq, c.done.outcome])).toEqual([[2, 'expired']]);
    expect(p.readyAt).toBe(NOW);
  });

  it('skips filtered records but never skips ahead of a stop on ordered streams', () => {
    let i = 0;
    const verdicts = ['skip', 'deliver', 'stop', 'deliver'] as const;
    const p = plan({ segments: segments(1, ['a', 'b', 'c', 'd']), verdict: () => verdicts[i++] ?? 'deliver' });
    expect(p.deliveries.map((d) => d.record.body)).toEqual(['b']);
    expect(p.next).toBe(3); // stopped at c
    let j = 0;
    const unordered = plan({ mode: 'unordered', segments: segments(1, ['a', 'b', 'c', 'd']), verdict: () => verdicts[j++] ?? 'deliver' });
    expect(unordered.deliveries.map((d) => d.record.body)).toEqual(['b', 'd']);
  });

  it('never leases pending (protected) commits again, and asks for the cascade', () => {
    const p = plan({ mode: 'protected', cursor: cursor(3, [lease(1, NOW - 1, { pending: true }), lease(2, NOW + 10)]) });
    expect(p.grant).toEqual([]);
    expect(p.readyAt).toBe(NOW);
  });

  it("hints each FIFO lease's commit at its ready-index write: ready with more work, drop at the end of a drained shard", () => {
    const more = plan({ segments: segments(1, ['a', 'b', 'c']), want: 2 });
    expect(more.grant.map((g) => readinessHint(g.lease.token))).toEqual(['ready', 'ready']);
    const drained = plan({ segments: segments(1, ['a', 'b']) });
    expect(drained.readyAt).toBe(NOW + 30_000);
    expect(drained.grant.map((g) => readinessHint(g.lease.token))).toEqual(['keep', 'drop']);
    expect(drained.grant.map((g) => deliveriesOfToken(g.lease.token))).toEqual([1, 1]);
    const blocked = plan({ mode: 'serialized', segments: segments(1, ['a', 'b']) });
    expect(blocked.grant.map((g) => readinessHint(g.lease.token))).toEqual(['ready']);
    const unordered = plan({ mode: 'unordered', segments: segments(1, ['a']) });
    expect(unordered.grant[0]?.lease.token).toBe('1.x');
  });

  it("decides a commit's ready-index write from the cursor after it", () => {
    expect(readinessAfterCompletion(5, 5, 0)).toBe('ready'); // known messages after nx
    expect(readinessAfterCompletion(undefined, 5, 0)).toBe('ready');
    expect(readinessAfterCompletion(4, 5, 1)).toBe('keep'); // leases left, their expiry is indexed
    expect(readinessAfterCompletion(4, 5, 0)).toBe('drop'); // idle until a notice
    expect(combinedHint(['1.a.k', '1.b.d'])).toBe('drop');
    expect(combinedHint(['1.a.k', '1.b.r'])).toBe('ready');
    expect(combinedHint(['1.a.k', '1.b.k'])).toBe('keep');
    expect(combinedHint(['1.a', '1.b'])).toBeUndefined();
    expect(combinedHint(['1.a', '1.b.k'])).toBe('ready');
  });

  it('jumps to a new epoch when the next segment starts above the cursor', () => {
    const p = plan({ cursor: cursor(5), segments: [{ seq: 9_000_000, count: 1, records: [record('e')] }] });
    expect(p.deliveries.map((d) => d.lease.seq)).toEqual([9_000_000]);
    expect(p.next).toBe(9_000_001);
  });

  describe('the answer budget (admit)', () => {
    it('stops at the first refused message: it stays unleased at next, and the stream is ready at once', () => {
      const asked: string[] = [];
      const p = plan({
        mode: 'unordered',
        segments: segments(1, ['a', 'b', 'c', 'd']),
        admit: (d) => (asked.push(d.record.body), asked.length <= 2),
      });
      expect(p.deliveries.map((d) => d.record.body)).toEqual(['a', 'b']);
      expect(p.grant.map((g) => g.lease.seq)).toEqual([1, 2]);
      expect(asked).toEqual(['a', 'b', 'c']);
      expect(p.next).toBe(3);
      expect(p.readyAt).toBe(NOW);
    });

    it('a refused renewal stays expired (claimable at once), and nothing new is leased after it', () => {
      const p = plan({
        cursor: cursor(3, [lease(1, NOW - 1), lease(2, NOW - 1)]),
        leaseRecords: new Map([
          [1, record('a')],
          [2, record('b')],
        ]),
        segments: segments(3, ['c']),
        admit: (d) => d.record.body === 'a',
      });
      expect(p.grant.map((g) => [g.lease.seq, g.replaces?.token])).toEqual([[1, '1.1']]);
      expect(p.next).toBe(3);
      expect(p.close).toEqual([]);
      expect(p.readyAt).toBe(NOW);
    });

    it('is asked with the lease the delivery would carry, and never for a skipped record', () => {
      const seen: Array<[string, number]> = [];
      plan({
        mode: 'unordered',
        segments: segments(1, ['skip', 'b']),
        verdict: (r) => (r.body === 'skip' ? 'skip' : 'deliver'),
        admit: (d) => (seen.push([d.record.body, d.lease.deliveries]), true),
      });
      expect(seen).toEqual([['b', 1]]);
    });
  });
});

describe('retry policy (SPEC §1): a lease holds until visibility + the back-off of its delivery', () => {
  const POLICY: RetryPolicy = { initialSeconds: 2, multiplier: 3, maxSeconds: 10 };

  it('a first delivery holds for visibility + initialSeconds; a redelivery for visibility + the grown delay; the last one for visibility only', () => {
    const first = plan({ retryPolicy: POLICY, maxDeliveries: 5, segments: segments(1, ['a']) });
    expect(first.grant[0]?.lease.expiresAt).toBe(NOW + 30_000 + 2_000);
    const again = (deliveries: number) =>
      plan({
        retryPolicy: POLICY,
        maxDeliveries: 5,
        cursor: cursor(2, [lease(1, NOW - 1, { deliveries })]),
        leaseRecords: new Map([[1, record('a')]]),
      }).grant[0]?.lease;
    expect(again(1)).toMatchObject({ deliveries: 2, expiresAt: NOW + 30_000 + 6_000 });
    expect(again(2)).toMatchObject({ deliveries: 3, expiresAt: NOW + 30_000 + 10_000 }); // 18 s capped at 10 s
    expect(again(4)).toMatchObject({ deliveries: 5, expiresAt: NOW + 30_000 }); // the last delivery: dead-lettered when it fails
  });

  it('a lease in its back-off is not claimable, and the stream is ready when it ends', () => {
    const p = plan({
      retryPolicy: POLICY,
      mode: 'serialized',
      cursor: cursor(2, [lease(1, NOW + 2_000, { released: true })]),
      segments: segments(2, ['b']),
    });
    expect(p.deliveries).toEqual([]);
    expect(p.readyAt).toBe(NOW + 2_000);
  });

  it.each(['protected', 'concurrent'] as const)(
    '%s: the shard waits with a released message — nothing after it is delivered, new or again, until it is',
    (mode) => {
      const waiting = plan({
        mode,
        cursor: cursor(4, [lease(1, NOW - 5), lease(2, NOW + 4_000, { released: true }), lease(3, NOW - 1, { released: true })]),
        leaseRecords: new Map([
          [1, record('a')],
          [3, record('c')],
        ]),
        segments: segments(4, ['d']),
      });
      // 1 is before the waiting message: it goes; 3 (its back-off over) and 4 (new) wait behind 2.
      expect(waiting.deliveries.map((d) => d.record.body)).toEqual(['a']);
      expect(waiting.next).toBe(4);
      expect(waiting.readyAt).toBe(NOW + 4_000);
      const over = plan({
        mode,
        now: NOW + 4_000,
        cursor: cursor(4, [lease(2, NOW + 4_000, { released: true }), lease(3, NOW - 1, { released: true })]),
        leaseRecords: new Map([
          [2, record('b')],
          [3, record('c')],
        ]),
        segments: segments(4, ['d']),
        live: () => true,
      });
      expect(over.deliveries.map((d) => d.record.body)).toEqual(['b', 'c', 'd']);
    },
  );

  it('standard topics (unordered) do not wait for a released message', () => {
    const p = plan({
      mode: 'unordered',
      cursor: cursor(2, [lease(1, NOW + 4_000, { released: true })]),
      segments: segments(2, ['b']),
    });
    expect(p.deliveries.map((d) => d.record.body)).toEqual(['b']);
  });
});
