/**
 * The per-container cursor cache (lib/adapters/dynamodb/cursor-cache.ts,
 * docs/design.md "The cursor cache"): which entries it serves, for how long,
 * to whom, and when it steps aside.
 */
import { describe, expect, it } from 'vitest';
import { CONTENDED_MS, CURSOR_CACHE_MAX_ENTRIES, CursorCache } from '../../lib/adapters/dynamodb/cursor-cache.js';
import type { CursorState } from '../../lib/domain/cursor.js';

const P0 = 't:orders/p:0';
const cursor = (next: number, extra: Partial<CursorState> = {}): CursorState => ({
  group: 'g',
  stream: P0,
  next,
  segmentStart: next,
  leases: new Map(),
  done: new Map(),
  committed: 0,
  deadLettered: 0,
  known: undefined,
  readyAt: undefined,
  createdAt: 100,
  ...extra,
});

const setup = (maxAgeMs = 2000) => {
  let t = 1_000_000;
  const cache = new CursorCache({ maxAgeMs, now: () => t });
  return { cache, advance: (ms: number) => (t += ms), now: () => t };
};

describe('CursorCache', () => {
  it('is off by default and when its age is 0: nothing is stored or served', () => {
    for (const cache of [new CursorCache(), new CursorCache({ maxAgeMs: 0 })]) {
      cache.put('g', P0, cursor(5), Date.now(), 1);
      expect(cache.enabled).toBe(false);
      expect(cache.get('g', P0, 1)).toBeUndefined();
      expect(cache.size).toBe(0);
    }
  });

  it('caches partition, redrive and FIFO shard cursors, never notice cursors', () => {
    expect(CursorCache.caches('t:orders/p:0')).toBe(true);
    expect(CursorCache.caches('t:orders/p:63')).toBe(true);
    expect(CursorCache.caches('r:g/p:0')).toBe(true);
    // FIFO shards (2026-12-02), of a topic and of a time-order group; a shard key may hold anything.
    expect(CursorCache.caches('t:orders/k:p:1')).toBe(true);
    expect(CursorCache.caches('o:og/k:customer-1')).toBe(true);
    expect(CursorCache.caches('t:orders/k:a/p:1')).toBe(true);
    expect(CursorCache.caches('t:orders/n:2')).toBe(false);
    expect(CursorCache.caches('o:og/n:0')).toBe(false);
    const { cache, now } = setup();
    cache.put('g', 't:orders/n:0', cursor(5, { stream: 't:orders/n:0' }), now(), 1);
    expect(cache.size).toBe(0);
    cache.put('g', 't:orders/k:A', cursor(5, { stream: 't:orders/k:A' }), now(), 1);
    expect(cache.size).toBe(1);
  });

  it('serves an entry while it is at most maxAgeMs old, counted from when its read or write was sent', () => {
    const { cache, advance, now } = setup(2000);
    const sent = now();
    advance(300); // the read took 300 ms
    cache.put('g', P0, cursor(5), sent, 1);
    advance(1700);
    expect(cache.get('g', P0, 1)?.next).toBe(5);
    advance(1);
    expect(cache.get('g', P0, 1)).toBeUndefined();
    // A stale entry is dropped, not kept.
    expect(cache.size).toBe(0);
  });

  it('never replaces a newer observation by an older one', () => {
    const { cache, advance, now } = setup();
    const readSent = now();
    advance(10);
    cache.put('g', P0, cursor(9), now(), 1); // a claim sent later returned nx 9
    cache.put('g', P0, cursor(5), readSent, 1); // the read sent before it answers last
    expect(cache.get('g', P0, 1)?.next).toBe(9);
  });

  it('serves an entry only to the group incarnation that stored it (a group created again has a new createdAt)', () => {
    const { cache, now } = setup();
    cache.put('g', P0, cursor(5), now(), 1);
    expect(cache.get('g', P0, 2)).toBeUndefined();
    // …and the mismatch dropped it: the old incarnation reads again too.
    expect(cache.get('g', P0, 1)).toBeUndefined();
    cache.put('g', P0, cursor(5), now(), 1);
    expect(cache.get('other', P0, 1)).toBeUndefined();
  });

  it('takes a commit or visibility change of this container only for the cursor item it holds (same ca)', () => {
    const { cache, advance, now } = setup();
    // No entry: an update stores nothing (the incarnation is unknown to it).
    cache.update('g', P0, cursor(5), now());
    expect(cache.size).toBe(0);
    cache.put('g', P0, cursor(5), now(), 1);
    advance(1500);
    cache.update('g', P0, cursor(5, { committed: 1 }), now());
    advance(1000);
    // The update's stamp counts: 1000 ms old, still fresh.
    expect(cache.get('g', P0, 1)?.committed).toBe(1);
    // Another cursor item (the group was deleted and created again): dropped.
    cache.update('g', P0, cursor(5, { createdAt: 999 }), now());
    expect(cache.get('g', P0, 1)).toBeUndefined();
  });

  it('forgets an entry, and every entry of a group', () => {
    const { cache, now } = setup();
    cache.put('g', P0, cursor(5), now(), 1);
    cache.put('g', 't:orders/p:1', cursor(5, { stream: 't:orders/p:1' }), now(), 1);
    cache.put('h', P0, cursor(5, { group: 'h' }), now(), 1);
    cache.forget('g', P0);
    expect(cache.get('g', P0, 1)).toBeUndefined();
    expect(cache.get('g', 't:orders/p:1', 1)).toBeDefined();
    cache.forgetGroup('g');
    expect(cache.get('g', 't:orders/p:1', 1)).toBeUndefined();
    expect(cache.get('h', P0, 1)).toBeDefined();
  });

  it('steps aside for CONTENDED_MS on a stream where a claim lost its race', () => {
    const { cache, advance, now } = setup();
    cache.put('g', P0, cursor(5), now(), 1);
    cache.lost('g', P0);
    expect(cache.get('g', P0, 1)).toBeUndefined();
    // Reads during the window are not remembered either.
    cache.put('g', P0, cursor(7), now(), 1);
    expect(cache.get('g', P0, 1)).toBeUndefined();
    // Other streams are not affected.
    cache.put('g', 't:orders/p:1', cursor(5, { stream: 't:orders/p:1' }), now(), 1);
    expect(cache.get('g', 't:orders/p:1', 1)).toBeDefined();
    advance(CONTENDED_MS);
    cache.put('g', P0, cursor(8), now(), 1);
    expect(cache.get('g', P0, 1)?.next).toBe(8);
  });

  it('holds at most CURSOR_CACHE_MAX_ENTRIES entries, dropping the oldest', () => {
    const { cache, now } = setup();
    for (let i = 0; i <= CURSOR_CACHE_MAX_ENTRIES; i++) cache.put(`g${i}`, P0, cursor(i, { group: `g${i}` }), now(), 1);
    expect(cache.size).toBe(CURSOR_CACHE_MAX_ENTRIES);
    expect(cache.get('g0', P0, 1)).toBeUndefined();
    expect(cache.get(`g${CURSOR_CACHE_MAX_ENTRIES}`, P0, 1)?.next).toBe(CURSOR_CACHE_MAX_ENTRIES);
  });

  it('serves nothing stamped in the future (a clock that went back)', () => {
    const { cache, now } = setup();
    cache.put('g', P0, cursor(5), now() + 5000, 1);
    expect(cache.get('g', P0, 1)).toBeUndefined();
  });
});
