import { randomBytes, randomUUID } from 'node:crypto';
import { deflateRawSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { ITEM_MAX_BYTES, SEGMENT_MAX_BYTES, itemBytes, valueBytes } from '../../lib/adapters/dynamodb/item-size.js';
import { fromStored, storedRecordMaxBytes, toStored } from '../../lib/adapters/dynamodb/records.js';
import { PACK_FROM_RECORDS, packSegmentRecords, segmentRecordsItem, storedRecordsOf } from '../../lib/adapters/dynamodb/segment-records.js';
import { segmentChangeOf } from '../../lib/adapters/dynamodb/segment-changes.js';
import { segmentOverheadBytes } from '../../lib/services/append-chunks.js';
import type { MessageRecord } from '../../lib/domain/model.js';

const STREAM = 't:orders/p:3';
let seq = 0;
const record = (body: string, extra: Partial<MessageRecord> = {}): MessageRecord => {
  seq++;
  return {
    messageId: `01JF9Z${String(seq).padStart(20, '0')}`,
    topic: 'orders',
    body,
    encoding: 'utf8',
    tag: undefined,
    keys: [],
    properties: {},
    shardKey: undefined,
    sentAt: 1_764_620_000_000 + seq,
    deliverableAt: 1_764_620_000_000 + seq,
    expiresAt: 1_765_620_000_000,
    generation: 1,
    ...extra,
  };
};

/** A JSON order event of about `bytes` bytes, with random ids and values (as the bench sends). */
const order = (bytes: number): string => {
  const words = ['blue', 'cotton', 'shirt', 'steel', 'bottle', 'coffee', 'beans', 'desk', 'lamp', 'green', 'tea', 'mug'];
  const lines: unknown[] = [];
  const event = { type: 'order.created', orderId: randomUUID(), customerId: randomUUID(), currency: 'EUR', lines };
  let length = Buffer.byteLength(JSON.stringify(event));
  while (length < bytes) {
    const line = {
      sku: `SKU-${String(Math.floor(Math.random() * 1e6)).padStart(6, '0')}`,
      name: `${words[Math.floor(Math.random() * words.length)]} ${words[Math.floor(Math.random() * words.length)]}`,
      quantity: 1 + Math.floor(Math.random() * 9),
      unitPrice: Number((Math.random() * 200).toFixed(2)),
    };
    lines.push(line);
    length += Buffer.byteLength(JSON.stringify(line)) + 1;
  }
  return JSON.stringify(event);
};

/** The segment item as StreamLog writes it, and its bytes by DynamoDB's rules. */
const segmentItem = (records: MessageRecord[]) => {
  const packed = packSegmentRecords(records);
  const item = { pk: `S#${STREAM}`, sk: '0000000000000001', n: records.length, ttl: 1_765_620_000, ...segmentRecordsItem(packed) };
  const perRecord = { ...item, mz: undefined, m: records.map(toStored) };
  return { packed, item, bytes: itemBytes(item), perRecordBytes: itemBytes(perRecord) };
};

const readBack = (item: Record<string, unknown>) => storedRecordsOf(item).map(fromStored);

/** Records whose per-record bounds fill a segment (≤ SEGMENT_MAX_BYTES with its overhead), as the sender splits them. */
const fullSegment = (count: number, body: () => string): MessageRecord[] => {
  const records: MessageRecord[] = [];
  let bytes = segmentOverheadBytes(STREAM);
  for (let i = 0; i < count; i++) {
    const next = record(body());
    if (bytes + storedRecordMaxBytes(next) > SEGMENT_MAX_BYTES) break;
    bytes += storedRecordMaxBytes(next);
    records.push(next);
  }
  return records;
};

describe('segment records: per record or packed', () => {
  it('keeps a segment of one record per record (its body is deflated on its own)', () => {
    expect(PACK_FROM_RECORDS).toBe(2);
    const { packed, item } = segmentItem([record(order(1024))]);
    expect(packed.packed).toBeUndefined();
    expect(item).toHaveProperty('m');
    expect(item).not.toHaveProperty('mz');
  });

  it('packs a batch of 10 JSON events into one deflate, at most 60 % of the per-record form, and reads it back exactly', () => {
    const records = Array.from({ length: 10 }, () => record(order(1024), { keys: ['k1'], properties: { region: 'eu' }, tag: 'new' }));
    const { packed, item, bytes, perRecordBytes } = segmentItem(records);
    expect(packed.packed).toBeInstanceOf(Uint8Array);
    expect(item).not.toHaveProperty('m');
    expect(bytes).toBeLessThan(perRecordBytes * 0.6);
    // The bench's 10 × 1,024 B: ~5.4 KB per record (6 WRU) → under 3 KB (3 WRU).
    expect(bytes).toBeLessThanOrEqual(3 * 1024);
    expect(readBack(item)).toEqual(records);
  });

  it('reads segments written per record (before the packed form, or when it does not pay)', () => {
    const records = [record('one'), record(order(2000)), record('three', { encoding: 'base64' })];
    const old = { pk: `S#${STREAM}`, sk: '0000000000000001', n: 3, m: records.map(toStored) };
    expect(readBack(old)).toEqual(records);
    expect(storedRecordsOf({ pk: 'S#x', sk: '1', n: 0, m: [] })).toEqual([]);
  });

  it('round-trips base64 bodies (canonical and not), UTF-8 text and every optional field', () => {
    const records = [
      record(Buffer.from(order(900)).toString('base64'), { encoding: 'base64' }),
      record(`${'A'.repeat(1022)}B=`, { encoding: 'base64' }),
      record('Grüße, 東京 🚀 "quoted" \\ \n'.repeat(40), { shardKey: 'k', tag: 't', keys: ['a', 'b'], properties: { p: 'v' } }),
      record(''),
    ];
    const { packed, item } = segmentItem(records);
    expect(packed.packed).toBeDefined();
    expect(readBack(item)).toEqual(records);
  });

  it('never writes the packed form when it is not smaller: incompressible records stay per record', () => {
    // Random ids, times and bodies: nothing for one deflate to share, and JSON spells more than DynamoDB counts.
    const random = () => Math.floor(Math.random() * 1e15);
    const records = Array.from({ length: 2 }, () =>
      record(randomBytes(30).toString('latin1'), { messageId: randomUUID(), sentAt: random(), deliverableAt: random(), expiresAt: random() }),
    );
    const { packed, item, bytes, perRecordBytes } = segmentItem(records);
    expect(packed.packed).toBeUndefined();
    expect(bytes).toBe(perRecordBytes);
    expect(readBack(item)).toEqual(records);
    // Whatever the mix, the chosen form is never larger.
    for (let round = 0; round < 20; round++) {
      const mixed = Array.from({ length: 2 + (round % 5) }, (_, i) =>
        record(i % 2 ? randomBytes(50 + round * 20).toString('latin1') : randomBytes(round * 10).toString('base64'), { messageId: randomUUID() }),
      );
      const segment = segmentItem(mixed);
      expect(segment.bytes).toBeLessThanOrEqual(segment.perRecordBytes);
      expect(readBack(segment.item)).toEqual(mixed);
    }
  });

  it('gives the dispatcher the topics of a packed segment from its stream image (mz as Lambda delivers it: base64)', () => {
    const records = [record(order(1024)), record(order(1024), { topic: 'invoices' }), record(order(1024))];
    const { packed } = packSegmentRecords(records);
    expect(packed).toBeDefined();
    const change = segmentChangeOf({
      eventName: 'INSERT',
      dynamodb: {
        SequenceNumber: '42',
        NewImage: { pk: { S: `S#${STREAM}` }, sk: { S: '0000000000000007' }, n: { N: '3' }, w: { N: '1' }, mz: { B: Buffer.from(packed!).toString('base64') } },
      },
    });
    expect(change).toMatchObject({ stream: STREAM, seq: 7, count: 3, topics: ['orders', 'invoices'], wake: true });
  });

  it('refuses an unreadable packed attribute instead of reading an empty segment', () => {
    expect(() => storedRecordsOf({ pk: 'S#x', sk: '1', mz: 'text' })).toThrow(/not binary/);
    expect(() => storedRecordsOf({ pk: 'S#x', sk: '1', mz: new Uint8Array([1, 2, 3]) })).toThrow();
    const frame = (text: string) => new Uint8Array(deflateRawSync(Buffer.from(text, 'utf8')));
    expect(storedRecordsOf({ pk: 'S#x', sk: '1', mz: frame('[{"i":"a","l":2},{"i":"b","l":1}]\nxyz') }).map((e) => [e.i, e.b])).toEqual([['a', 'xy'], ['b', 'z']]);
    expect(() => storedRecordsOf({ pk: 'S#x', sk: '1', mz: frame('[{"i":"a","l":5}]\nxyz') })).toThrow(/passes the end/);
    expect(() => storedRecordsOf({ pk: 'S#x', sk: '1', mz: frame('[{"i":"a","l":1}]\nxyz') })).toThrow(/after the last body/);
    expect(() => storedRecordsOf({ pk: 'S#x', sk: '1', mz: frame('[{"i":"a","l":1}]') })).toThrow(/no header/);
  });

  describe('at the maximum (a segment filled to SEGMENT_MAX_BYTES of per-record bounds)', () => {
    const cases: Array<[string, () => MessageRecord[]]> = [
      ['100 JSON events of ~3.3 KB', () => fullSegment(100, () => order(3300))],
      ['100 random latin-1 text bodies of ~3.3 KB', () => fullSegment(100, () => randomBytes(2400).toString('latin1'))],
      ['100 incompressible bodies of ~3.3 KB (random base64 text)', () => fullSegment(100, () => randomBytes(2475).toString('base64'))],
      ['1 body of 256 KiB of base64 text', () => fullSegment(100, () => randomBytes(196_608).toString('base64'))],
      ['records of ~170 KB of JSON', () => fullSegment(100, () => order(170_000))],
    ];
    for (const [name, make] of cases) {
      it(`${name}: stays below the 400 KB item limit and the per-record bound; reads back`, () => {
        const records = make();
        expect(records.length).toBeGreaterThan(0);
        const bound = segmentOverheadBytes(STREAM) + records.reduce((sum, r) => sum + storedRecordMaxBytes(r), 0);
        expect(bound).toBeLessThanOrEqual(SEGMENT_MAX_BYTES);
        const perRecordStarted = performance.now();
        records.map(toStored);
        const perRecordMs = performance.now() - perRecordStarted;
        const started = performance.now();
        packSegmentRecords(records);
        const ms = performance.now() - started;
        const { item, bytes, perRecordBytes } = segmentItem(records);
        expect(bytes).toBeLessThanOrEqual(perRecordBytes);
        expect(perRecordBytes).toBeLessThanOrEqual(bound);
        expect(bytes).toBeLessThan(ITEM_MAX_BYTES);
        const readStarted = performance.now();
        expect(readBack(item)).toEqual(records);
        const readMs = performance.now() - readStarted;
        // CPU per segment counts as Lambda duration: noted, with a generous ceiling for a busy machine.
        console.log(
          `segment ${name}: ${records.length} records, bound ${bound} B, per record ${perRecordBytes} B, stored ${bytes} B (${'mz' in item ? 'packed' : 'per record'}), encode ${ms.toFixed(1)} ms (per record alone ${perRecordMs.toFixed(1)} ms), decode ${readMs.toFixed(1)} ms`,
        );
        expect(ms).toBeLessThan(2000);
        expect(valueBytes(item)).toBeGreaterThan(0);
      });
    }
  });
});
