/**
 * Head hints: a process that has just appended to a stream puts its next
 * segment without reading the head; a stale hint (another process appended
 * meanwhile) costs one failed put and the sequence stays gap-free.
 * Two StreamLog instances on one table stand for two containers.
 */
import { randomBytes } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { Contention } from '../../lib/adapters/dynamodb/append-contention.js';
import { StreamLog } from '../../lib/adapters/dynamodb/stream-log.js';
import { FakeStopwatch } from '../helpers/fake-stopwatch.js';
import { record } from '../helpers/records.js';
import { FakeClock, testTable } from '../helpers/stores.js';
import { countingClient as counting } from '../helpers/counting-client.js';

/** Past a head hint's life (2 s). */
const HINT_EXPIRED_MS = 2001;

describe('stream head hints', () => {
  const clock = new FakeClock();
  let a: StreamLog;
  let b: StreamLog;
  let reader: StreamLog;
  let countsA: ReturnType<typeof counting>;

  let doc: DynamoDBDocumentClient;
  let table: string;

  beforeAll(async () => {
    ({ doc, table } = await testTable('hints'));
    countsA = counting(doc);
    a = new StreamLog(countsA.doc, table, clock);
    b = new StreamLog(doc, table, clock);
    reader = new StreamLog(doc, table, clock);
  });

  const append = (log: StreamLog, stream: string, ids: string[]) =>
    log.append(stream, () => ({ records: ids.map((id) => record(clock, id)) }));

  it('skips the head read right after its own append', async () => {
    expect((await append(a, 's1', ['m1', 'm2'])).seq).toBe(1);
    countsA.reset();
    expect((await append(a, 's1', ['m3'])).seq).toBe(3);
    expect(countsA.counts.get('QueryCommand')).toBeUndefined();
    expect(countsA.counts.get('PutCommand')).toBe(1);
  });

  it('reads the head again once the hint is old', async () => {
    clock.advance(2001);
    countsA.reset();
    expect((await append(a, 's1', ['m4'])).seq).toBe(4);
    expect(countsA.counts.get('QueryCommand')).toBe(1);
  });

  it('recovers from a stale hint without a gap or an overlap, then stops trusting hints there', async () => {
    await append(a, 's2', ['a1']);
    await append(b, 's2', ['b1', 'b2']); // a's hint (next = 2) is now stale
    countsA.reset();
    expect((await append(a, 's2', ['a2'])).seq).toBe(4);
    expect(countsA.counts.get('PutCommand')).toBe(2); // the failed hinted put, then the real one
    countsA.reset();
    expect((await append(a, 's2', ['a3'])).seq).toBe(5);
    expect(countsA.counts.get('QueryCommand')).toBe(1); // hints stay off on this stream for a while
    const segments = await reader.read('s2', 0, 10);
    expect(segments.flatMap((s) => s.records.map((r) => r.messageId))).toEqual(['a1', 'b1', 'b2', 'a2', 'a3']);
    expect(segments.map((s) => [s.seq, s.count])).toEqual([
      [1, 1],
      [2, 2],
      [4, 1],
      [5, 1],
    ]);
  });

  /** A process whose lost races wait `fraction` of their full-jitter bound (on a stopwatch that does not wait). */
  const process = (fraction: number) => {
    const counted = counting(doc);
    return { log: new StreamLog(counted.doc, table, clock, undefined, { contention: new Contention(new FakeStopwatch(), () => fraction) }), counts: counted.counts };
  };

  it('learns the head from its lost put: the next try puts after the winner’s segment without reading', async () => {
    const c = process(0);
    await append(c.log, 's4', ['c1']);
    await append(b, 's4', ['b1']); // b read the head: seq 2
    await append(b, 's4', ['b2', 'b3', 'b4']); // b's hint: seq 3…5
    c.counts.clear();
    // c's hint says 2: the put collides with b's segment 2 (n 1), learns it, and puts at 3 — taken
    // too (3…5), learns that and puts at 6. No head read at all.
    expect((await append(c.log, 's4', ['c2'])).seq).toBe(6);
    expect(c.counts.get('QueryCommand')).toBeUndefined();
    expect(c.counts.get('PutCommand')).toBe(3);
    const segments = await reader.read('s4', 0, 10);
    expect(segments.map((s) => [s.seq, s.count])).toEqual([
      [1, 1],
      [2, 1],
      [3, 3],
      [6, 1],
    ]);
  });

  it('learns the head from a collision with a segment at the message size limit (256 KiB, incompressible)', async () => {
    const c = process(0);
    await append(c.log, 's10', ['c1']); // c's hint: 2
    const big = { ...record(clock, 'big'), body: randomBytes(192 * 1024).toString('base64') }; // 256 KiB of base64
    await b.append('s10', () => ({ records: [big] })); // b read the head: 2, an item of ~256 KiB
    c.counts.clear();
    expect((await append(c.log, 's10', ['c2'])).seq).toBe(3); // the failed put returned the big item whole
    expect(c.counts.get('QueryCommand')).toBeUndefined();
    expect(c.counts.get('PutCommand')).toBe(2);
    const [, second] = await reader.read('s10', 0, 10);
    expect(second?.records[0]?.body).toBe(big.body);
  });

  it('reads the head instead when it waited longer than one try before the next', async () => {
    const c = process(0.999);
    await append(c.log, 's7', ['c1']);
    await append(b, 's7', ['b1']);
    await append(b, 's7', ['b2', 'b3', 'b4']);
    c.counts.clear();
    // Lost at 2 (learned 2), waited ≤ one try, lost at 3 (learned 3…5), waited 2 tries: reads the head.
    expect((await append(c.log, 's7', ['c2'])).seq).toBe(6);
    expect(c.counts.get('PutCommand')).toBe(3);
    expect(c.counts.get('QueryCommand')).toBe(1);
  });

  it('learns the head of the stream whose put failed inside a transaction, and keeps the others’', async () => {
    const both = (log: StreamLog, ids: string[]) =>
      log.appendMany(['s5', 's6'].map((stream) => StreamLog.recordWrite(stream, ids.length, () => ids.map((id) => record(clock, `${stream}-${id}`)))));
    clock.advance(HINT_EXPIRED_MS);
    await both(a, ['a1']); // s5: 1, s6: 1; a's hints: 2 and 2
    await append(b, 's6', ['b1', 'b2']); // s6: 2…3
    countsA.reset();
    // Hinted at 2 / 2: s6's put fails and returns b's segment (2…3); s5's put passed on a hint, which
    // a lost race stops trusting: s5's head is read, s6's is not.
    expect(await both(a, ['a2'])).toEqual([2, 4]);
    expect(countsA.counts.get('TransactWriteCommand')).toBe(2);
    expect(countsA.counts.get('QueryCommand')).toBe(1);
    expect((await reader.read('s6', 0, 10)).map((s) => [s.seq, s.count])).toEqual([
      [1, 1],
      [2, 2],
      [4, 1],
    ]);
  });

  it('keeps the head it read for a stream whose put passed in a lost transaction', async () => {
    const streams = ['s8', 's9'];
    await b.appendMany(streams.map((stream) => StreamLog.recordWrite(stream, 1, () => [record(clock, `${stream}-b0`)])));
    // A process whose first transaction meets a rival append on s9 between its head reads and its write.
    const counted = counting(doc);
    let rivalled = false;
    const raced = Object.create(counted.doc) as DynamoDBDocumentClient;
    raced.send = (async (command: { constructor: { name: string } }) => {
      if (command.constructor.name === 'TransactWriteCommand' && !rivalled) {
        rivalled = true;
        await append(b, 's9', ['b1']);
      }
      return counted.doc.send(command as never);
    }) as DynamoDBDocumentClient['send'];
    const c = new StreamLog(raced, table, clock, undefined, { contention: new Contention(new FakeStopwatch(), () => 0) });
    expect(await c.appendMany(streams.map((stream) => StreamLog.recordWrite(stream, 1, () => [record(clock, `${stream}-c1`)])))).toEqual([2, 3]);
    expect(counted.counts.get('TransactWriteCommand')).toBe(2);
    expect(counted.counts.get('QueryCommand')).toBe(2); // both heads, once: s8's is kept, s9's learned
  });

  /** A record that expires in `seconds` (its segment's `ttl`: a shard head that close to it is closing). */
  const expiringIn = (id: string, seconds: number) => ({ ...record(clock, id), expiresAt: clock.now() + seconds * 1000 });
  const appendRecords = (log: StreamLog, stream: string, records: ReturnType<typeof record>[]) => log.append(stream, () => ({ records }));

  /** Two segments of the old epoch from `first`, its closing marker, the new epoch's segment at `opened` and the one after it. */
  const expectClosedEpoch = async (shard: string, first: number, opened: number) =>
    expect((await reader.read(shard, 0, 10)).map((s) => [s.seq - first, s.count])).toEqual([
      [0, 1],
      [1, 1],
      [2, 0],
      [opened - first, 1],
      [opened + 1 - first, 1],
    ]);

  it('learns nothing from a closing marker: it reads the head of the new epoch instead of continuing the old one', async () => {
    const shard = 't:x/k:marker';
    const c = process(0);
    const { seq: first } = await appendRecords(c.log, shard, [record(clock, 'c1')]);
    await appendRecords(c.log, shard, [expiringIn('c2', 30)]); // hinted; c's hint: first + 2
    // b finds the head 30 s from its ttl: a new epoch, with a closing marker at first + 2.
    const { seq: opened } = await appendRecords(b, shard, [record(clock, 'b1')]);
    c.counts.clear();
    const { seq } = await appendRecords(c.log, shard, [record(clock, 'c3')]);
    expect(c.counts.get('PutCommand')).toBe(2); // the hinted put, into the marker; then after b's segment
    expect(c.counts.get('QueryCommand')).toBe(1); // the head, read: the marker taught nothing
    expect(seq).toBe(opened + 1);
    await expectClosedEpoch(shard, first, opened);
  });

  it('reads the head again after a transaction in which it opened an epoch, whatever its put said', async () => {
    const shard = 't:x/k:opened';
    const c = process(0);
    const { seq: first } = await appendRecords(c.log, shard, [record(clock, 'c1')]); // c's hint: first + 1
    await appendRecords(b, shard, [expiringIn('b1', 30)]); // first + 1, 30 s from its ttl
    // Another writer (no hint there) reads the closing head: a new epoch, with a marker at first + 2.
    const { seq: opened } = await appendRecords(process(0).log, shard, [record(clock, 'd1')]);
    c.counts.clear();
    // c's hinted put collides with b1 and learns it: closing, so c opens an epoch over the sentinel
    // with a marker at first + 2 — taken. Its own segment's put passed, but an epoch is read again.
    const { seq } = await appendRecords(c.log, shard, [record(clock, 'c2')]);
    expect(seq).toBe(opened + 1);
    expect(c.counts.get('PutCommand')).toBe(2); // the hinted put, then after the head read
    expect(c.counts.get('TransactWriteCommand')).toBe(1); // the epoch over the learned closing head
    expect(c.counts.get('QueryCommand')).toBe(2); // the sentinel, then the head
    await expectClosedEpoch(shard, first, opened);
  });

  it('never lets two concurrent appends of one process trust the same hint', async () => {
    await append(a, 's3', ['x0']);
    countsA.reset();
    const seqs = await Promise.all(Array.from({ length: 6 }, (_, i) => append(a, 's3', [`x${i + 1}`])));
    expect(seqs.map((s) => s.seq).sort((x, y) => x - y)).toEqual([2, 3, 4, 5, 6, 7]);
    const segments = await reader.read('s3', 0, 20);
    expect(segments.map((s) => s.seq)).toEqual([1, 2, 3, 4, 5, 6, 7]);
  });
});
