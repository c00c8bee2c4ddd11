/**
 * `StreamLog.segmentsCovering` (a range grant's window and a write-out's members: docs/design.md,
 * Range claims) on DynamoDB Local: exactly the stored segments that hold `from`…`to`, oldest first,
 * read in one round trip — the segment at or below `from` and those past it at once, not a
 * descending walk of pages (which took 4–9 calls one after the other for a window of 50–100 numbers
 * of 1 KB messages, and let other grants overtake it meanwhile) — and following a page cut at 1 MB.
 */
import { randomBytes } from 'node:crypto';
import { beforeEach, describe, expect, it } from 'vitest';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { StreamLog } from '../../lib/adapters/dynamodb/stream-log.js';
import type { MessageRecord } from '../../lib/domain/model.js';
import { record } from '../helpers/records.js';
import { FakeClock, testTable } from '../helpers/stores.js';

const STREAM = 't:t/k:k';
const clock = new FakeClock();

/** Segment Queries on the stream: when each started and when it answered, in call order. */
interface QueryCall {
  started: number;
  answered?: number;
  limit: number | undefined;
}

let log: StreamLog;
let calls: QueryCall[];
let tick: number;

function counted(doc: DynamoDBDocumentClient): DynamoDBDocumentClient {
  doc.middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as { ExpressionAttributeValues?: Record<string, unknown>; Limit?: number };
      if (context.commandName !== 'QueryCommand' || input.ExpressionAttributeValues?.[':pk'] !== `S#${STREAM}`) return next(args);
      const call: QueryCall = { started: tick++, limit: input.Limit };
      calls.push(call);
      const result = await next(args);
      call.answered = tick++;
      return result;
    },
    { step: 'initialize', name: 'countSegmentQueries' },
  );
  return doc;
}

/** Appends segments of `sizes[i]` records each; returns each segment's first number and count. */
async function appendSegments(sizes: number[], body: (i: number) => string = (i) => `m${i}`): Promise<Array<{ seq: number; count: number }>> {
  const out: Array<{ seq: number; count: number }> = [];
  let i = 0;
  for (const size of sizes) {
    const records: MessageRecord[] = [];
    for (let k = 0; k < size; k++) records.push({ ...record(clock, `m${i}`), body: body(i++) });
    const { seq } = await log.append(STREAM, () => ({ records }), { count: size });
    out.push({ seq, count: size });
  }
  return out;
}

const starts = (segments: Array<{ seq: number }>) => segments.map((s) => s.seq);

beforeEach(async () => {
  const { doc, table } = await testTable('covering');
  calls = [];
  tick = 0;
  log = new StreamLog(counted(doc), table, clock);
});

describe('segmentsCovering', () => {
  it('returns exactly the segments holding from…to, oldest first, from both reads started together', async () => {
    const stored = await appendSegments([3, 3, 3, 3, 3, 3, 3, 3]);
    // From inside the second segment to inside the sixth.
    const from = stored[1]!.seq + 1;
    const to = stored[5]!.seq + 2;
    calls = [];
    const got = await log.segmentsCovering(STREAM, from, to, false);
    expect(starts(got)).toEqual(starts(stored.slice(1, 6)));
    expect(got.map((s) => s.records.length)).toEqual([3, 3, 3, 3, 3]);
    // One round trip: two Queries, the second started before the first answered.
    expect(calls).toHaveLength(2);
    expect(Math.max(calls[0]!.started, calls[1]!.started)).toBeLessThan(Math.min(calls[0]!.answered!, calls[1]!.answered!));
  });

  it('a window inside one segment, and one starting at a segment start', async () => {
    const stored = await appendSegments([5, 5, 5]);
    expect(starts(await log.segmentsCovering(STREAM, stored[1]!.seq + 1, stored[1]!.seq + 3))).toEqual([stored[1]!.seq]);
    expect(starts(await log.segmentsCovering(STREAM, stored[1]!.seq, stored[1]!.seq))).toEqual([stored[1]!.seq]);
    expect(starts(await log.segmentsCovering(STREAM, stored[1]!.seq, stored[2]!.seq))).toEqual([stored[1]!.seq, stored[2]!.seq]);
  });

  it('segments of one record each, the window at its widest (100 numbers): one page, no page after it', async () => {
    const stored = await appendSegments(Array.from({ length: 102 }, () => 1));
    const from = stored[1]!.seq;
    const to = from + 99;
    calls = [];
    const got = await log.segmentsCovering(STREAM, from, to, false);
    expect(starts(got)).toEqual(starts(stored.slice(1, 101)));
    // The forward Query asks for one more than the 99 it can hold: it ends in its first page.
    expect(calls).toHaveLength(2);
  });

  it('nothing stored at or below from: the segments past it only (the caller sees the gap)', async () => {
    const stored = await appendSegments([2, 2]);
    const got = await log.segmentsCovering(STREAM, stored[0]!.seq - 5, stored[1]!.seq);
    expect(starts(got)).toEqual(starts(stored));
  });

  it('segments past 1 MB: the forward Query follows its cut page', async () => {
    // Four segments of one 342 KiB record each (256 KiB of incompressible bytes as base64): 1.37 MB.
    const big = () => randomBytes(256 * 1024).toString('base64');
    const stored = await appendSegments([1, 1, 1, 1, 1], big);
    calls = [];
    const got = await log.segmentsCovering(STREAM, stored[0]!.seq, stored[4]!.seq, false);
    expect(starts(got)).toEqual(starts(stored));
    expect(calls.length).toBeGreaterThanOrEqual(3);
  });
});
