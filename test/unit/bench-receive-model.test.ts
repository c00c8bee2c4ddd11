/**
 * The receive rows' arithmetic and attribution (issue 19 item 3): the capacity units a call counts on
 * (bench/key-units.ts), the meter's per-unit counters (bench/meter.ts), the bounds and the ceiling
 * (bench/capacity-model.ts) and a row from a window (bench/scale-receive.ts).
 */
import { metered } from '../helpers/metered-client.js';
import { describe, expect, it } from 'vitest';
import { fifoReceiveCeiling, receiveCeiling, spreadReceiveCeiling, unitBounds, type UnitLoad } from '../../bench/capacity-model.js';
import { indexKeyOfItem, indexWrites, isClaimUpdate, isRaiseUpdate, queryUnit, tableUnit, unitKind } from '../../bench/key-units.js';
import { Meter, diff, emptyKey, type Snapshot } from '../../bench/meter.js';
import { RECEIVE_TOPICS, backlogTarget, consumersOf, fifoUnitPlace, isCatalogUnit, isHorizonUnit, isSteady, isStreamUnit, partitionOfUnit, receiveRow, steadyProducers, unitLoads } from '../../bench/scale-receive.js';
import { advanceUpdate, claimUpdate, completionUpdate, raiseKnownUpdate } from '../../lib/adapters/dynamodb/cursor-updates.js';

const unit = (over: Partial<UnitLoad>): UnitLoad => ({ unit: 'C#g @ t:x/p:0', kind: 'item', wcu: 0, rcu: 0, reads: 0, claims: 0, lostClaims: 0, ...over });

describe('unitBounds', () => {
  it('divides the per-partition limits by the units each message costs on the unit, failed writes included', () => {
    // 100 messages; 60 claims + 20 lost (1 WCU each) and 100 commits of 1 WCU: 180 WCU; 80 reads of 1 RCU.
    const b = unitBounds(unit({ wcu: 180, rcu: 80, reads: 80, claims: 60, lostClaims: 20 }), 100, 7.5);
    expect(b['write units']).toBeCloseTo(1000 / 1.8, 9);
    expect(b['read units']).toBeCloseTo(3000 / 0.8, 9);
    // Every attempt read first: chain of 2 calls → 66.67 claims/s, at 0.6 claims per message.
    expect(b.chainCalls).toBe(2);
    expect(b['claim chain']).toBeCloseTo(1000 / 15 / 0.6, 9);
  });

  it('counts the reads a claim made: a cached cursor (no read) makes a chain of one call, batches many messages per claim', () => {
    const b = unitBounds(unit({ wcu: 10, claims: 10 }), 100, 5);
    expect(b.chainCalls).toBe(1);
    expect(b['claim chain']).toBeCloseTo((1000 / 5) * 10, 9);
    expect(b['read units']).toBe(Number.POSITIVE_INFINITY);
    // Half the attempts read: 1.5 calls.
    expect(unitBounds(unit({ claims: 8, lostClaims: 2, reads: 5 }), 10, 10).chainCalls).toBeCloseTo(1.5, 9);
  });

  it('has no chain bound on keys and index keys, only units', () => {
    const b = unitBounds(unit({ unit: 'gsi1 R#g', kind: 'index key', wcu: 50, claims: 0 }), 100, 7.5);
    expect(b['claim chain']).toBe(Number.POSITIVE_INFINITY);
    expect(b['write units']).toBeCloseTo(2000, 9);
    expect(unitBounds(unit({ unit: 'S#s', kind: 'table key', claims: 3, rcu: 3 }), 3, 7.5)['claim chain']).toBe(Number.POSITIVE_INFINITY);
  });

  it('refuses a row without messages or a call time', () => {
    expect(() => unitBounds(unit({ wcu: 1 }), 0, 5)).toThrow();
    expect(() => unitBounds(unit({ wcu: 1 }), 1, 0)).toThrow();
  });
});

describe('receiveCeiling', () => {
  it('is the smallest bound over every unit, naming the unit, its kind and the bound', () => {
    const loads = [
      // The hot shard's cursor: 10 claims (2 calls each) for 100 messages → 666.7 msg/s by the chain.
      unit({ unit: 'C#g @ t:x/k:hot', wcu: 20, reads: 10, claims: 10 }),
      // Its segments: 100 messages read at 40 RCU → 7,500 msg/s.
      unit({ unit: 'S#t:x/k:hot', kind: 'table key', rcu: 40, reads: 10 }),
      // The ready index: 4 WCU per 100 messages → 25,000 msg/s.
      unit({ unit: 'gsi1 R#g', kind: 'index key', wcu: 4 }),
    ];
    expect(receiveCeiling(loads, 100, 7.5)).toEqual({ unit: 'C#g @ t:x/k:hot', kind: 'item', limitedBy: 'claim chain', msgPerSecond: expect.closeTo(1000 / 15 / 0.1, 6) });
    // Big segments read per message: the stream key's read units limit first.
    expect(receiveCeiling([...loads, unit({ unit: 'S#t:x/k:hot', kind: 'table key', rcu: 2500 })], 100, 7.5)).toMatchObject({ unit: 'S#t:x/k:hot', limitedBy: 'read units', msgPerSecond: 120 });
  });

  it('is undefined without messages or a limiting unit', () => {
    expect(receiveCeiling([unit({ wcu: 1 })], 0, 5)).toBeUndefined();
    expect(receiveCeiling([], 10, 5)).toBeUndefined();
  });
});

describe('capacity units of a call (key-units.ts)', () => {
  it('counts a cursor per item, any other table key per key, an index key per key', () => {
    expect(tableUnit('C#g', 't:x/p:3')).toBe('C#g @ t:x/p:3');
    expect(tableUnit('S#t:x/p:3', '0000000000000001')).toBe('S#t:x/p:3');
    expect(unitKind('C#g @ t:x/p:3')).toBe('item');
    expect(unitKind('S#t:x/p:3')).toBe('table key');
    expect(unitKind('gsi1 R#g')).toBe('index key');
    expect(queryUnit({ KeyConditionExpression: 'pk = :pk AND sk >= :from', ExpressionAttributeValues: { ':pk': 'S#t:x/p:0' } })).toBe('S#t:x/p:0');
    expect(queryUnit({ IndexName: 'gsi1', KeyConditionExpression: '#p = :p AND g1sk <= :now', ExpressionAttributeNames: { '#p': 'g1pk' }, ExpressionAttributeValues: { ':p': { S: 'R#g' } } })).toBe('gsi1 R#g');
  });

  it('tells a claim from the notice advance, a commit and a raise, as cursor-updates.ts builds them', () => {
    const key = { pk: 'C#g', sk: 't:x/k:a' };
    const claim = claimUpdate('g', { expectNext: 5, next: 6, segmentStart: 5, grant: [], close: [], forgetDone: [], shard: { expectKnown: 5, expectInFlight: 0, known: 6, now: 1_000, index: { from: 'x', to: undefined } } });
    expect(isClaimUpdate({ Key: key, ...claim })).toBe(true);
    expect(isClaimUpdate({ Key: key, ...claimUpdate('g', { expectNext: 5, next: 6, segmentStart: 5, grant: [], close: [], forgetDone: [] }) })).toBe(true);
    expect(isClaimUpdate({ Key: key, ...advanceUpdate(5, 9, 5) })).toBe(false);
    expect(isClaimUpdate({ Key: key, ...completionUpdate('g', 't:x/k:a', { complete: [{ seq: 5, token: '1.abc.k' }], now: 1_000 }) })).toBe(false);
    expect(isClaimUpdate({ Key: key, ...raiseKnownUpdate('g', 't:x/k:a', 9, 1_000) })).toBe(false);
    expect(isRaiseUpdate({ ...raiseKnownUpdate('g', 't:x/k:a', 9, 1_000) })).toBe(true);
    expect(isRaiseUpdate({ ...claim })).toBe(false);
    expect(isRaiseUpdate({ ...advanceUpdate(5, 9, 5) })).toBe(false);
  });

  it('finds the index key an update writes: a SET of g1pk, or a REMOVE on a cursor (its group\'s ready index)', () => {
    const key = { pk: 'C#g', sk: 't:x/k:a' };
    const commit = indexWrites({ Key: key, ...completionUpdate('g', 't:x/k:a', { complete: [{ seq: 5, token: '1.abc.k' }], now: 1_000 }) });
    expect(commit).toEqual({ set: 'R#g', fromItem: 'set' });
    const claim = indexWrites({ Key: key, ...claimUpdate('g', { expectNext: 5, next: 6, segmentStart: 5, grant: [], close: [], forgetDone: [], shard: { expectKnown: 5, expectInFlight: 0, known: 6, now: 1_000, index: { from: 'x', to: undefined } } }) });
    expect(claim).toEqual({ removed: 'R#g', fromItem: 'removed' });
    expect(indexWrites({ Key: key, ...advanceUpdate(5, 9, 5) })).toEqual({});
    // `if_not_exists(rk, :home)`: the cursor decides. A wide FIFO topic's cursor is on its bucket.
    const bucket = 'R#g#t:x/n:9';
    expect(indexKeyOfItem(commit, { ...key, rk: bucket, g1pk: bucket })).toBe(bucket);
    expect(indexKeyOfItem(commit, { ...key, g1pk: 'R#g' })).toBe('R#g');
    expect(indexKeyOfItem(claim, { ...key, rk: bucket })).toBe(bucket);
    expect(indexKeyOfItem(claim, { ...key })).toBeUndefined(); // no rk: the request's R#g stands
    expect(indexKeyOfItem({ set: 'R#g' }, { ...key, g1pk: bucket })).toBeUndefined(); // an explicit key needs no item
  });
});


describe('Meter: units per capacity unit', () => {
  const key = { pk: 'C#g', sk: 't:x/k:a' };
  const claim = claimUpdate('g', { expectNext: 5, next: 6, segmentStart: 5, grant: [], close: [], forgetDone: [], shard: { expectKnown: 5, expectInFlight: 0, known: 6, now: 1_000, index: { from: 'x', to: undefined } } });

  it('puts a claim\'s table units on the cursor item and its index units on the ready index key', async () => {
    const { meter, send } = metered();
    const before = meter.snapshot();
    await send('UpdateItemCommand', { TableName: 'b', Key: key, ...claim }, () => ({ ConsumedCapacity: { CapacityUnits: 3, Table: { CapacityUnits: 1 }, GlobalSecondaryIndexes: { gsi1: { CapacityUnits: 2 } } } }));
    const counted = diff(meter.snapshot(), before);
    expect(counted.keys['t|C#g @ t:x/k:a']).toEqual({ ...emptyKey(), wcu: 1, writes: 1, claims: 1 });
    expect(counted.keys['t|gsi1 R#g']).toEqual({ ...emptyKey(), wcu: 2 });
  });

  it('counts a failed claim as a lost claim billed at the old image\'s size, or 1 WCU without one', async () => {
    const { meter, send } = metered();
    const fail = (item?: Record<string, unknown>) => () => {
      throw Object.assign(new Error('failed'), { name: 'ConditionalCheckFailedException', ...(item ? { Item: item } : {}) });
    };
    await expect(send('UpdateItemCommand', { Key: key, ...claim }, fail({ pk: { S: 'C#g' }, sk: { S: 't:x/k:a' }, pad: { S: 'x'.repeat(2500) } }))).rejects.toThrow();
    await expect(send('UpdateItemCommand', { Key: key, ...claim }, fail())).rejects.toThrow();
    expect(meter.snapshot().keys['t|C#g @ t:x/k:a']).toEqual({ ...emptyKey(), wcu: 3 + 1, failedWrites: 2, lostClaims: 2 });
  });

  it('sizes a failed claim without an old image by the item read right after it (uncounted), when the meter has a reader', async () => {
    const { meter, send } = metered();
    const reads: unknown[] = [];
    meter.readItemsWith(async (table, k) => {
      reads.push({ table, k });
      return { pk: { S: 'C#g' }, sk: { S: 't:x/k:a' }, fl: { S: 'x'.repeat(3000) } };
    });
    const fail = () => {
      throw Object.assign(new Error('failed'), { name: 'ConditionalCheckFailedException' });
    };
    await expect(send('UpdateItemCommand', { TableName: 'bench', Key: key, ...claim }, fail)).rejects.toThrow();
    expect(meter.snapshot().keys['t|C#g @ t:x/k:a']).toEqual({ ...emptyKey(), wcu: 3, failedWrites: 1, lostClaims: 1 });
    expect(reads).toEqual([{ table: 'bench', k: { pk: { S: 'C#g' }, sk: { S: 't:x/k:a' } } }]);
  });

  it('bills each item of a BatchGetItem by its size, the minimum for an item not found, and a Query to the key it reads', async () => {
    const { meter, send } = metered();
    const a = { pk: 'C#g', sk: 't:x/p:0' };
    const b = { pk: 'C#g', sk: 't:x/p:1' };
    await send('BatchGetItemCommand', { RequestItems: { bench: { Keys: [a, b], ConsistentRead: true } } }, () => ({
      Responses: { bench: [{ ...a, pad: 'x'.repeat(5000) }] },
      ConsumedCapacity: [{ TableName: 'bench', CapacityUnits: 3 }],
    }));
    await send('QueryCommand', { IndexName: 'gsi1', KeyConditionExpression: 'g1pk = :pk AND g1sk <= :now', ExpressionAttributeValues: { ':pk': 'R#g', ':now': '9' } }, () => ({ Items: [], ConsumedCapacity: { CapacityUnits: 0 } }));
    const s = meter.snapshot();
    expect(s.keys['t|C#g @ t:x/p:0']).toMatchObject({ rcu: 2, reads: 1, consistentReads: 1 });
    expect(s.keys['t|C#g @ t:x/p:1']).toMatchObject({ rcu: 1, reads: 1 });
    expect(s.keys['t|gsi1 R#g']).toMatchObject({ rcu: 0.5, reads: 1, consistentReads: 0 });
  });
});

describe('receiveRow', () => {
  const snapshot = (keys: Snapshot['keys'], calls: number): Snapshot => ({
    dynamo: { 'rx|POST /v1/groups/{name}/receive|UpdateItem': { calls, errors: 0, conditionalFailures: 0, retries: 0, wruTable: 0, wruGsi: 0, rru: 0, wruFailedModel: 0, rruMinModel: 0, unreported: 0, itemsRead: 0, itemsWritten: 0, bytesPut: 0, ms: calls * 8 } },
    keys,
    streams: {},
    http: {},
    other: {},
    check: { compared: 0, agreed: 0, samples: [] },
  });

  it('takes lost claims, requests and units per message received, and the ceiling from the tag\'s units only', () => {
    const counted = snapshot(
      {
        'rx|C#g @ t:x/k:hot': { ...emptyKey(), wcu: 30, writes: 25, failedWrites: 5, reads: 15, consistentReads: 15, claims: 10, lostClaims: 5 },
        'rx|S#t:x/k:hot': { ...emptyKey(), rcu: 10, reads: 10 },
        'other|C#g @ t:x/k:hot': { ...emptyKey(), wcu: 1e6, claims: 1e6 },
      },
      60,
    );
    const row = receiveRow({ id: 'r', topic: 'fifo-hot', batch: 10, consumers: 4, commits: 'call' }, counted, 'rx', 2, { messages: 100, committed: 100, receives: 12, emptyReceives: 2, backlogBefore: 900, ranDry: false, errors: {} }, 7.5);
    expect(row.lostClaimsPerMessage).toBeCloseTo(0.05, 9);
    expect(row.lostClaimsPerClaim).toBeCloseTo(0.5, 9);
    expect(row.requestsPerMessage).toBeCloseTo(0.6, 9);
    expect(row.wcuPerMessage).toBeCloseTo(0.3, 9);
    expect(row.rcuPerMessage).toBeCloseTo(0.1, 9);
    // Chain: 15 reads / 15 attempts → 2 calls; 0.1 claims per message → 666.7 msg/s; writes 3,333; reads 30,000.
    expect(row).toMatchObject({ limitedBy: 'claim chain', hottestKey: 'C#g @ t:x/k:hot', hottestKeyKind: 'item', unitsTouched: 2, localMsgPerSecond: 50, msPerCall: 8 });
    expect(row.awsCeilingMsgPerSecond).toBeCloseTo(1000 / 15 / 0.1, 6);
    expect(row.topUnits.map((u) => u.unit)).toEqual(['C#g @ t:x/k:hot', 'S#t:x/k:hot']);
    expect(unitLoads(counted, 'rx')).toHaveLength(2);
  });

  it('sums the buckets and notice streams on a topic over many shards, keeps the hottest unit apart, and counts raises per message', () => {
    const counted = snapshot(
      {
        ...Object.fromEntries(Array.from({ length: 16 }, (_, b) => [`rx|gsi1 R#g#${b}`, { ...emptyKey(), wcu: b < 8 ? 15 : 5 }])),
        'rx|C#g @ t:x/k:k1': { ...emptyKey(), wcu: 4, claims: 2, raises: 1 },
        'rx|C#g @ t:x/k:k2': { ...emptyKey(), wcu: 4, claims: 2, raises: 2 },
      },
      60,
    );
    const run = { messages: 100, committed: 100, receives: 100, emptyReceives: 0, backlogBefore: 0, ranDry: false, errors: {}, sent: 120 };
    const row = receiveRow({ id: 'r', topic: 'fifo-many-p256-steady', batch: 1, consumers: 4, commits: 'call' }, counted, 'rx', 2, run, 7.5);
    // 16 buckets, 160 WCU per 100 messages: 16 × 1,000 ÷ 1.6; the hottest bucket alone 1,000 ÷ 0.15.
    expect(row).toMatchObject({ model: 'buckets and notice streams summed', hottestKey: '16 ready-index buckets summed', limitedBy: 'write units', raises: 3, raisesPerMessage: 0.03, sent: 120 });
    expect(row.awsCeilingMsgPerSecond).toBeCloseTo(10_000, 6);
    expect(row.hottestUnitCeilingMsgPerSecond).toBeCloseTo(1000 / 0.15, 6);
    expect(receiveRow({ id: 'r', topic: 'fifo-hot', batch: 1, consumers: 4, commits: 'call' }, counted, 'rx', 2, run, 7.5)).toMatchObject({ model: 'hottest unit', awsCeilingMsgPerSecond: expect.closeTo(1000 / 0.15, 6) });
  });

  it('leaves the catalog items out of the ceiling (read per container and cache period) and reports their reads per consumer a second', () => {
    const cursor = { ...emptyKey(), wcu: 30, writes: 25, failedWrites: 5, reads: 15, consistentReads: 15, claims: 10, lostClaims: 5 };
    const run = { messages: 100, committed: 100, receives: 12, emptyReceives: 2, backlogBefore: 900, ranDry: false, errors: {} };
    const without = receiveRow({ id: 'r', topic: 'fifo-hot', batch: 10, consumers: 4, commits: 'call' }, snapshot({ 'rx|C#g @ t:x/k:hot': cursor }, 60), 'rx', 2, run, 7.5);
    // Catalog reads of the group item (600 RCU) and the topic item (8): per message, the group item
    // alone would bound the row at 3,000 ÷ 6 = 500 msg/s, below the cursor's chain (666.7).
    const counted = snapshot({ 'rx|C#g @ t:x/k:hot': cursor, 'rx|GROUP': { ...emptyKey(), rcu: 600, reads: 1200 }, 'rx|TOPIC': { ...emptyKey(), rcu: 8, reads: 16 } }, 60);
    const row = receiveRow({ id: 'r', topic: 'fifo-hot', batch: 10, consumers: 4, commits: 'call' }, counted, 'rx', 2, run, 7.5);
    expect(row.awsCeilingMsgPerSecond).toBeCloseTo(without.awsCeilingMsgPerSecond, 9);
    expect(row.sharedUnitsCeilingMsgPerSecond).toBe(without.sharedUnitsCeilingMsgPerSecond);
    expect(row.topUnits.map((u) => u.unit)).toEqual(['C#g @ t:x/k:hot']);
    // Still paid for: 608 RCU more per 100 messages; 608 RCU ÷ 2 s ÷ 4 consumers.
    expect(row.rcuPerMessage).toBeCloseTo(without.rcuPerMessage + 6.08, 9);
    expect(row.catalogRcuPerConsumerSecond).toBeCloseTo(76, 9);
    expect(isCatalogUnit('GROUP')).toBe(true);
    expect(isCatalogUnit('S#t:x/k:GROUP')).toBe(false);
  });

  it('leaves a group\'s ready-index horizon out of the ceiling (written per container and minute, not per message)', () => {
    const cursor = { ...emptyKey(), wcu: 30, writes: 25, failedWrites: 5, reads: 15, consistentReads: 15, claims: 10, lostClaims: 5 };
    const run = { messages: 100, committed: 100, receives: 12, emptyReceives: 2, backlogBefore: 900, ranDry: false, errors: {} };
    const base = { id: 'r', topic: 'fifo-hot', batch: 10, consumers: 64, commits: 'call' } as const;
    const without = receiveRow(base, snapshot({ 'rx|C#g @ t:x/k:hot': cursor }, 60), 'rx', 2, run, 7.5);
    // 64 containers covering ten times each (a row of ten minutes): per message that would bound the row
    // at 1,000 ÷ 6.4 ≈ 156 msg/s, below the cursor's chain.
    const row = receiveRow(base, snapshot({ 'rx|C#g @ t:x/k:hot': cursor, 'rx|I#g': { ...emptyKey(), wcu: 640, writes: 640 } }, 60), 'rx', 2, run, 7.5);
    expect(row.awsCeilingMsgPerSecond).toBeCloseTo(without.awsCeilingMsgPerSecond, 9);
    expect(row.topUnits.map((u) => u.unit)).toEqual(['C#g @ t:x/k:hot']);
    expect(isHorizonUnit('I#g')).toBe(true);
    expect(isHorizonUnit('S#t:x/k:I#g')).toBe(false);
  });

  it('reports nothing measured when nothing was received', () => {
    const row = receiveRow({ id: 'r', topic: 'fifo-hot', batch: 1, consumers: 1, commits: 'call' }, snapshot({}, 3), 'rx', 1, { messages: 0, committed: 0, receives: 3, emptyReceives: 3, backlogBefore: 0, ranDry: true, errors: {} }, 7.5);
    expect(row).toMatchObject({ awsCeilingMsgPerSecond: 0, limitedBy: 'nothing measured', requestsPerMessage: 0, ranDry: true });
  });
});

describe('backlogTarget', () => {
  it('fills twice the row at the expected rate plus two rounds of every consumer\'s batch, at least 500, at most the profile\'s bound', () => {
    expect(backlogTarget(1000, 4, 1, 1, 60_000)).toBe(8002);
    expect(backlogTarget(10, 1.5, 1, 1, 60_000)).toBe(500);
    // 64 consumers × 10: the row stops as ran dry below 640 left, so 1,280 on top of the expected 660.
    expect(backlogTarget(220, 1.5, 64, 10, 60_000)).toBe(660 + 1280);
    expect(backlogTarget(1e6, 4, 64, 10, 60_000)).toBe(60_000);
    // A row that runs on until it counted its floor of messages has them and two rounds more waiting.
    expect(backlogTarget(10, 4, 1, 1, 60_000, 600)).toBe(602);
    expect(backlogTarget(10, 4, 64, 10, 60_000, 200)).toBe(1480);
  });
});

describe('spreadReceiveCeiling (standard topics: consumers choose the partition)', () => {
  it('sums what every partition that took claims takes alone, where the hottest unit alone says less', () => {
    // 100 messages, 100 claims over 4 partitions (70/10/10/10), 1 call per claim (cached cursors), 2 WCU per claim.
    const loads = [70, 10, 10, 10].map((claims, p) => unit({ unit: `C#g @ t:a/p:${p}`, claims, wcu: 2 * claims }));
    const c = spreadReceiveCeiling(loads, 100, 7.5, partitionOfUnit);
    // Each partition alone: chain 133.3 claims/s, write bound 500 claims/s → 133.3; × 4.
    expect(c?.msgPerSecond).toBeCloseTo((4 * 1000) / 7.5, 9);
    expect(c).toMatchObject({ limitedBy: 'claim chain', partitions: 4, unit: '4 partitions summed' });
    expect(receiveCeiling(loads, 100, 7.5)?.msgPerSecond).toBeCloseTo(1000 / 7.5 / 0.7, 9);
  });

  it('keeps a partition\'s own units together (its S# key) and lets a shared unit limit when smaller; partitions without claims count nothing', () => {
    const loads = [
      unit({ unit: 'C#g @ t:a/p:0', claims: 50, wcu: 50 }),
      // p:1's segments cost 30 RCU per claim: 3,000 / (1,500 / 100) = 200 msg/s at its share, 400 alone.
      unit({ unit: 'C#g @ t:a/p:1', claims: 50, wcu: 50 }),
      unit({ unit: 'S#t:a/p:1', kind: 'table key', rcu: 1500 }),
      unit({ unit: 'C#g @ t:a/p:2', reads: 5, rcu: 5 }),
    ];
    const c = spreadReceiveCeiling(loads, 100, 7.5, partitionOfUnit);
    // Each partition's smallest bound at its measured share (0.5 of the claims), times that share: what it takes alone.
    const p0 = Math.min(1000 / 7.5 / 0.5, 1000 / 0.5) * 0.5;
    const p1 = Math.min(1000 / 7.5 / 0.5, 3000 / 15) * 0.5;
    expect(c?.msgPerSecond).toBeCloseTo(p0 + p1, 9);
    expect(c?.partitions).toBe(2);
    // A shared unit limits the topic only when it takes less than the sum (233.3 here).
    expect(spreadReceiveCeiling([...loads, unit({ unit: 'A#a', kind: 'table key', rcu: 100 })], 100, 7.5, partitionOfUnit)).toMatchObject({ unit: '2 partitions summed', msgPerSecond: expect.closeTo(p0 + p1, 9) });
    expect(spreadReceiveCeiling([...loads, unit({ unit: 'A#a', kind: 'table key', rcu: 2000 })], 100, 7.5, partitionOfUnit)).toMatchObject({ unit: 'A#a', limitedBy: 'read units', msgPerSecond: 150 });
  });

  it('names the partition of cursor items and stream keys of partitions only', () => {
    expect(partitionOfUnit('C#g @ t:a/p:12')).toBe('t:a/p:12');
    expect(partitionOfUnit('S#t:a/p:12')).toBe('t:a/p:12');
    expect(partitionOfUnit('C#g @ t:a/n:3')).toBeUndefined();
    expect(partitionOfUnit('gsi1 R#g')).toBeUndefined();
    expect(partitionOfUnit('A#a')).toBeUndefined();
  });
});

describe('consumersOf', () => {
  it('adds the wide consumer counts to the 256-partition standard topic only, up to its partitions', () => {
    const profile = { consumers: [1, 4, 16, 64], wideConsumers: [256, 512] };
    expect(consumersOf('standard-p256', profile)).toEqual([1, 4, 16, 64, 256]);
    expect(consumersOf('standard-p64', profile)).toEqual([1, 4, 16, 64]);
    expect(consumersOf('fifo-many-p256', profile)).toEqual([1, 4, 16, 64]);
    expect(consumersOf('fifo-many-p256-steady', profile)).toEqual([1, 4, 16, 64]);
  });
});

describe('steady rows', () => {
  it('are a receive topic of their own, fed by a producer of few loops (⌈consumers ÷ 8⌉, at most 4)', () => {
    expect(RECEIVE_TOPICS).toContain('fifo-many-p256-steady');
    expect(RECEIVE_TOPICS.filter(isSteady)).toEqual(['fifo-many-p256-steady']);
    expect([1, 4, 8, 9, 16, 17, 64, 256].map(steadyProducers)).toEqual([1, 1, 1, 2, 2, 3, 4, 4]);
  });
});

describe('isStreamUnit', () => {
  it('tells a partition’s or a shard’s own units from those every stream shares', () => {
    expect(isStreamUnit('C#g @ t:x/p:12')).toBe(true);
    expect(isStreamUnit('C#g @ t:x/k:order-7')).toBe(true);
    expect(isStreamUnit('S#t:x/k:order-7')).toBe(true);
    expect(isStreamUnit('S#t:x/p:0')).toBe(true);
    expect(isStreamUnit('C#g @ t:x/n:3')).toBe(false);
    expect(isStreamUnit('S#t:x/n:3')).toBe(false);
    expect(isStreamUnit('gsi1 R#g#5')).toBe(false);
    expect(isStreamUnit('A#x')).toBe(false);
  });
});

describe('fifoReceiveCeiling (FIFO topics over many shards: buckets and notice streams summed)', () => {
  const bucket = (n: number, over: Partial<UnitLoad>) => unit({ unit: `gsi1 R#g#${n}`, kind: 'index key', ...over });

  it('sums 16 ready-index buckets with uneven sample loads: 16 × the per-key limit ÷ the buckets\' total units per message', () => {
    // 100 messages; bucket b took b + 1 WCU (1 … 16, 136 in all): the hottest alone says 1,000 ÷ 0.16.
    const loads = Array.from({ length: 16 }, (_, b) => bucket(b, { wcu: b + 1, rcu: 1, reads: 2 }));
    const c = fifoReceiveCeiling(loads, 100, 7.5, fifoUnitPlace);
    expect(c?.msgPerSecond).toBeCloseTo((16 * 1000) / (136 / 100), 6);
    expect(c).toMatchObject({ unit: '16 ready-index buckets summed', kind: 'index key', limitedBy: 'write units', buckets: 16, noticeStreams: 0 });
    expect(receiveCeiling(loads, 100, 7.5)?.msgPerSecond).toBeCloseTo(1000 / 0.16, 6);
    // Read units summed the same way: 16 buckets of 100 RCU each per 100 messages → 16 × 3,000 ÷ 16.
    expect(fifoReceiveCeiling(Array.from({ length: 16 }, (_, b) => bucket(b, { rcu: 100 })), 100, 7.5, fifoUnitPlace)).toMatchObject({ limitedBy: 'read units', msgPerSecond: expect.closeTo(3000, 6) });
  });

  it('lets a shared unit bind below the sum, and leaves the shard streams\' own units out', () => {
    const loads = [
      ...Array.from({ length: 16 }, (_, b) => bucket(b, { wcu: 10 })),
      // The sample's hottest shard: its cursor's chain says 1,000 ÷ 15 ÷ 0.05 = 1,333 msg/s, its segments 3,000 ÷ 0.5.
      unit({ unit: 'C#g @ t:x/k:k7', wcu: 10, reads: 5, claims: 5 }),
      unit({ unit: 'S#t:x/k:k7', kind: 'table key', rcu: 50 }),
    ];
    // Buckets: 16 × 1,000 ÷ 1.6 = 10,000; the group's home key, read by every receive: 3,000 ÷ 0.6 = 5,000.
    const withHome = [...loads, unit({ unit: 'gsi1 R#g', kind: 'index key', rcu: 60, reads: 120 })];
    expect(fifoReceiveCeiling(loads, 100, 7.5, fifoUnitPlace)).toMatchObject({ unit: '16 ready-index buckets summed', msgPerSecond: expect.closeTo(10_000, 6) });
    expect(fifoReceiveCeiling(withHome, 100, 7.5, fifoUnitPlace)).toMatchObject({ unit: 'gsi1 R#g', kind: 'index key', limitedBy: 'read units', msgPerSecond: expect.closeTo(5000, 6), buckets: 16 });
    expect(receiveCeiling(withHome, 100, 7.5)).toMatchObject({ unit: 'C#g @ t:x/k:k7', limitedBy: 'claim chain' });
  });

  it('sums the notice streams as partitions: a stream\'s S# key and notice cursor together, at its share of the notice streams\' units', () => {
    // 4 notice streams, loads 4:2:1:1; each stream's S# key 3 RCU and its cursor 1 WCU per unit of load, 100 messages.
    const loads = [4, 2, 1, 1].flatMap((n, b) => [unit({ unit: `S#t:x/n:${b}`, kind: 'table key', rcu: 3 * n }), unit({ unit: `C#g @ t:x/n:${b}`, wcu: n })]);
    const c = fifoReceiveCeiling(loads, 100, 7.5, fifoUnitPlace);
    // Each stream alone: min(3,000 ÷ 0.03n, 1,000 ÷ 0.01n) × n ÷ 8 = 100,000 ÷ 8; four of them: 50,000 (the hottest alone: 25,000).
    expect(c).toMatchObject({ unit: '4 notice streams summed', noticeStreams: 4, buckets: 0, msgPerSecond: expect.closeTo(50_000, 6) });
    expect(receiveCeiling(loads, 100, 7.5)?.msgPerSecond).toBeCloseTo(25_000, 6);
  });

  it('is undefined without messages or units that bound', () => {
    expect(fifoReceiveCeiling([bucket(0, { wcu: 1 })], 0, 7.5, fifoUnitPlace)).toBeUndefined();
    expect(fifoReceiveCeiling([unit({ unit: 'C#g @ t:x/k:a', claims: 1, wcu: 1 })], 10, 7.5, fifoUnitPlace)).toBeUndefined();
  });

  it('places units: buckets, notice streams by stream, shard streams, shared', () => {
    expect(fifoUnitPlace('gsi1 R#g#5')).toEqual({ kind: 'bucket' });
    expect(fifoUnitPlace('gsi1 R#g#63')).toEqual({ kind: 'bucket' });
    expect(fifoUnitPlace('gsi1 R#g')).toEqual({ kind: 'shared' });
    expect(fifoUnitPlace('S#t:x/n:3')).toEqual({ kind: 'notice stream', stream: 't:x/n:3' });
    expect(fifoUnitPlace('C#g @ t:x/n:3')).toEqual({ kind: 'notice stream', stream: 't:x/n:3' });
    expect(fifoUnitPlace('C#g @ t:x/k:order-7')).toEqual({ kind: 'shard' });
    expect(fifoUnitPlace('S#t:x/k:a/n:1')).toEqual({ kind: 'shard' });
    expect(fifoUnitPlace('S#t:x/q:hot')).toEqual({ kind: 'shard' });
    expect(fifoUnitPlace('C#g @ *')).toEqual({ kind: 'shared' });
    expect(fifoUnitPlace('A#x')).toEqual({ kind: 'shared' });
  });
});
