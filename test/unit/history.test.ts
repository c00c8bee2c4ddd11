/**
 * History for the whole retention (lib/domain/history.ts, history-packing.ts,
 * the compact `dn` form of cursor-item.ts): what a claim spills, and that
 * every stored form gives back exactly what went in.
 */
import { describe, expect, it } from 'vitest';
import { completionKeys, doneOfStored, storedDone, toItem, toState } from '../../lib/adapters/dynamodb/cursor-item.js';
import { packHistory, unpackHistory } from '../../lib/adapters/dynamodb/history-packing.js';
import { historyChunkSk, historyStragglerSk } from '../../lib/adapters/dynamodb/keys.js';
import type { CursorState, DoneEntry, Lease } from '../../lib/domain/cursor.js';
import { CHUNK_MAX_ENTRIES, CHUNK_MIN_BELOW_LEASES, RUN_EXTENSION_MAX, SPILL_AT, SPILL_HOLES_AT, SPILL_STEP, STRAGGLERS_MAX, commitSpills, markAfter, planSpill, repeatsCommit, spilledSeqs } from '../../lib/domain/history.js';
import { Limits } from '../../lib/domain/model.js';

const NOW = 1_800_000_000_000;

const done = (seq: number, extra: Partial<DoneEntry> = {}): DoneEntry => ({ seq, at: NOW + seq, outcome: 'committed', deliveries: 1, ...extra });
const lease = (seq: number): Lease => ({ seq, expiresAt: NOW, token: '1.x', deliveries: 1, segment: seq, topic: undefined, pending: false });

const cursor = (doneSeqs: number[], leaseSeqs: number[] = [], historyMark?: number): CursorState => ({
  group: 'g',
  stream: 't:orders/p:0',
  next: 10_000,
  segmentStart: 10_000,
  leases: new Map(leaseSeqs.map((s) => [s, lease(s)])),
  done: new Map(doneSeqs.map((s) => [s, done(s)])),
  committed: 0,
  deadLettered: 0,
  known: undefined,
  readyAt: undefined,
  ...(historyMark !== undefined ? { historyMark } : {}),
});

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

describe('planSpill', () => {
  it('spills nothing while dn holds at most SPILL_AT completions', () => {
    expect(planSpill(cursor(range(1, SPILL_AT)))).toBeUndefined();
  });

  it('spills every completion above the mark as one chunk that starts right after the mark', () => {
    const spill = planSpill(cursor(range(1, SPILL_AT + 1)));
    expect(spill?.chunk?.first).toBe(1);
    expect(spill?.chunk?.last).toBe(SPILL_AT + 1);
    expect(spill?.chunk?.entries.map((e) => e.seq)).toEqual(range(1, SPILL_AT + 1));
    expect(spill?.expectMark).toBeUndefined();
    expect(markAfter(spill!)).toBe(SPILL_AT + 1);
  });

  it('ends the chunk below the lowest message still leased above the mark: no hole to spill later as a straggler', () => {
    // 60 messages, 30 and 55 still leased (with many consumers of one shard, leases complete out of order).
    const doneSeqs = range(1, 60).filter((s) => s !== 30 && s !== 55);
    const spill = planSpill(cursor(doneSeqs, [30, 55]))!;
    expect(spill.chunk?.entries.map((e) => e.seq)).toEqual(range(1, 29));
    expect(markAfter(spill)).toBe(29);
    expect(spill.stragglers).toEqual([]);
  });

  it('… and leaves it for a later claim while fewer than CHUNK_MIN_BELOW_LEASES completions lie below that lease', () => {
    const low = CHUNK_MIN_BELOW_LEASES - 1;
    const doneSeqs = range(1, SPILL_AT + 10).filter((s) => s !== low + 1);
    expect(planSpill(cursor(doneSeqs, [low + 1]))).toBeUndefined();
    // At CHUNK_MIN_BELOW_LEASES it spills them.
    const atMin = range(1, SPILL_AT + 10).filter((s) => s !== low + 2);
    expect(planSpill(cursor(atMin, [low + 2]))?.chunk?.entries).toHaveLength(CHUNK_MIN_BELOW_LEASES);
  });

  it('spans the leases once the cursor holds more than SPILL_HOLES_AT completions', () => {
    const doneSeqs = range(1, SPILL_HOLES_AT + 2).filter((s) => s !== 5);
    expect(doneSeqs).toHaveLength(SPILL_HOLES_AT + 1);
    expect(planSpill(cursor(doneSeqs, [5]))?.chunk?.entries.map((e) => e.seq)).toEqual(doneSeqs);
    expect(planSpill(cursor(doneSeqs.slice(1), [5]))).toBeUndefined();
  });

  it('spans leases in flight (holes) and takes at most a chunk, the lowest first', () => {
    const doneSeqs = range(101, 400).filter((s) => s % 10 !== 0);
    const spill = planSpill(cursor(doneSeqs, range(101, 400).filter((s) => s % 10 === 0), 100))!;
    expect(spill.chunk?.first).toBe(101);
    expect(spill.chunk?.entries).toHaveLength(CHUNK_MAX_ENTRIES);
    expect(spill.chunk?.entries.map((e) => e.seq)).toEqual(doneSeqs.slice(0, CHUNK_MAX_ENTRIES));
    // Every completion of the chunk's range is in it: nothing of (mark, last] stays in dn.
    const last = spill.chunk!.last;
    expect(doneSeqs.filter((s) => s <= last)).toEqual(spill.chunk?.entries.map((e) => e.seq));
  });

  it('spills completions at or below the mark (holes that completed later) as stragglers, a few per claim', () => {
    const stragglers = range(1, 20);
    const spill = planSpill(cursor([...stragglers, ...range(101, 100 + SPILL_AT)], [], 100))!;
    expect(spill.stragglers.map((e) => e.seq)).toEqual(stragglers.slice(0, STRAGGLERS_MAX));
    expect(spill.chunk?.first).toBe(101);
    expect(spilledSeqs(spill)).toHaveLength(SPILL_AT + STRAGGLERS_MAX);
  });

  it('keeps the mark when only stragglers are left', () => {
    const spill = planSpill(cursor(range(1, SPILL_AT + 1), [], 500))!;
    expect(spill.chunk).toBeUndefined();
    expect(markAfter(spill)).toBe(500);
  });
});

describe('commitSpills (range commits: exactly one commit crosses each step)', () => {
  it('spills on taking the completions past SPILL_AT, then past each further step, and on no other commit', () => {
    expect(commitSpills(SPILL_AT, 10)).toBe(false);
    expect(commitSpills(SPILL_AT + 1, 10)).toBe(true);
    expect(commitSpills(SPILL_AT + 10, 10)).toBe(true);
    expect(commitSpills(SPILL_AT + 11, 10)).toBe(false);
    expect(commitSpills(SPILL_AT + SPILL_STEP, 10)).toBe(false);
    expect(commitSpills(SPILL_AT + SPILL_STEP + 1, 10)).toBe(true);
    expect(commitSpills(SPILL_AT + SPILL_STEP + 1, 1)).toBe(true);
    expect(commitSpills(SPILL_AT + SPILL_STEP + 2, 1)).toBe(false);
  });

  it('of commits adding 1 to 10 completions each, one after the other, one a step spills', () => {
    for (let added = 1; added <= 10; added++) {
      let dn = 0;
      const spilledAt: number[] = [];
      for (let i = 0; i < 40; i++) {
        dn += added;
        if (commitSpills(dn, added)) spilledAt.push(dn);
      }
      const steps = dn <= SPILL_AT ? 0 : Math.floor((dn - SPILL_AT - 1) / SPILL_STEP) + 1;
      expect(spilledAt).toHaveLength(steps);
    }
  });
});

describe('repeatsCommit', () => {
  it('answers a repeat of the delivery that committed, nothing else', () => {
    expect(repeatsCommit(done(1, { deliveries: 3 }), '3.abc.r')).toBe(true);
    expect(repeatsCommit(done(1, { deliveries: 3 }), '2.abc.r')).toBe(false);
    expect(repeatsCommit(done(1, { deliveries: 3, outcome: 'dead-lettered' }), '3.abc')).toBe(false);
    expect(repeatsCommit(undefined, '1.abc')).toBe(false);
    // Entries of earlier versions kept the token: it must match too.
    expect(repeatsCommit(done(1, { token: '1.abc' }), '1.abd')).toBe(false);
    expect(repeatsCommit(done(1, { token: '1.abc' }), '1.abc')).toBe(true);
  });

  it('after a seek, the same delivery count in another seek epoch is another lease', () => {
    expect(repeatsCommit(done(1, { deliveries: 1, epoch: 1 }), '1.abc~1')).toBe(true);
    expect(repeatsCommit(done(1, { deliveries: 1, epoch: 1 }), '1.abc~1.d')).toBe(true);
    expect(repeatsCommit(done(1, { deliveries: 1, epoch: 1 }), '1.abc')).toBe(false);
    expect(repeatsCommit(done(1, { deliveries: 1 }), '1.abc~1')).toBe(false);
    expect(repeatsCommit(done(1, { deliveries: 1, epoch: 2 }), '1.abc~1')).toBe(false);
  });
});

describe('stored forms', () => {
  it('dn stores one number per completion and reads it back, at the largest values it allows', () => {
    for (const entry of [
      done(7, { at: 2 ** 41 - 1, deliveries: Limits.maxDeliveriesMax, outcome: 'expired' }),
      done(8, { at: NOW, deliveries: 1, outcome: 'dead-lettered' }),
      done(9, { at: 0, deliveries: 1 }),
    ]) {
      const n = storedDone(entry);
      expect(Number.isSafeInteger(n)).toBe(true);
      expect(doneOfStored(entry.seq, n)).toEqual(entry);
    }
  });

  it('a completion after a seek is [number, epoch]; before any seek the plain number', () => {
    const entry = done(7, { at: 2 ** 41 - 1, deliveries: Limits.maxDeliveriesMax, outcome: 'expired', epoch: 3 });
    const stored = storedDone(entry);
    expect(stored).toEqual([storedDone({ ...entry, epoch: undefined }), 3]);
    expect(doneOfStored(entry.seq, stored)).toEqual(entry);
    expect(typeof storedDone(done(7, { epoch: 0 }))).toBe('number');
  });

  it('still reads the map form earlier versions wrote', () => {
    expect(doneOfStored(4, { k: '2.z', a: 99, o: 'committed', d: 2 } as never)).toEqual({ seq: 4, token: '2.z', at: 99, outcome: 'committed', deliveries: 2 });
  });

  it('a cursor round-trips with its history mark and creation time', () => {
    const c = { ...cursor([1, 2, 3], [5], 2), createdAt: NOW };
    expect(toState(toItem(c))).toEqual(c);
  });

  it("a whole range's completions are one entry [number, epoch, n], read back as n completions naming their run", () => {
    const run = { start: 20, n: 10 };
    const members = range(20, 29).map((seq) => done(seq, { at: NOW, run, epoch: 2 }));
    const c = { ...cursor([5], [40]), done: new Map([[5, done(5)], ...members.map((m) => [m.seq, m] as const)]) };
    const item = toItem(c);
    expect(item.dn).toEqual({ '5': storedDone(done(5)), 'r20.2': [storedDone(done(20, { at: NOW })), 2, 10] });
    expect(toState(item)).toEqual({ ...c, storedKeys: new Map([['5', { start: 5, n: 1 }], ['r20.2', { start: 20, n: 10 }]]) });
    // A member's completion of its own (a replay after a seek) wins over the run's, whatever the key order.
    const big = 1_796_447_835_000_001;
    const replayed = done(big + 3, { at: NOW + 5, epoch: 3 });
    const dn = { [String(big + 3)]: storedDone(replayed), [`r${big}.2`]: [storedDone(done(big, { at: NOW })), 2, 10] };
    expect(Object.keys(dn)[0]).toBe(String(big + 3));
    expect(toState({ ...item, dn }).done.get(big + 3)).toEqual(replayed);
    expect(toState({ ...item, dn }).done.get(big + 4)?.run).toEqual({ start: big, n: 10 });
    // And a run after a seek over numbers completed one by one before it: the run's members count.
    const earlier = done(big + 3, { at: NOW - 5 });
    const after = { [String(big + 3)]: storedDone(earlier), [`r${big}.1`]: [storedDone(done(big, { at: NOW })), 1, 10] };
    expect(toState({ ...item, dn: after }).done.get(big + 3)).toEqual(done(big + 3, { at: NOW, epoch: 1, run: { start: big, n: 10 } }));
    // A run not whole (a size estimate after members left) is stored a completion an entry.
    const part = new Map(c.done);
    part.delete(25);
    expect(Object.keys(toItem({ ...c, done: part }).dn as object)).toHaveLength(10);
  });

  it("removing completions removes a run's entry only with every member of it", () => {
    const run = { start: 20, n: 3 };
    const map = new Map([[7, done(7)], ...[20, 21, 22].map((seq) => [seq, done(seq, { run })] as const)]);
    expect(completionKeys({ done: map }, [7, 20, 21, 22])).toEqual(['7', 'r20.0']);
    expect(completionKeys({ done: map }, [7, 20, 21])).toEqual(['7']);
    // Keys sharing a number leave together or not at all: removing a replay's own completions of
    // 21 and 22 alone would bring back the earlier run's under them (a review's probe).
    const stored = new Map([['r20.0', { start: 20, n: 3 }], ['21', { start: 21, n: 1 }], ['22', { start: 22, n: 1 }], ['7', { start: 7, n: 1 }]]);
    expect(completionKeys({ done: map, storedKeys: stored }, [7, 21, 22])).toEqual(['7']);
    expect(completionKeys({ done: map, storedKeys: stored }, [7, 20, 21, 22])).toEqual(['r20.0', '21', '22', '7']);
  });

  it('a spill takes a run whole: a chunk cut inside one ends at its end, stragglers too', () => {
    const run = { start: CHUNK_MAX_ENTRIES - 4, n: 10 };
    const c = cursor(range(1, CHUNK_MAX_ENTRIES + 20));
    for (let seq = run.start; seq < run.start + run.n; seq++) c.done.set(seq, done(seq, { run }));
    const spill = planSpill(c)!;
    expect(spill.chunk!.last).toBe(run.start + run.n - 1);
    expect(spill.chunk!.entries).toHaveLength(CHUNK_MAX_ENTRIES + 5);
    const straggling = { start: 3, n: 10 };
    const s = cursor([...range(1, 12), ...range(101, 100 + SPILL_AT)], [], 100);
    for (let seq = 3; seq < 13; seq++) s.done.set(seq, done(seq, { run: straggling }));
    expect(planSpill(s)!.stragglers.map((d) => d.seq)).toEqual(range(1, 12));
  });

  it("a spill's cut goes on to the end of a run only its key shows (replaced by later completions), and below a chain of runs past RUN_EXTENSION_MAX", () => {
    // Numbers 1–30 completed one by one after a seek; an earlier epoch's run 95–104 under them (key only).
    const c = cursor(range(1, CHUNK_MAX_ENTRIES + 20));
    c.storedKeys = new Map([...range(1, CHUNK_MAX_ENTRIES + 20).map((seq) => [String(seq), { start: seq, n: 1 }] as const), ['r95.0', { start: CHUNK_MAX_ENTRIES - 5, n: 10 }]]);
    expect(planSpill(c)!.chunk!.last).toBe(CHUNK_MAX_ENTRIES + 4);
    // Runs of three epochs chained across the cut, 95–124: more than RUN_EXTENSION_MAX past it — the cut goes below 95.
    c.storedKeys.set('r103.1', { start: CHUNK_MAX_ENTRIES + 3, n: 10 }).set('r111.2', { start: CHUNK_MAX_ENTRIES + 11, n: 10 });
    expect(RUN_EXTENSION_MAX).toBeLessThan(20);
    expect(planSpill(c)!.chunk!.last).toBe(CHUNK_MAX_ENTRIES - 6);
  });

  it('packs a chunk in ~7 bytes per completion and unpacks exactly, times before the base included', () => {
    const entries = range(1_000_001, 1_000_000 + CHUNK_MAX_ENTRIES)
      .filter((s) => s % 7 !== 0)
      .map((seq, i) => done(seq, { at: NOW + (i % 2 ? 3_600_000 : -5000) + i, deliveries: (i % 1000) + 1, outcome: (['committed', 'dead-lettered', 'expired'] as const)[i % 3] }));
    const packed = packHistory(1_000_001, NOW, entries);
    expect(packed.length).toBeLessThanOrEqual(8 * entries.length);
    expect(unpackHistory(1_000_001, NOW, packed)).toEqual(entries);
  });

  it('packs seek epochs with their completions (one more varint each), and reads chunks without them as before', () => {
    const entries = [
      done(11, { at: NOW, deliveries: 1 }),
      done(12, { at: NOW + 5, deliveries: 1, epoch: 1 }),
      done(13, { at: NOW - 5, deliveries: 1000, outcome: 'dead-lettered', epoch: 70_000 }),
      done(15, { at: NOW, deliveries: 2, outcome: 'expired', epoch: 2 }),
    ];
    const packed = packHistory(11, NOW, entries);
    expect(unpackHistory(11, NOW, packed)).toEqual(entries);
    expect(packed.length - packHistory(11, NOW, entries.map((e) => ({ ...e, epoch: undefined }))).length).toBe(1 + 3 + 1);
  });

  it('refuses entries below the chunk start (they belong to another chunk)', () => {
    expect(() => packHistory(10, NOW, [done(9)])).toThrow(RangeError);
  });

  it('keys: chunks of a cursor sort by first seq, stragglers after all of them, and each cursor (creation time) apart', () => {
    expect(historyChunkSk(NOW, 5) < historyChunkSk(NOW, 40)).toBe(true);
    expect(historyChunkSk(NOW, 10 ** 15) < historyStragglerSk(NOW, 1)).toBe(true);
    expect(historyStragglerSk(NOW, 1) < historyChunkSk(NOW + 1, 0)).toBe(true);
  });
});
