/**
 * The pure update builders of cursor writes: what each write changes and the
 * condition it is guarded by. Placeholders are resolved into readable text
 * (`fl.8.k = "1.z"`), so the tests state the expressions, not the numbering;
 * every placeholder must be defined and used (DynamoDB refuses unused ones).
 */
import { describe, expect, it } from 'vitest';
import {
  advanceUpdate,
  claimUpdate,
  completionUpdate,
  deadLetterUpdate,
  noticeSeekUpdate,
  raiseKnownUpdate,
  seekMoveUpdate,
  fitsExpressionBudget,
  grantUpdate,
  normaliseUpdate,
  spillUpdate,
  type GrantChange,
  unsoughtSinceCondition,
  visibilityUpdate,
  visibilityVariants,
  type ClaimChange,
  type UpdateParts,
} from '../../lib/adapters/dynamodb/cursor-updates.js';
import { readyNowKey } from '../../lib/adapters/dynamodb/keys.js';
import { storedLease, toItem, toState } from '../../lib/adapters/dynamodb/cursor-item.js';
import { RANGE_MAX_MESSAGES, UNKNOWN_SEGMENT, rangeOfToken, rangeToken, rangesOf, type Lease } from '../../lib/domain/cursor.js';
import { CHUNK_MAX_ENTRIES, RUN_EXTENSION_MAX, STRAGGLERS_MAX } from '../../lib/domain/history.js';
import { Limits } from '../../lib/domain/model.js';

const SHARD = 't:orders/k:A';
const PARTITION = 't:orders/p:0';

/** The update and condition with every placeholder replaced by its name or JSON value. */
function render(parts: UpdateParts): { update: string; condition: string } {
  const names = parts.ExpressionAttributeNames ?? {};
  const values = parts.ExpressionAttributeValues;
  const text = `${parts.UpdateExpression} ${parts.ConditionExpression}`;
  const usedNames = new Set(text.match(/#\w+/g) ?? []);
  const usedValues = new Set(text.match(/:\w+/g) ?? []);
  expect(new Set(Object.keys(names))).toEqual(usedNames);
  expect(new Set(Object.keys(values))).toEqual(usedValues);
  const resolve = (expression: string) =>
    expression.replace(/#\w+/g, (n) => names[n] ?? n).replace(/:\w+/g, (v) => JSON.stringify(values[v]));
  return { update: resolve(parts.UpdateExpression), condition: resolve(parts.ConditionExpression) };
}

const lease = (seq: number, token: string, extra: Partial<Lease> = {}): Lease => ({
  seq,
  expiresAt: 5000,
  token,
  deliveries: 2,
  segment: 7,
  topic: undefined,
  pending: false,
  ...extra,
});

/** A claim of group `g` that changes nothing but what `change` says. */
const claim = (change: Partial<ClaimChange>) =>
  render(claimUpdate('g', { expectNext: 5, next: 5, segmentStart: 5, grant: [], close: [], forgetDone: [], ...change }));

describe('claimUpdate', () => {
  it('grants and renews leases, closes expired ones and forgets old completions, on the nx and tokens it read', () => {
    const { update, condition } = render(
      claimUpdate('g', {
        expectNext: 10,
        next: 11,
        segmentStart: 10,
        grant: [
          { lease: lease(10, '1.a', { topic: 'orders' }), replaces: undefined },
          { lease: lease(8, '2.b'), replaces: lease(8, '1.z', { deliveries: 1, expiresAt: 3000 }) },
        ],
        close: [{ done: { seq: 9, token: '1.y', at: 4000, outcome: 'expired', deliveries: 1 }, replaces: lease(9, '1.y', { deliveries: 1 }) }],
        forgetDone: ['3'],
      }),
    );
    expect(update).toBe(
      'SET nx = 11, ns = 10, fl.10 = {"e":5000,"k":"1.a","d":2,"g":7,"t":"orders"}, fl.8 = {"e":5000,"k":"2.b","d":2,"g":7}, ' +
        'dn.9 = 16384006 REMOVE fl.9, dn.3',
    );
    expect(condition).toBe(
      'nx = 10 AND fl.8 = {"e":3000,"k":"1.z","d":1,"g":7} AND fl.9 = {"e":5000,"k":"1.y","d":1,"g":7}',
    );
  });

  it('moves the history mark with a spill, on the mark it read (none yet: on its absence)', () => {
    expect(claim({ forgetDone: ['3', '4'], history: { expectMark: undefined, mark: 4 } })).toEqual({
      update: 'SET nx = 5, ns = 5, hw = 4 REMOVE dn.3, dn.4',
      condition: 'nx = 5 AND attribute_not_exists(hw)',
    });
    expect(claim({ forgetDone: ['7'], history: { expectMark: 4, mark: 4 } })).toEqual({
      update: 'SET nx = 5, ns = 5, hw = 4 REMOVE dn.7',
      condition: 'nx = 5 AND hw = 4',
    });
  });

  it('on a partition cursor, is conditional on the seek epoch it read (none yet: on its absence)', () => {
    expect(claim({ seekEpoch: { expect: undefined } })).toEqual({ update: 'SET nx = 5, ns = 5', condition: 'nx = 5 AND attribute_not_exists(se)' });
    expect(claim({ seekEpoch: { expect: 3 } })).toEqual({ update: 'SET nx = 5, ns = 5', condition: 'nx = 5 AND se = 3' });
  });

  it('stores a pending mark as c = 1', () => {
    const { update } = claim({ grant: [{ lease: lease(1, '1.a', { pending: true }), replaces: undefined }] });
    expect(update).toBe('SET nx = 5, ns = 5, fl.1 = {"e":5000,"k":"1.a","d":2,"g":7,"c":1}');
  });

  it('names no attribute when it only moves nx (DynamoDB refuses an empty name map)', () => {
    const parts = claimUpdate('g', { expectNext: 10, next: 12, segmentStart: 11, grant: [], close: [], forgetDone: [] });
    expect(parts.ExpressionAttributeNames).toBeUndefined();
    expect(render(parts)).toEqual({ update: 'SET nx = 12, ns = 11', condition: 'nx = 10' });
  });

  it('on a FIFO shard raises kn and moves the ready-index key, guarded by the key, kn and leases it read', () => {
    const { update, condition } = claim({
      next: 6,
      grant: [{ lease: lease(5, '1.a.d'), replaces: undefined }],
      shard: { expectKnown: 5, expectInFlight: 0, known: 5, index: { from: readyNowKey(SHARD), to: '0000000030000' }, now: 1_000_000 },
    });
    expect(update).toBe('SET nx = 6, ns = 5, fl.5 = {"e":5000,"k":"1.a.d","d":2,"g":7}, kn = 5, g1pk = if_not_exists(rk, "R#g"), g1sk = "0000000030000", ttl = 1297000');
    expect(condition).toBe(`nx = 5 AND g1sk = "${readyNowKey(SHARD)}" AND kn = 5 AND size(fl) = 0 AND (attribute_not_exists(ttl) OR ttl > 1000)`);
  });

  it('a raise folded into the claim moves the shard to its notice stream\'s key: with the index change, or alone with the entry kept', () => {
    const bucket = 'R#g#t:ledger/n:9';
    const base = { expectKnown: 4, expectInFlight: 0, known: 5, now: 1_000_000 };
    const moved = claim({ shard: { ...base, index: { from: undefined, to: readyNowKey(SHARD) }, rekey: { pk: bucket, entry: false } } });
    expect(moved.update).toBe(`SET nx = 5, ns = 5, kn = 5, g1pk = "${bucket}", g1sk = "${readyNowKey(SHARD)}", rk = "${bucket}", ttl = 1297000`);
    const kept = claim({ shard: { ...base, rekey: { pk: bucket, entry: true } } });
    expect(kept.update).toBe(`SET nx = 5, ns = 5, kn = 5, g1pk = "${bucket}", rk = "${bucket}", ttl = 1297000`);
    // Back to the home key (a topic created again with 4 notice streams): rk goes.
    const home = claim({ shard: { ...base, rekey: { pk: undefined, entry: true } } });
    expect(home.update).toBe('SET nx = 5, ns = 5, kn = 5, g1pk = "R#g", ttl = 1297000 REMOVE rk');
    const idle = claim({ shard: { ...base, rekey: { pk: bucket, entry: false } } });
    expect(idle.update).toBe(`SET nx = 5, ns = 5, kn = 5, rk = "${bucket}", ttl = 1297000`);
  });

  it('takes a shard off the index only if it was where the claim read it, and no notice came meanwhile', () => {
    const { update, condition } = claim({ shard: { expectKnown: undefined, expectInFlight: 0, known: 4, index: { from: undefined, to: undefined }, now: 1_000_000 } });
    expect(update).toBe('SET nx = 5, ns = 5, kn = 4, ttl = 1297000 REMOVE g1pk, g1sk');
    expect(condition).toBe('nx = 5 AND attribute_not_exists(g1sk) AND attribute_not_exists(kn) AND size(fl) = 0 AND (attribute_not_exists(ttl) OR ttl > 1000)');
  });

  it('leaves the index alone when the key does not change', () => {
    const { update, condition } = claim({ next: 6, shard: { expectKnown: 7, expectInFlight: 2, known: 7, now: 1_000_000 } });
    expect(update).toBe('SET nx = 6, ns = 5, kn = 7, ttl = 1297000');
    expect(condition).toBe('nx = 5 AND kn = 7 AND size(fl) = 2 AND (attribute_not_exists(ttl) OR ttl > 1000)');
  });

  it('passing commits: on the visibility count and ready-index key it read instead of kn and the lease map, kn not written', () => {
    const leases = new Map([[4, lease(4, '1.x')]]);
    const base = { expectKnown: 30, expectInFlight: 1, expectLeases: leases, known: 30, now: 1_000_000 };
    const counted = claim({ next: 6, grant: [{ lease: lease(5, '1.a'), replaces: undefined }], shard: { ...base, passCommits: { visibilityVersion: 3, readyKey: readyNowKey(SHARD) } } });
    expect(counted.update).toBe('SET nx = 6, ns = 5, fl.5 = {"e":5000,"k":"1.a","d":2,"g":7}, ttl = 1297000');
    expect(counted.condition).toBe(`nx = 5 AND vv = 3 AND g1sk = "${readyNowKey(SHARD)}" AND (attribute_not_exists(ttl) OR ttl > 1000)`);
    // No visibility change yet: on its absence. A renewal still names the lease it replaces.
    const renewal = claim({ grant: [{ lease: lease(4, '2.b'), replaces: leases.get(4) }], shard: { ...base, passCommits: { visibilityVersion: undefined, readyKey: undefined } } });
    expect(renewal.condition).toBe(
      'nx = 5 AND fl.4 = {"e":5000,"k":"1.x","d":2,"g":7} AND attribute_not_exists(vv) AND attribute_not_exists(g1sk) AND (attribute_not_exists(ttl) OR ttl > 1000)',
    );
  });

  it('raises kn to what a notice announced and notes its epoch start, under the kn it read', () => {
    const { update, condition } = claim({ shard: { expectKnown: 3, expectInFlight: 1, known: 9, epochStart: 8, now: 1_000_000 } });
    expect(update).toBe('SET nx = 5, ns = 5, kn = 9, ke = 8, ttl = 1297000');
    expect(condition).toBe('nx = 5 AND kn = 3 AND size(fl) = 1 AND (attribute_not_exists(ttl) OR ttl > 1000)');
  });
});

describe('completionUpdate', () => {
  it('commits leases of a partition: out of fl into dn, counted, each on its own token; no index write', () => {
    const { update, condition } = render(
      completionUpdate('g', PARTITION, { complete: [{ seq: 4, token: '1.a' }, { seq: 5, token: '3.b' }], now: 99 }),
    );
    expect(update).toBe('SET dn.4 = 405508, dn.5 = 405516 REMOVE fl.4, fl.5 ADD cm 2');
    expect(condition).toBe('fl.4.k = "1.a" AND fl.5.k = "3.b"');
  });

  it('on a FIFO shard without a decision: ready now, unconditionally', () => {
    const { update, condition } = render(completionUpdate('g', SHARD, { complete: [{ seq: 4, token: '1.a' }], now: 99 }));
    expect(update).toBe(`SET dn.4 = 405508, g1pk = if_not_exists(rk, "R#g"), g1sk = "${readyNowKey(SHARD)}" REMOVE fl.4 ADD cm 1`);
    // A cursor past its ttl is absent: no commit (docs/design.md, Idle shards expire).
    expect(condition).toBe('fl.4.k = "1.a" AND (attribute_not_exists(ttl) OR ttl > 0)');
  });

  it('ready, guarded: only while known messages wait after nx', () => {
    const { condition } = render(
      completionUpdate('g', SHARD, { complete: [{ seq: 4, token: '1.a.r' }], now: 99, readiness: { readiness: 'ready', guarded: true } }),
    );
    expect(condition).toBe('fl.4.k = "1.a.r" AND (attribute_not_exists(ttl) OR ttl > 0) AND (attribute_not_exists(kn) OR kn >= nx)');
  });

  it('drop: off the index, only when nothing waits and no other lease is left', () => {
    const { update, condition } = render(
      completionUpdate('g', SHARD, { complete: [{ seq: 4, token: '1.a.d' }], now: 99, readiness: { readiness: 'drop', guarded: true } }),
    );
    expect(update).toBe('SET dn.4 = 405508 REMOVE fl.4, g1pk, g1sk ADD cm 1');
    expect(condition).toBe('fl.4.k = "1.a.d" AND (attribute_not_exists(ttl) OR ttl > 0) AND kn < nx AND size(fl) = 1 AND (attribute_not_exists(fq) OR size(fq) = 0)');
  });

  it('keep: no index write, only while other leases are left and the head lease is not a pending commit', () => {
    const { update, condition } = render(
      completionUpdate('g', SHARD, { complete: [{ seq: 4, token: '1.a.k' }], now: 99, readiness: { readiness: 'keep', guarded: true, head: 6 } }),
    );
    expect(update).toBe('SET dn.4 = 405508 REMOVE fl.4 ADD cm 1');
    expect(condition).toBe('fl.4.k = "1.a.k" AND (attribute_not_exists(ttl) OR ttl > 0) AND kn < nx AND (size(fl) > 1 OR size(fq) > 0) AND attribute_not_exists(fl.6.c)');
  });

  it('protected mode: marks leases pending, guarded by their tokens and the blocker still there', () => {
    const { update, condition } = render(
      completionUpdate('g', SHARD, {
        complete: [],
        markPending: [{ seq: 5, token: '1.p' }],
        blocker: { seq: 4, token: '1.b' },
        now: 99,
        readiness: { readiness: 'keep', guarded: true },
      }),
    );
    expect(update).toBe('SET fl.5.c = 1');
    expect(condition).toBe('fl.5.k = "1.p" AND fl.4.k = "1.b" AND (attribute_not_exists(ttl) OR ttl > 0) AND kn < nx AND (size(fl) > 0 OR size(fq) > 0)');
  });
});

describe('visibility', () => {
  it('tries, on a shard: keep an early enough entry, lower a later one, keep again, then ready now', () => {
    expect(visibilityVariants(PARTITION, 10, 5)).toEqual(['plain']);
    expect(visibilityVariants(SHARD, 10, 5)).toEqual(['keep', 'lower', 'keep', 'now']);
    expect(visibilityVariants(SHARD, 5, 5)).toEqual(['now']);
  });

  it('moves the expiry of the lease carrying the token, never of a pending commit', () => {
    const at = (variant: Parameters<typeof visibilityUpdate>[4]) => render(visibilityUpdate('g', SHARD, { seq: 4, token: '1.a' }, 30_000, variant));
    const base = 'fl.4.k = "1.a" AND attribute_not_exists(fl.4.c)';
    // On a shard, every variant also needs the cursor live (not past its ttl).
    const live = ' AND (attribute_not_exists(ttl) OR ttl > 0)';
    // On a shard every variant counts itself in `vv` (what a claim that passes commits is conditional on).
    expect(at('plain')).toEqual({ update: 'SET fl.4.e = 30000 REMOVE fl.4.r ADD vv 1', condition: `${base}${live}` });
    expect(at('keep')).toEqual({ update: 'SET fl.4.e = 30000 REMOVE fl.4.r ADD vv 1', condition: `${base} AND g1sk <= "0000000030000"${live}` });
    expect(at('lower')).toEqual({
      update: 'SET fl.4.e = 30000, g1pk = if_not_exists(rk, "R#g"), g1sk = "0000000030000" REMOVE fl.4.r ADD vv 1',
      condition: `${base} AND (attribute_not_exists(g1sk) OR g1sk > "0000000030000")${live}`,
    });
    expect(at('now')).toEqual({ update: `SET fl.4.e = 30000, g1pk = if_not_exists(rk, "R#g"), g1sk = "${readyNowKey(SHARD)}" REMOVE fl.4.r ADD vv 1`, condition: `${base}${live}` });
    expect(render(visibilityUpdate('g', PARTITION, { seq: 4, token: '1.a' }, 30_000, 'plain')).update).toBe('SET fl.4.e = 30000 REMOVE fl.4.r');
  });

  it('marks a release (the dead letter names it as the last failure), and clears the mark on a later extension', () => {
    expect(render(visibilityUpdate('g', PARTITION, { seq: 4, token: '1.a' }, 30_000, 'plain', true)).update).toBe('SET fl.4.e = 30000, fl.4.r = 1');
    expect(render(visibilityUpdate('g', PARTITION, { seq: 4, token: '1.a' }, 30_000, 'plain', false)).update).toBe('SET fl.4.e = 30000 REMOVE fl.4.r');
  });

  it('stores a released lease exactly as it reads it back, so a claim comparing whole lease maps still matches', () => {
    const item = { fl: { '4': { e: 30_000, k: '1.a', d: 2, g: 0, r: 1 }, '5': { e: 30_000, k: '1.b', d: 1, g: 0 } } };
    const { leases } = toState(item);
    expect(storedLease(leases.get(4)!)).toEqual(item.fl['4']);
    expect(storedLease(leases.get(5)!)).toEqual(item.fl['5']);
  });
});

describe('dead letters, notices, notice cursors', () => {
  const done = { seq: 4, token: '3.a', at: 9, outcome: 'dead-lettered' as const, deliveries: 3 };

  it('closes a dead-lettered lease on its token, unless it went pending; a shard becomes ready now', () => {
    expect(render(deadLetterUpdate('g', PARTITION, done, '3.a'))).toEqual({
      update: 'SET dn.4 = 36877 REMOVE fl.4 ADD dl 1',
      condition: 'fl.4.k = "3.a" AND attribute_not_exists(fl.4.c)',
    });
    expect(render(deadLetterUpdate('g', SHARD, done, '3.a')).update).toBe(
      `SET dn.4 = 36877, g1pk = if_not_exists(rk, "R#g"), g1sk = "${readyNowKey(SHARD)}" REMOVE fl.4 ADD dl 1`,
    );
  });

  it('raises the known head only upwards, on an existing cursor', () => {
    expect(render(raiseKnownUpdate('g', SHARD, 7, 1_000_000))).toEqual({
      update: `SET kn = 7, g1pk = "R#g", g1sk = "${readyNowKey(SHARD)}", ttl = 1297000 REMOVE rk`,
      condition: 'attribute_exists(pk) AND (attribute_not_exists(kn) OR kn < 7) AND (attribute_not_exists(ttl) OR ttl > 1000)',
    });
  });

  it('a raise puts the shard under the ready-index key of the notice stream that announced it (rk), whatever it had', () => {
    const bucket = 'R#g#t:ledger/n:9';
    expect(render(raiseKnownUpdate('g', SHARD, 7, 1_000_000, undefined, bucket)).update).toBe(
      `SET kn = 7, g1pk = "${bucket}", g1sk = "${readyNowKey(SHARD)}", ttl = 1297000, rk = "${bucket}"`,
    );
  });

  it('advances a notice cursor from the nx it read', () => {
    expect(render(advanceUpdate(3, 5, 4))).toEqual({ update: 'SET nx = 5, ns = 4', condition: 'nx = 3' });
  });
});

describe('seek', () => {
  const shard = 't:ledger/k:A';
  it('moves a shard cursor conditional on nx, the lease map and kn as read; ready now when kn reaches the target', () => {
    const fl = { '7': storedLease(lease(7, 't')) };
    const ready = seekMoveUpdate('g', shard, { nx: 8, fl, kn: 9 }, 3, 1, 5_000);
    expect(ready.UpdateExpression).toBe('SET nx = :to, ns = :ns, fl = :none, g1pk = if_not_exists(rk, :rk), g1sk = :rs ADD se :one');
    expect(ready.ConditionExpression).toBe('nx = :nx AND fl = :fl AND (attribute_not_exists(fq) OR size(fq) = :zero) AND kn = :kn AND (attribute_not_exists(#t) OR #t > :ls)');
    expect(ready.ExpressionAttributeValues).toMatchObject({ ':to': 3, ':ns': 1, ':none': {}, ':nx': 8, ':fl': fl, ':kn': 9, ':rs': readyNowKey(shard), ':ls': 5 });
    expect(ready.ExpressionAttributeNames).toEqual({ '#t': 'ttl' });
    const idle = seekMoveUpdate('g', shard, { nx: 8, fl: {}, kn: 9 }, 10, 10, 5_000);
    expect(idle.UpdateExpression).toBe('SET nx = :to, ns = :ns, fl = :none REMOVE g1pk, g1sk ADD se :one');
    expect(seekMoveUpdate('g', shard, { nx: 1, fl: {} }, 1, 1, 5_000).ConditionExpression).toBe(
      'nx = :nx AND fl = :fl AND (attribute_not_exists(fq) OR size(fq) = :zero) AND attribute_not_exists(kn) AND (attribute_not_exists(#t) OR #t > :ls)',
    );
  });

  it('moves a partition cursor without touching the ready index', () => {
    const update = seekMoveUpdate('g', 't:orders/p:0', { nx: 5, fl: undefined }, 1, 1, 5_000);
    expect(update.UpdateExpression).toBe('SET nx = :to, ns = :ns, fl = :none ADD se :one');
    expect(update.ConditionExpression).toBe('nx = :nx AND fl = :fl');
    expect(update.ExpressionAttributeNames).toBeUndefined();
    expect(update.ExpressionAttributeValues[':fl']).toEqual({});
  });

  it('counts the seek on notice cursors and records the floor; moves them only when told', () => {
    expect(noticeSeekUpdate({ next: 4, segmentStart: 4 }, 0)).toEqual({
      UpdateExpression: 'SET nx = :nx, ns = :ns, sf = :sf ADD sv :one',
      ConditionExpression: 'attribute_exists(pk)',
      ExpressionAttributeValues: { ':sf': 0, ':one': 1, ':nx': 4, ':ns': 4 },
    });
    expect(noticeSeekUpdate(undefined, 1234).UpdateExpression).toBe('SET sf = :sf ADD sv :one');
    expect(unsoughtSinceCondition(undefined)).toEqual({ ConditionExpression: 'attribute_not_exists(sv)' });
    expect(unsoughtSinceCondition(2)).toEqual({ ConditionExpression: 'sv = :sv', ExpressionAttributeValues: { ':sv': 2 } });
  });
});

describe('range claims (docs/design.md, Range claims)', () => {
  const grant = (extra: Partial<GrantChange> = {}) =>
    render(
      grantUpdate({
        id: 'R1',
        n: 10,
        expiresAt: 9000,
        nextAtMost: 40,
        plainLeases: 3,
        rangesAtMost: 8,
        seekEpoch: undefined,
        visibilityVersion: 2,
        readyKey: readyNowKey(SHARD),
        segmentStart: 11,
        now: 1_000_000,
        ...extra,
      }),
    );

  it('a grant takes nx by arithmetic, conditional only on what grants do not change', () => {
    const { update, condition } = grant();
    expect(update).toBe(`SET fr.R1 = nx, fq.R1 = {"n":10,"e":9000}, ns = 11, nl = 1, ttl = ${Math.ceil(1000) + Limits.retentionMaxSeconds + 86_400} ADD nx 10`);
    expect(condition).toBe(
      `attribute_not_exists(fr.R1) AND nx <= 40 AND attribute_not_exists(se) AND vv = 2 AND g1sk = ${JSON.stringify(readyNowKey(SHARD))} AND size(fl) <= 3 AND size(fq) <= 8 AND (attribute_not_exists(ttl) OR ttl > 1000)`,
    );
    expect(grant({ seekEpoch: 3, visibilityVersion: undefined }).condition).toContain('se = 3 AND attribute_not_exists(vv)');
  });

  it('a range is written out as leases on the range as read; a member without a record gets none', () => {
    const { update, condition } = render(normaliseUpdate({ id: 'R1', start: 20, n: 3 }, 9000, [lease(20, 't', { deliveries: 1 }), lease(22, 't', { deliveries: 0, expiresAt: 100 })], 1_000_000));
    expect(update).toBe('SET fl.20 = {"e":5000,"k":"t","d":1,"g":7}, fl.22 = {"e":100,"k":"t","d":0,"g":7} REMOVE fr.R1, fq.R1');
    expect(condition).toBe('fr.R1 = 20 AND fq.R1 = {"n":3,"e":9000} AND (attribute_not_exists(ttl) OR ttl > 1000)');
    expect(render(normaliseUpdate({ id: 'R1', start: 20, n: 3 }, 9000, [], 0)).update).toBe('REMOVE fr.R1, fq.R1');
  });

  it('a commit of a whole range removes it and completes every member in one entry, counted as leases by readiness', () => {
    const token = rangeToken({ id: 'R1', start: 20, n: 2 });
    const drop = render(completionUpdate('g', SHARD, { complete: [], ranges: [{ range: { id: 'R1', start: 20, n: 2 }, token }], now: 4096, readiness: { readiness: 'drop', guarded: true } }));
    // One entry for the range's completions: [at × 4096 + deliveries × 4 + committed, epoch, n].
    expect(drop.update).toBe(`SET dn.r20.0 = [${4096 * 4096 + 4},0,2] REMOVE fr.R1, fq.R1, g1pk, g1sk ADD cm 2`);
    expect(drop.condition).toContain('fr.R1 = 20 AND fq.R1.n = 2');
    expect(drop.condition).toContain('kn < nx AND size(fl) = 0 AND (attribute_not_exists(fq) OR size(fq) = 1)');
    const keep = render(completionUpdate('g', SHARD, { complete: [{ seq: 5, token: 'x' }], now: 4096, readiness: { readiness: 'keep', guarded: true } }));
    expect(keep.condition).toContain('kn < nx AND (size(fl) > 1 OR size(fq) > 0)');
  });

  it('a claim that compares the lease map compares the ranges as read', () => {
    const member = { ...lease(30, rangeToken({ id: 'R1', start: 30, n: 1 }), { deliveries: 1, expiresAt: 9000 }), range: { id: 'R1', start: 30, n: 1 } };
    const shard = { expectKnown: 50, expectInFlight: 2, known: 50, now: 1_000_000 };
    const withRange = claim({ shard: { ...shard, expectLeases: new Map([[8, lease(8, 'a')], [30, member]]) } });
    expect(withRange.condition).toContain('fl = {"8":{"e":5000,"k":"a","d":2,"g":7}} AND fq = {"R1":{"n":1,"e":9000}}');
    const none = claim({ shard: { ...shard, expectLeases: new Map([[8, lease(8, 'a')]]) } });
    expect(none.condition).toContain('(attribute_not_exists(fq) OR size(fq) = 0)');
  });

  it('a spill on its own removes the spilled completions and moves the mark, on the mark and seek epoch as read, not on nx', () => {
    const { update, condition } = render(spillUpdate({ expectMark: 40, mark: 90, remove: ['41', '42', 'r50.0'] }, 2, 1_000_000));
    expect(update).toBe('SET hw = 90 REMOVE dn.41, dn.42, dn.r50.0');
    expect(condition).toBe('hw = 40 AND se = 2 AND (attribute_not_exists(ttl) OR ttl > 1000)');
    expect(render(spillUpdate({ expectMark: undefined, mark: 9, remove: [] }, undefined, 0)).condition).toBe('attribute_not_exists(hw) AND attribute_not_exists(se) AND (attribute_not_exists(ttl) OR ttl > 0)');
  });

  it('range writes at their largest fit DynamoDB\'s 4 KB expressions (a range of 10, a full spill, a grant)', () => {
    const start = 1_796_438_485_000_001;
    const members = Array.from({ length: RANGE_MAX_MESSAGES }, (_, i) => lease(start + i, rangeToken({ id: 'R1abcdef', start, n: RANGE_MAX_MESSAGES }), { deliveries: 1 }));
    expect(fitsExpressionBudget(normaliseUpdate({ id: 'R1abcdef', start, n: RANGE_MAX_MESSAGES }, 9000, members, 0))).toBe(true);
    for (const readiness of [undefined, { readiness: 'ready' as const, guarded: true }, { readiness: 'drop' as const, guarded: true }, { readiness: 'keep' as const, guarded: true }]) {
      const change = { complete: [], ranges: [{ range: { id: 'R1abcdef', start, n: RANGE_MAX_MESSAGES }, token: members[0]!.token }], now: 1, ...(readiness ? { readiness } : {}) };
      expect(fitsExpressionBudget(completionUpdate('g', SHARD, change))).toBe(true);
    }
    // The most keys a spill removes: a chunk and stragglers each cut at their most, and each taken on
    // to the end of the runs they cut (history.ts wholeRuns, RUN_EXTENSION_MAX), every completion a key of its own.
    const remove = Array.from({ length: CHUNK_MAX_ENTRIES + STRAGGLERS_MAX + 2 * RUN_EXTENSION_MAX }, (_, i) => String(start + i));
    expect(fitsExpressionBudget(spillUpdate({ expectMark: start - 1, mark: start + CHUNK_MAX_ENTRIES, remove }, 3, 1))).toBe(true);
    expect(fitsExpressionBudget(grantUpdate({ id: 'R1abcdef', n: RANGE_MAX_MESSAGES, expiresAt: 1, nextAtMost: start, plainLeases: 99, rangesAtMost: 99, seekEpoch: 3, visibilityVersion: 9, readyKey: readyNowKey(SHARD), segmentStart: start, now: 1 }))).toBe(true);
  });

  it('a seek empties the range maps, as read', () => {
    const { update, condition } = render(seekMoveUpdate('g', SHARD, { nx: 40, fl: {}, fq: { R1: { n: 10, e: 9000 } }, kn: 45 }, 1, 1, 1_000_000));
    expect(update).toContain('fr = {}, fq = {}');
    expect(condition).toContain('fq = {"R1":{"n":10,"e":9000}}');
  });

  it('a range reads as leases of a first delivery, with one token naming it, and is stored back as the range', () => {
    const item = { pk: 'C#g', sk: SHARD, nx: 23, ns: 11, fl: {}, dn: {}, cm: 0, dl: 0, fr: { R1: 20 }, fq: { R1: { n: 3, e: 9000 } }, se: 2 };
    const state = toState(item);
    expect([...state.leases.keys()]).toEqual([20, 21, 22]);
    const member = state.leases.get(21)!;
    expect(member).toMatchObject({ deliveries: 1, expiresAt: 9000, segment: UNKNOWN_SEGMENT, range: { id: 'R1', start: 20, n: 3 } });
    expect(member.token).toBe('1.R1*20*3~2');
    expect(rangeOfToken(member.token)).toEqual({ id: 'R1', start: 20, n: 3 });
    expect(rangeOfToken('1.abc~2')).toBeUndefined();
    expect(rangesOf(state)).toEqual([{ id: 'R1', start: 20, n: 3, expiresAt: 9000 }]);
    expect(toItem(state)).toMatchObject({ fl: {}, fr: { R1: 20 }, fq: { R1: { n: 3, e: 9000 } } });
  });
});
