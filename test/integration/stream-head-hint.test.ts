/**
 * Head hints: a process that has just appended to a stream puts its next
 * segment without reading the head; a stale hint (another process appended
 * meanwhile) costs one failed put and the sequence stays gap-free.
 * Two StreamLog instances on one table stand for two containers.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { StreamLog } from '../../lib/adapters/dynamodb/stream-log.js';
import { record } from '../helpers/records.js';
import { FakeClock, testTable } from '../helpers/stores.js';

/** Counts the commands a document client sends, by name. */
function counting(doc: DynamoDBDocumentClient) {
  const counts = new Map<string, number>();
  const send = doc.send.bind(doc) as (command: unknown) => Promise<unknown>;
  const wrapped = Object.create(doc) as DynamoDBDocumentClient;
  wrapped.send = ((command: { constructor: { name: string } }) => {
    counts.set(command.constructor.name, (counts.get(command.constructor.name) ?? 0) + 1);
    return send(command);
  }) as DynamoDBDocumentClient['send'];
  return { doc: wrapped, counts, reset: () => counts.clear() };
}

describe('stream head hints', () => {
  const clock = new FakeClock();
  let a: StreamLog;
  let b: StreamLog;
  let reader: StreamLog;
  let countsA: ReturnType<typeof counting>;

  beforeAll(async () => {
    const { doc, table } = await testTable('hints');
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

  it('never lets two concurrent appends of one process trust the same hint', async () => {
    await append(a, 's3', ['x0']);
    countsA.reset();
    const seqs = await Promise.all(Array.from({ length: 6 }, (_, i) => append(a, 's3', [`x${i + 1}`])));
    expect(seqs.map((s) => s.seq).sort((x, y) => x - y)).toEqual([2, 3, 4, 5, 6, 7]);
    const segments = await reader.read('s3', 0, 20);
    expect(segments.map((s) => s.seq)).toEqual([1, 2, 3, 4, 5, 6, 7]);
  });
});
