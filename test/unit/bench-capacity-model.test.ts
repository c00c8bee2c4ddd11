/** The scale rows' arithmetic (bench/capacity-model.ts, bench/scale.ts): bounds, the ceiling, lost races, a row from a window. */
import { metered } from '../helpers/metered-client.js';
import { describe, expect, it } from 'vitest';
import { awsCeiling, fifoCeiling, isNoticeKey, isSequencedKey, keyBounds, lostRacesPerAppend, spreadCeiling, type KeyLoad } from '../../bench/capacity-model.js';
import { keyLoads, producersOf, rowShape, scaleRow } from '../../bench/scale.js';
import { Meter, diff, emptyStreamKey, type CallCounter, type Snapshot } from '../../bench/meter.js';

const load = (over: Partial<KeyLoad>): KeyLoad => ({ key: 'S#t:x/p:0', appends: 0, lostRaces: 0, headReads: 0, wcu: 0, rcu: 0, ...over });

describe('keyBounds', () => {
  it('divides the per-partition limits by the units each message costs on the key, losers included', () => {
    // 100 messages, 100 appends, 50 lost races: 150 puts of 1 WCU, 150 head reads of 1 RCU.
    const b = keyBounds(load({ appends: 100, lostRaces: 50, headReads: 150, wcu: 150, rcu: 150 }), 100, 7.5);
    expect(b['write units']).toBeCloseTo(1000 / 1.5, 9);
    expect(b['read units']).toBeCloseTo(3000 / 1.5, 9);
    // Every attempt read the head: chain of 2 calls of 7.5 ms → 66.67 appends/s, one message per append.
    expect(b['append chain']).toBeCloseTo(1000 / 15, 9);
  });

  it('counts one chain call when head hints spared every read, and scales by messages per append', () => {
    // Batches of 10: 10 messages per append; no head reads.
    const b = keyBounds(load({ appends: 10, wcu: 80 }), 100, 5);
    expect(b['append chain']).toBeCloseTo((1000 / 5) * 10, 9);
    expect(b['write units']).toBeCloseTo(1000 / 0.8, 9);
    expect(b['read units']).toBe(Number.POSITIVE_INFINITY);
  });

  it('spreads a key that carries a share of the messages over the topic: 4 even partitions give 4× one', () => {
    const one = keyBounds(load({ appends: 100, headReads: 100, wcu: 100, rcu: 100 }), 100, 10);
    const quarter = keyBounds(load({ appends: 25, headReads: 25, wcu: 25, rcu: 25 }), 100, 10);
    expect(quarter['append chain']).toBeCloseTo(4 * one['append chain'], 9);
    expect(quarter['write units']).toBeCloseTo(4 * one['write units'], 9);
  });

  it('refuses a row without messages or a call time', () => {
    expect(() => keyBounds(load({ appends: 1 }), 0, 5)).toThrow();
    expect(() => keyBounds(load({ appends: 1 }), 1, 0)).toThrow();
  });
});

describe('awsCeiling', () => {
  it('is the smallest bound over every key, naming the key and the bound', () => {
    const keys = [
      load({ key: 'S#t:a/p:0', appends: 30, headReads: 30, wcu: 30, rcu: 30 }),
      load({ key: 'S#t:a/p:1', appends: 70, lostRaces: 70, headReads: 140, wcu: 140, rcu: 140 }),
    ];
    const c = awsCeiling(keys, 100, 7.5);
    // p:1: chain 2 calls × 7.5 ms → 66.67 appends/s ÷ 0.7 appends per message = 95.2 msg/s; its WCU bound 714, RCU 2,143.
    expect(c).toEqual({ key: 'S#t:a/p:1', limitedBy: 'append chain', msgPerSecond: expect.closeTo(1000 / 15 / 0.7, 6) });
  });

  it('is limited by write units when segments are large and hints spare the chain', () => {
    // One producer, batches of 100 messages of 1 KiB: one append per 100 messages, 100 WCU per put, no reads.
    const c = awsCeiling([load({ appends: 1, wcu: 100 })], 100, 7.5);
    expect(c?.limitedBy).toBe('write units');
    expect(c?.msgPerSecond).toBeCloseTo(1000, 9);
  });

  it('is undefined without messages or keys', () => {
    expect(awsCeiling([load({ appends: 1, wcu: 1 })], 0, 5)).toBeUndefined();
    expect(awsCeiling([], 10, 5)).toBeUndefined();
  });
});

describe('spreadCeiling (standard topics: senders choose the partition)', () => {
  it('sums what every key used takes alone: an uneven spread over 4 keys reaches 4 × one key, where the hottest key alone says less', () => {
    // 100 messages in 100 appends over 4 keys (70/10/10/10), one call per append (hints), 1 WCU each.
    const keys = [70, 10, 10, 10].map((appends, p) => load({ key: `S#t:a/p:${p}`, appends, wcu: appends }));
    const spread = spreadCeiling(keys, 100, 7.5);
    // Each key: 1,000 / 7.5 = 133.3 appends/s, one message each → 4 × 133.3.
    expect(spread?.msgPerSecond).toBeCloseTo((4 * 1000) / 7.5, 9);
    expect(spread).toMatchObject({ limitedBy: 'append chain', keys: 4, key: '4 keys summed' });
    // The hottest key at its measured share: 133.3 ÷ 0.7.
    expect(awsCeiling(keys, 100, 7.5)?.msgPerSecond).toBeCloseTo(1000 / 7.5 / 0.7, 9);
  });

  it('keeps each key\'s own costs: lost races and head reads lower what that key takes; keys without appends count nothing', () => {
    const keys = [
      load({ key: 'S#t:a/p:0', appends: 50, wcu: 50 }),
      // Every attempt read the head and half lost: a chain of 2 calls, 2 WCU per append.
      load({ key: 'S#t:a/p:1', appends: 50, lostRaces: 50, headReads: 100, wcu: 100, rcu: 100 }),
      load({ key: 'S#t:a/p:2', lostRaces: 3, headReads: 3, wcu: 3 }),
    ];
    const spread = spreadCeiling(keys, 100, 7.5);
    expect(spread?.msgPerSecond).toBeCloseTo(1000 / 7.5 + 1000 / 15, 9);
    expect(spread?.keys).toBe(2);
  });

  it('scales by messages per append (batches) and is undefined without messages or appends', () => {
    expect(spreadCeiling([load({ appends: 10, wcu: 110 })], 100, 7.5)?.msgPerSecond).toBeCloseTo((1000 / 11) * 10, 9);
    expect(spreadCeiling([load({ appends: 10, wcu: 110 })], 0, 7.5)).toBeUndefined();
    expect(spreadCeiling([load({ lostRaces: 2 })], 10, 7.5)).toBeUndefined();
  });
});

describe('fifoCeiling (FIFO topics: the shard key chooses the shard, the sender the notice stream)', () => {
  it('tells notice stream keys from shard keys', () => {
    expect(['S#t:a/n:0', 'S#t:a/n:255', 'S#o:g/n:3'].every(isNoticeKey)).toBe(true);
    // A shard key may hold anything after `/k:`, even `/n:1`.
    expect(['S#t:a/k:n:1', 'S#t:a/k:x/n:1', 'S#t:a/n:01', 'S#t:a/p:0'].some(isNoticeKey)).toBe(false);
  });

  it('is the smaller of the hottest shard key and the notice streams summed', () => {
    // 100 messages on one hot shard: 10 appends of 10 (×10), a chain of 2 calls → 66.7 appends/s × 10 = 667 msg/s.
    const hot = load({ key: 'S#t:a/k:hot', appends: 10, lostRaces: 3, headReads: 13, wcu: 39 });
    // Their notices over 4 notice streams unevenly (7/1/1/1 appends of 10 notices), one call each: 4 × 133.3 × 10.
    const notices = [7, 1, 1, 1].map((appends, b) => load({ key: `S#t:a/n:${b}`, appends, wcu: appends }));
    const ceiling = fifoCeiling([hot, ...notices], 100, 7.5);
    expect(ceiling).toMatchObject({ key: 'S#t:a/k:hot', limitedBy: 'append chain', keys: 4 });
    expect(ceiling?.msgPerSecond).toBeCloseTo((1000 / 15) * 10, 9);
    // The hottest key over all keys would read the notice stream with 7 of 10 appends as a limit: 133.3 × 10 / 0.7.
    // Many idle shards, one notice stream taking every send's notices: the notices bound.
    const shards = Array.from({ length: 50 }, (_, i) => load({ key: `S#t:a/k:${i}`, appends: 2, wcu: 2 }));
    const one = fifoCeiling([...shards, load({ key: 'S#t:a/n:2', appends: 100, headReads: 100, wcu: 100, rcu: 50 })], 100, 7.5);
    expect(one).toMatchObject({ key: '1 notice streams summed', keys: 1 });
    expect(one?.msgPerSecond).toBeCloseTo(1000 / 15, 9);
  });

  it('is the shard bound alone when no notice was counted, and undefined without messages', () => {
    expect(fifoCeiling([load({ key: 'S#t:a/k:1', appends: 10, wcu: 10 })], 10, 7.5)).toMatchObject({ key: 'S#t:a/k:1', keys: 0 });
    expect(fifoCeiling([load({ key: 'S#t:a/k:1', appends: 10, wcu: 10 })], 0, 7.5)).toBeUndefined();
  });
});

describe('sequenced shard keys (`/q:`): no append chain', () => {
  it('tells a sequenced shard key from a chained one', () => {
    expect(['S#t:a/q:hot', 'S#t:a/q:k/n:1'].every(isSequencedKey)).toBe(true);
    expect(['S#t:a/k:hot', 'S#t:a/k:q:1', 'S#t:a/n:0', 'S#t:a/p:0'].some(isSequencedKey)).toBe(false);
  });

  it('bounds a sequenced key with N appends and no lost races by its write units (grants counted there), not by the chain', () => {
    // 1,000 messages in 1,000 appends (×1), no head reads: 1,000 grants of 1 WCU + 1,000 segments of 2 WCU on the key.
    const seq = load({ key: 'S#t:a/q:hot', appends: 1000, grants: 1000, wcu: 3000 });
    const b = keyBounds(seq, 1000, 7.5);
    expect(b['append chain']).toBe(Number.POSITIVE_INFINITY);
    expect(b['write units']).toBeCloseTo(1000 / 3, 9);
    const c = awsCeiling([seq], 1000, 7.5);
    expect(c).toEqual({ key: 'S#t:a/q:hot', limitedBy: 'write units on a sequenced shard', msgPerSecond: expect.closeTo(1000 / 3, 9) });
    // Batches of 10: 100 appends of 10 messages, 100 grants and 100 segments of 11 WCU → 1,200 WCU: 833 msg/s.
    const batched = awsCeiling([load({ key: 'S#t:a/q:hot', appends: 100, grants: 100, wcu: 1200 })], 1000, 7.5);
    expect(batched?.limitedBy).toBe('write units on a sequenced shard');
    expect(batched?.msgPerSecond).toBeCloseTo(1000 / 1.2, 9);
    // Reads (a filler's reader, say) can limit it too, under their own name.
    expect(awsCeiling([load({ key: 'S#t:a/q:hot', appends: 1000, wcu: 100, rcu: 30_000 })], 1000, 7.5)?.limitedBy).toBe('read units on a sequenced shard');
  });

  it('still applies the chain bound to a chained shard key with the same load', () => {
    const chained = load({ key: 'S#t:a/k:hot', appends: 1000, headReads: 1000, wcu: 2000, rcu: 1000 });
    const c = awsCeiling([chained], 1000, 7.5);
    // 2 chain calls × 7.5 ms → 66.7 appends/s, one message each; the write bound (500) is higher.
    expect(c).toEqual({ key: 'S#t:a/k:hot', limitedBy: 'append chain', msgPerSecond: expect.closeTo(1000 / 15, 9) });
    // A FIFO row with both: the sequenced shard is bound by units, the notice streams summed as before.
    const notices = [1, 2, 3, 4].map((b) => load({ key: `S#t:a/n:${b - 1}`, appends: 250, headReads: 250, wcu: 250, rcu: 250 }));
    const fifo = fifoCeiling([load({ key: 'S#t:a/q:hot', appends: 1000, grants: 1000, wcu: 3000 }), ...notices], 1000, 7.5);
    // Notices: 4 keys × 66.7 appends/s × 1 message ÷ … = 4 × 66.7 ÷ 0.25 × 0.25 = 266.7 < the shard's 333.3.
    expect(fifo).toMatchObject({ key: '4 notice streams summed', limitedBy: 'append chain', keys: 4 });
    expect(fifo?.msgPerSecond).toBeCloseTo((4 * 1000) / 15, 9);
  });

  it('counts only segment puts that met a filler as lost races on a sequenced key', () => {
    expect(lostRacesPerAppend([load({ key: 'S#t:a/q:hot', appends: 1000, grants: 1000, fillers: 3, lostRaces: 1 })])).toBeCloseTo(0.001, 12);
  });
});


describe('Meter: a sequenced stream\'s key', () => {
  const pk = 'S#t:a/q:hot';
  const grant = { TableName: 'b', Key: { pk, sk: '#' }, UpdateExpression: 'SET nx = nx + :n, lg = nx, lt = :now, #t = :ttl', ConditionExpression: 'attribute_exists(nx) AND #t > :nowS' };
  const segment = { pk, sk: '0001700000000001', n: 1, m: ['x'.repeat(1500)], ga: 1 };
  const filler = { pk, sk: '0001700000000002', n: 1, m: [], hf: 1, ga: 1 };
  const conditionFailed = () => {
    throw Object.assign(new Error('failed'), { name: 'ConditionalCheckFailedException' });
  };

  it('counts the counter updates\' units on the shard\'s partition key as grants, fillers apart from appends, and a segment put that met a filler as a lost race', async () => {
    const { meter, send } = metered();
    const before = meter.snapshot();
    await send('UpdateItemCommand', grant, () => ({ Attributes: { nx: 5 }, ConsumedCapacity: { CapacityUnits: 1, Table: { CapacityUnits: 1 } } }));
    await send('PutItemCommand', { TableName: 'b', Item: segment, ConditionExpression: 'attribute_not_exists(pk)' }, () => ({ ConsumedCapacity: { CapacityUnits: 2 } }));
    await send('PutItemCommand', { TableName: 'b', Item: filler, ConditionExpression: 'attribute_not_exists(pk)' }, () => ({ ConsumedCapacity: { CapacityUnits: 1 } }));
    // A segment put that met a filler: a lost race; a filler put that met the segment: none.
    await expect(send('PutItemCommand', { TableName: 'b', Item: { ...segment, sk: '0001700000000002' }, ConditionExpression: 'attribute_not_exists(pk)' }, conditionFailed)).rejects.toThrow();
    await expect(send('PutItemCommand', { TableName: 'b', Item: { ...filler, sk: '0001700000000001' }, ConditionExpression: 'attribute_not_exists(pk)' }, conditionFailed)).rejects.toThrow();
    // A grant that found no live counter (it opens an epoch next): 1 WCU, no grant, no race.
    await expect(send('UpdateItemCommand', grant, conditionFailed)).rejects.toThrow();
    const c = diff(meter.snapshot(), before).streams[`t|${pk}`];
    expect(c).toEqual({ ...emptyStreamKey(), appends: 1, fillers: 1, grants: 1, lostRaces: 1, wcu: 1 + 2 + 1 + 2 + 1 + 1 });
  });
});

describe('producersOf', () => {
  it('adds the wide producer counts only where the topic has that many partitions', () => {
    const profile = { producers: [1, 16, 64], wideProducers: [128, 256] };
    expect(producersOf('standard-p256', profile)).toEqual([1, 16, 64, 128, 256]);
    expect(producersOf('standard-p64', profile)).toEqual([1, 16, 64]);
    expect(producersOf('fifo-many', profile)).toEqual([1, 16, 64]);
    // A FIFO topic's notice streams are its partitions: 256 of them take the wide counts too.
    expect(producersOf('fifo-many-p256', profile)).toEqual([1, 16, 64, 128, 256]);
  });
});

describe('lostRacesPerAppend', () => {
  it('sums lost races and appends over all keys', () => {
    expect(lostRacesPerAppend([load({ appends: 10, lostRaces: 3 }), load({ appends: 30, lostRaces: 1 })])).toBeCloseTo(0.1, 12);
    expect(lostRacesPerAppend([load({ lostRaces: 5 })])).toBe(0);
  });
});

const calls = (n: number, ms: number): CallCounter => ({
  calls: n, errors: 0, conditionalFailures: 0, retries: 0, wruTable: 0, wruGsi: 0, rru: 0, wruFailedModel: 0, rruMinModel: 0,
  unreported: 0, itemsRead: 0, itemsWritten: 0, bytesPut: 0, ms,
});

describe('scaleRow', () => {
  it('takes only its own tag: requests per message, mean call time, lost races, the ceiling', () => {
    const tag = 'scale:standard ×1 p4';
    const counted: Snapshot = {
      dynamo: {
        [`${tag}|POST /v1/topics/{name}/messages|Query`]: calls(60, 600),
        [`${tag}|POST /v1/topics/{name}/messages|PutItem`]: calls(60, 600),
        [`other|POST /v1/topics/{name}/messages|PutItem`]: calls(1000, 1),
      },
      keys: {},
      streams: {
        [`${tag}|S#t:s/p:0`]: { ...emptyStreamKey(), appends: 25, lostRaces: 5, headReads: 30, wcu: 30, rcu: 30 },
        [`${tag}|S#t:s/p:1`]: { ...emptyStreamKey(), appends: 25, lostRaces: 5, headReads: 30, wcu: 30, rcu: 30 },
        [`other|S#t:s/p:2`]: { ...emptyStreamKey(), appends: 1000, lostRaces: 0, headReads: 0, wcu: 1, rcu: 0 },
      },
      http: {},
      other: {},
      check: { compared: 0, agreed: 0, samples: [] },
    };
    expect(keyLoads(counted, tag).map((k) => k.key)).toEqual(['S#t:s/p:0', 'S#t:s/p:1']);
    const row = scaleRow({ id: 'standard ×1 p4', topic: 'standard', batch: 1, producers: 4 }, counted, tag, 2, 50, { throttled: 1, errors: {} }, 7.5);
    expect(row).toMatchObject({ appends: 50, lostRaces: 10, lostRacesPerAppend: 0.2, requestsPerMessage: 2.4, msPerCall: 10, localMsgPerSecond: 25, throttled: 1 });
    // Each key: 0.5 appends per message, chain of 2 × 7.5 ms → 66.67 / 0.5 = 133.3 msg/s (WCU: 1000 / 0.6 = 1,667).
    expect(row.limitedBy).toBe('append chain');
    // Standard: the sum over the 2 keys used of what each takes alone (even here: the same as the hottest key at its share).
    expect(row).toMatchObject({ model: 'sum over partitions used', keysUsed: 2 });
    expect(row.awsCeilingMsgPerSecond).toBeCloseTo(1000 / 15 / 0.5, 9);
    expect(row.hottestKeyCeilingMsgPerSecond).toBeCloseTo(1000 / 15 / 0.5, 9);
    // FIFO: the hottest shard key at its share (no notice stream in these keys).
    const fifo = scaleRow({ id: 'fifo-many ×1 p4', topic: 'fifo-many', batch: 1, producers: 4 }, counted, tag, 2, 50, { throttled: 0, errors: {} }, 7.5);
    expect(fifo).toMatchObject({ model: 'hottest shard, notices summed', hottestKey: 'S#t:s/p:0' });
  });
});

describe('scale row shapes', () => {
  it('runs fifo-many-p256 over its own shard keys and seconds, every other topic over the profile ones', () => {
    const profile = { seconds: 4, shardKeys: 1000, wideFifo: { shardKeys: 10_000, seconds: 16 } };
    expect(rowShape('fifo-many-p256', profile)).toEqual({ shardKeys: 10_000, seconds: 16 });
    expect(rowShape('fifo-many', profile)).toEqual({ shardKeys: 1000, seconds: 4 });
    expect(rowShape('standard-p256', profile)).toEqual({ shardKeys: 1000, seconds: 4 });
    expect(rowShape('fifo-hot-seq', profile)).toEqual({ shardKeys: 1000, seconds: 4 });
    expect(producersOf('fifo-hot-seq', { producers: [1, 4, 16, 64], wideProducers: [128, 256] })).toEqual([1, 4, 16, 64]);
  });
});
