import { describe, expect, it } from 'vitest';
import { ActivityWaiter, FULL_RECEIVE_EVERY_MS, PARK_FOR_MS, PARK_REFRESH_BEFORE_MS } from '../../lib/services/activity-waiter.js';

/** A clock that only moves when the waiter sleeps, and stores that record every call. */
function setup(
  options: { activityAt?: (topic: string, now: number) => number; moved?: (topic: string, now: number) => Map<number, number>; parkedBy?: number; senderCacheMs?: number } = {},
) {
  let now = 1_000_000;
  const sleeps: number[] = [];
  const reads: Array<{ topic: string; at: number }> = [];
  const parks: Array<{ topic: string; until: number; keep: number; at: number }> = [];
  const stores = {
    activity: {
      activity: async (topic: string) => {
        reads.push({ topic, at: now });
        return { at: options.activityAt?.(topic, now) ?? 0, partitions: options.moved?.(topic, now) ?? new Map<number, number>() };
      },
    },
    catalog: {
      parkTopic: async (topic: string, until: number, keep: number) => {
        parks.push({ topic, until, keep, at: now });
        // Another waiter's park that still reaches `keep` wins.
        return options.parkedBy !== undefined && options.parkedBy >= keep ? options.parkedBy : until;
      },
    },
  };
  const clock = { now: () => now };
  const waiter = new ActivityWaiter(stores, clock, {
    ...(options.senderCacheMs === undefined ? {} : { senderCacheMs: options.senderCacheMs }),
    sleep: async (ms) => {
      sleeps.push(ms);
      now += ms;
    },
  });
  return { waiter, sleeps, reads, parks, clock, advance: (ms: number) => (now += ms) };
}

/** Parks `topics` (a first wait ends at once) so the next wait is an idle one. */
async function parked(waiter: ActivityWaiter, topics: string[]) {
  await waiter.wait(topics, 5000, waiter.mark());
}

describe('ActivityWaiter', () => {
  it('says whether the wait was ended for a look (true) or ran out with nothing to look for (false)', async () => {
    const start = 1_000_000;
    // A park that starts: a look is due at once.
    const parking = setup();
    expect(await parking.waiter.wait(['t'], 5000, parking.waiter.mark())).toBe(true);
    // Idle: ran out.
    expect(await parking.waiter.wait(['t'], 5000, parking.waiter.mark())).toBe(false);
    // Activity after the look began.
    const active = setup({ activityAt: (_topic, now) => (now >= start + 700 ? start + 600 : start - 10) });
    await parked(active.waiter, ['t']);
    expect(await active.waiter.wait(['t'], 5000, start)).toBe(true);
    // A due (a lease this container handed out expires) at the very end of the wait.
    const due = setup();
    await parked(due.waiter, ['t']);
    due.waiter.wakeAt(['t'], due.clock.now() + 5000);
    expect(await due.waiter.wait(['t'], 5000, due.waiter.mark())).toBe(true);
  });

  it('ends the wait that starts a park at once, without reading activity, so the loop looks again', async () => {
    const { waiter, sleeps, reads, parks } = setup();
    await waiter.wait(['t'], 5000, waiter.mark());
    expect(parks).toHaveLength(1);
    expect(sleeps).toEqual([]);
    expect(reads).toEqual([]);
  });

  it('backs off 250 ms → 2 s between activity reads while idle, and stops at the end of the wait', async () => {
    const { waiter, sleeps, reads } = setup();
    await parked(waiter, ['t']);
    await waiter.wait(['t'], 5000, waiter.mark());
    expect(sleeps).toEqual([250, 500, 1000, 2000, 1250]);
    // One eventually consistent read per look; none after the wait ended.
    expect(reads.map((r) => r.topic)).toEqual(['t', 't', 't', 't']);
  });

  it('ends the wait at the first look that sees activity after `since`', async () => {
    const start = 1_000_000;
    const { waiter, sleeps, clock } = setup({ activityAt: (_topic, now) => (now >= start + 700 ? start + 600 : start - 10) });
    await parked(waiter, ['t']);
    await waiter.wait(['t'], 5000, start);
    expect(sleeps).toEqual([250, 500]);
    expect(clock.now()).toBe(start + 750);
  });

  it('does not wake for activity from before the look began', async () => {
    const { waiter, sleeps } = setup({ activityAt: () => 999_999 });
    await parked(waiter, ['t']);
    await waiter.wait(['t'], 2000, 1_000_000);
    expect(sleeps.reduce((a, b) => a + b, 0)).toBe(2000);
  });

  it('reads every topic it waits on and wakes for any of them', async () => {
    const { waiter, reads, sleeps } = setup({ activityAt: (topic, now) => (topic === 'b' ? now : 0) });
    await parked(waiter, ['a', 'b']);
    await waiter.wait(['a', 'b'], 5000, 1_000_000);
    expect(reads.map((r) => r.topic).sort()).toEqual(['a', 'b']);
    expect(sleeps).toEqual([250]);
  });

  it('parks each topic at most once per refresh interval, for PARK_FOR_MS', async () => {
    const { waiter, parks, advance } = setup();
    await waiter.wait(['t'], 1000, waiter.mark());
    expect(parks).toEqual([{ topic: 't', until: 1_000_000 + PARK_FOR_MS, keep: 1_000_000 + PARK_REFRESH_BEFORE_MS, at: 1_000_000 }]);
    // The first wait ended at once (a new park); 29 idle seconds later the park still has 31 s.
    for (let i = 0; i < 29; i++) await waiter.wait(['t'], 1000, waiter.mark());
    expect(parks).toHaveLength(1);
    advance(1001);
    await waiter.wait(['t'], 1000, waiter.mark());
    expect(parks).toHaveLength(2);
    expect(parks[1]!.at - parks[0]!.at).toBeGreaterThanOrEqual(PARK_FOR_MS - PARK_REFRESH_BEFORE_MS);
  });

  it('trusts another waiter\'s park that the condition reported, and writes no sooner than it needs', async () => {
    const parkedBy = 1_000_000 + 50_000;
    const { waiter, parks, advance } = setup({ parkedBy });
    await waiter.wait(['t'], 1000, waiter.mark());
    expect(parks).toHaveLength(1);
    // Known parked until +50 s: no write until fewer than 30 s of it are left.
    advance(18_000);
    await waiter.wait(['t'], 1000, waiter.mark());
    expect(parks).toHaveLength(1);
    advance(1_500);
    await waiter.wait(['t'], 1000, waiter.mark());
    expect(parks).toHaveLength(2);
  });

  it('after a park it started, looks again once the senders\' catalog caches from before it expired (park + cache + 1 s)', async () => {
    const { waiter, sleeps, reads, clock } = setup({ senderCacheMs: 5000 });
    const parkedAt = clock.now();
    await parked(waiter, ['t']);
    await waiter.wait(['t'], FULL_RECEIVE_EVERY_MS, waiter.mark());
    expect(clock.now()).toBe(parkedAt + 6000);
    expect(sleeps).toEqual([250, 500, 1000, 2000, 2000, 250]);
    expect(reads).toHaveLength(5);
    // The look that followed covered it: the next wait lasts its full length.
    const next = clock.now();
    await waiter.wait(['t'], FULL_RECEIVE_EVERY_MS, waiter.mark());
    expect(clock.now()).toBe(next + FULL_RECEIVE_EVERY_MS);
  });

  it('a refresh of its own park within the senders\' cache time of that park\'s end looks again once their caches passed (refresh + cache + 1 s)', async () => {
    // Senders holding the old `wu` append without the flag from its end until they read the refresh
    // (an audit's case, 2026-12-04: a message sent 300 ms after the old end waited out a 10 s poll).
    const { waiter, clock, advance } = setup({ senderCacheMs: 5000 });
    const parkedAt = clock.now();
    await parked(waiter, ['t']);
    advance(PARK_FOR_MS - 2000 - (clock.now() - parkedAt)); // 2 s before the park ends
    const refreshAt = clock.now();
    await waiter.wait(['t'], FULL_RECEIVE_EVERY_MS, waiter.mark());
    expect(clock.now()).toBe(refreshAt + 6000);
    // A refresh well before the end (30 s left, every sender's cache sees it first) needs no such look.
    advance(PARK_FOR_MS - PARK_REFRESH_BEFORE_MS - (clock.now() - refreshAt) + 1);
    const early = clock.now();
    await waiter.wait(['t'], FULL_RECEIVE_EVERY_MS, waiter.mark());
    expect(clock.now()).toBe(early + FULL_RECEIVE_EVERY_MS);
  });

  it('a park another waiter wrote long enough ago needs no such look', async () => {
    // Written 15 s ago (wu = then + 60 s): every sender's 5 s cache has seen it.
    const { waiter, clock } = setup({ parkedBy: 1_000_000 + 45_000 });
    await parked(waiter, ['t']);
    const start = clock.now();
    await waiter.wait(['t'], FULL_RECEIVE_EVERY_MS, waiter.mark());
    expect(clock.now()).toBe(start + FULL_RECEIVE_EVERY_MS);
  });

  it('ends a wait when a lease it was told of expires, not for other topics or for expiries the last look covered', async () => {
    const { waiter, clock, advance } = setup();
    await parked(waiter, ['t', 'u']);
    advance(10_000); // past the stale-sender look
    waiter.wakeAt(['t'], clock.now() + 3000);
    let start = clock.now();
    await waiter.wait(['u'], 5000, waiter.mark());
    expect(clock.now()).toBe(start + 5000);
    start = clock.now();
    waiter.wakeAt(['t'], start + 4000);
    await waiter.wait(['t', 'u'], FULL_RECEIVE_EVERY_MS, start - 3000);
    // The earlier wake (at start − 2 s, after the look began at start − 3 s) is due: at once.
    expect(clock.now()).toBe(start);
    await waiter.wait(['t'], FULL_RECEIVE_EVERY_MS, waiter.mark());
    expect(clock.now()).toBe(start + 4000);
    const last = clock.now();
    await waiter.wait(['t'], FULL_RECEIVE_EVERY_MS, waiter.mark());
    expect(clock.now()).toBe(last + FULL_RECEIVE_EVERY_MS);
  });
});

describe('ActivityWaiter partition stamps', () => {
  it('keeps the stamps its last read of a topic found, for the receive that follows', async () => {
    const { waiter } = setup({ activityAt: (_topic, now) => now, moved: (topic, now) => new Map(topic === 'a' ? [[42, now]] : []) });
    expect(waiter.movedPartitions('a')).toBeUndefined();
    await parked(waiter, ['a', 'b']);
    await waiter.wait(['a', 'b'], 5000, waiter.mark() - 1);
    expect([...(waiter.movedPartitions('a') ?? new Map()).keys()]).toEqual([42]);
    expect(waiter.movedPartitions('b')).toBeUndefined();
  });
  it('a wait that ends for the stale-senders time never ends before it, so the look it ends for covers it', async () => {
    const { waiter, sleeps, clock, advance } = setup({ senderCacheMs: 5000 });
    await parked(waiter, ['t']);
    const staleUntil = clock.now() + 5000 + 1000;
    // Started 240 ms later, the backed-off reads leave 10 ms before the due: within the end slack.
    advance(240);
    await waiter.wait(['t'], FULL_RECEIVE_EVERY_MS, waiter.mark());
    expect(sleeps.slice(-2)).toEqual([2000, 10]);
    expect(clock.now()).toBe(staleUntil);
    // The look that follows begins at the due and covers it: the next wait lasts its full length.
    const next = clock.now();
    await waiter.wait(['t'], FULL_RECEIVE_EVERY_MS, waiter.mark());
    expect(clock.now()).toBe(next + FULL_RECEIVE_EVERY_MS);
  });
  it('a wait that ends for a lease expiry never ends before it either', async () => {
    const { waiter, sleeps, clock, advance } = setup();
    await parked(waiter, ['t']);
    advance(10_000); // past the stale-sender look
    const expiry = clock.now() + 250 + 500 + 1000 + 2000 + 2000 + 10;
    waiter.wakeAt(['t'], expiry);
    await waiter.wait(['t'], FULL_RECEIVE_EVERY_MS, waiter.mark());
    expect(sleeps.slice(-2)).toEqual([2000, 10]);
    expect(clock.now()).toBe(expiry);
    const next = clock.now();
    await waiter.wait(['t'], FULL_RECEIVE_EVERY_MS, waiter.mark());
    expect(clock.now()).toBe(next + FULL_RECEIVE_EVERY_MS);
  });
  it('a wait that ends for the caller\'s deadline still ends within the slack, without a last read', async () => {
    const { waiter, sleeps, reads, clock } = setup();
    await parked(waiter, ['t']);
    const start = clock.now();
    await waiter.wait(['t'], 250 + 500 + 10, waiter.mark());
    expect(sleeps).toEqual([250, 500]);
    expect(reads).toHaveLength(1);
    expect(clock.now()).toBe(start + 750);
  });
});

