/**
 * Sequenced streams (docs/design.md, "Sequenced FIFO topics"; sequencer.ts, stream-log.ts): appends
 * take their numbers from the stream's counter and cannot lose a race; a number granted and never
 * written is a hole that reads hold for F, then fill, and a put that comes after the fill takes new
 * numbers. On DynamoDB Local, with a fake clock for every time bound.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { GetCommand, PutCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { ThrottledError } from '../../lib/domain/errors.js';
import { StreamLog } from '../../lib/adapters/dynamodb/stream-log.js';
import { COUNTER_TTL_SECONDS, Sequencer } from '../../lib/adapters/dynamodb/sequencer.js';
import { SENTINEL_SK, streamPk } from '../../lib/adapters/dynamodb/keys.js';
import { FILL_AFTER_MS, GRANT_DEAD_AFTER_MS, GRANT_PUT_DEADLINE_MS } from '../../lib/domain/gaps.js';
import { record } from '../helpers/records.js';
import { FakeClock, testTable } from '../helpers/stores.js';
import { countingClient as counting } from '../helpers/counting-client.js';

describe('sequenced streams', () => {
  const clock = new FakeClock();
  let doc: DynamoDBDocumentClient;
  let table: string;
  let log: StreamLog;
  let sequencer: Sequencer;

  beforeAll(async () => {
    ({ doc, table } = await testTable('sequenced'));
    log = new StreamLog(doc, table, clock);
    sequencer = new Sequencer(doc, table);
  });

  const append = (to: StreamLog, stream: string, ids: string[]) =>
    to.append(stream, () => ({ records: ids.map((id) => record(clock, id)) }), { count: ids.length });
  const counter = async (stream: string) =>
    (await doc.send(new GetCommand({ TableName: table, Key: { pk: streamPk(stream), sk: SENTINEL_SK }, ConsistentRead: true }))).Item;

  it('opens an epoch from the clock, then grants contiguous ranges without reading the head', async () => {
    const stream = 't:a/q:one';
    const counted = counting(doc);
    const writer = new StreamLog(counted.doc, table, clock);
    const first = await append(writer, stream, ['a1', 'a2']);
    expect(first.seq).toBe(clock.now() * 1000);
    const second = await append(writer, stream, ['a3']);
    expect(second.seq).toBe(first.seq + 2);
    expect(counted.counts.get('QueryCommand')).toBeUndefined();
    expect(counted.counts.get('UpdateCommand')).toBe(3); // the failed continue, the opening, one grant
    const item = await counter(stream);
    expect(item).toMatchObject({ nx: first.seq + 3, lg: first.seq + 2, ef: first.seq });
    const { segments } = await log.readSegments(stream, 0, 10);
    expect(segments.map((s) => [s.seq, s.count, s.records.map((r) => r.messageId)])).toEqual([
      [first.seq, 2, ['a1', 'a2']],
      [first.seq + 2, 1, ['a3']],
    ]);
    expect(segments[1]?.granted?.prev).toEqual({ seq: first.seq, at: clock.now() });
  });

  it('64 concurrent writers on one stream: no race lost, every number once, each writer in order', async () => {
    const stream = 't:a/q:hot';
    const writers = Array.from({ length: 64 }, () => new StreamLog(doc, table, clock));
    const landed = await Promise.all(
      writers.map(async (w, p) => {
        const seqs: number[] = [];
        for (let n = 0; n < 3; n++) seqs.push((await append(w, stream, [`${p}:${n}:0`, `${p}:${n}:1`])).seq);
        return seqs;
      }),
    );
    const { segments, heldUntil } = await log.readSegments(stream, 0, 1000);
    expect(heldUntil).toBeUndefined();
    const ids = segments.flatMap((s) => s.records.map((r) => r.messageId));
    expect(ids).toHaveLength(64 * 3 * 2);
    expect(new Set(ids).size).toBe(ids.length);
    // Gap-free: every segment starts where the one below ends, from the epoch's first number.
    const item = await counter(stream);
    let at = Number(item?.ef);
    for (const s of segments) {
      expect(s.seq).toBe(at);
      at = s.seq + s.count;
    }
    expect(at).toBe(Number(item?.nx));
    // A producer's next send is granted after its previous one landed: its numbers increase.
    for (const seqs of landed) expect([...seqs].sort((x, y) => x - y)).toEqual(seqs);
  });

  it('a read holds below a young grant, fills it after F, and the late put takes new numbers', async () => {
    const stream = 't:a/q:hole';
    const base = await append(log, stream, ['h0']);
    // A writer that took its grant and has not put yet.
    const dead = await sequencer.grant(stream, 2, clock.now());
    clock.advance(10);
    const above = await append(log, stream, ['h3']);
    expect(above.seq).toBe(dead.start + 2);
    const held = await log.readSegments(stream, base.seq, 10);
    expect(held.segments.map((s) => s.seq)).toEqual([base.seq]);
    expect(held.heldUntil).toBe(dead.at + FILL_AFTER_MS);
    expect(held.more).toBe(true);
    clock.advance(FILL_AFTER_MS);
    const filled = await log.readSegments(stream, base.seq, 10);
    expect(filled.heldUntil).toBeUndefined();
    expect(filled.segments.map((s) => [s.seq, s.count, s.records.length, s.granted?.filler])).toEqual([
      [base.seq, 1, 1, false],
      [dead.start, 2, 0, true],
      [above.seq, 1, 1, false],
    ]);
    // The dead writer's put now fails on the filler: a sequenced append takes new numbers instead.
    const late = await append(log, stream, ['h1', 'h2']);
    expect(late.seq).toBe(above.seq + 1);
  });

  it('a grant whose segment landed in time is read, with no filler', async () => {
    const stream = 't:a/q:landed';
    const base = await append(log, stream, ['l0']);
    const slow = new StreamLog(doc, table, clock);
    // The slow writer's grant comes first; a fast writer lands above it; then the slow one lands.
    const slowAppend = slow.append(
      stream,
      () => {
        return { records: [record(clock, 'l1')] };
      },
      { count: 1 },
    );
    await slowAppend;
    await append(log, stream, ['l2']);
    const { segments, heldUntil } = await log.readSegments(stream, base.seq, 10);
    expect(heldUntil).toBeUndefined();
    expect(segments.flatMap((s) => s.records.map((r) => r.messageId))).toEqual(['l0', 'l1', 'l2']);
    expect(segments.some((s) => s.granted?.filler)).toBe(false);
  });

  it('two dead grants in a row: the upper one is filled after F, the lower held until L, then passed', async () => {
    const stream = 't:a/q:two';
    const base = await append(log, stream, ['t0']);
    const lower = await sequencer.grant(stream, 1, clock.now());
    const upper = await sequencer.grant(stream, 1, clock.now());
    const above = await append(log, stream, ['t3']);
    clock.advance(FILL_AFTER_MS);
    const first = await log.readSegments(stream, base.seq, 10);
    // [upper] filled (its bound is named by the segment above); [lower] has no bound: held until L.
    expect(first.segments.map((s) => s.seq)).toEqual([base.seq]);
    expect(first.heldUntil).toBe(upper.at + GRANT_DEAD_AFTER_MS);
    clock.advance(GRANT_DEAD_AFTER_MS);
    const passed = await log.readSegments(stream, base.seq, 10);
    expect(passed.heldUntil).toBeUndefined();
    expect(passed.segments.map((s) => s.seq)).toEqual([base.seq, upper.start, above.seq]);
    expect(lower.start).toBe(base.seq + 1);
  });

  it('an append whose transaction fails on an extra fills its own range at once (no reader waits)', async () => {
    const stream = 't:a/q:self';
    const base = await append(log, stream, ['s0']);
    const { WriteBatch } = await import('../../lib/adapters/dynamodb/write-batch.js');
    const batch = new WriteBatch();
    batch.add('blocker', { ConditionCheck: { TableName: table, Key: { pk: 'nope', sk: 'nope' }, ConditionExpression: 'attribute_exists(pk)' } });
    await expect(
      log.append(stream, () => ({ records: [record(clock, 's1')], extras: batch }), { count: 1 }),
    ).rejects.toThrow();
    const after = await append(log, stream, ['s2']);
    const { segments, heldUntil } = await log.readSegments(stream, base.seq, 10);
    expect(heldUntil).toBeUndefined();
    expect(segments.map((s) => [s.seq, s.granted?.filler])).toEqual([
      [base.seq, false],
      [base.seq + 1, true],
      [after.seq, false],
    ]);
    // The writer's filler expires (as its counter would), so holes leave nothing behind for good.
    expect(segments[1]?.granted?.ttl).toBe(Math.ceil(clock.now() / 1000) + COUNTER_TTL_SECONDS);
  });

  /** A log whose segment puts on sequenced streams each meet a filler first (a reader gave the range up): `times` of them. */
  const fillingBefore = (times: number) => {
    let left = times;
    const send = doc.send.bind(doc) as (command: unknown) => Promise<unknown>;
    const wrapped = Object.create(doc) as DynamoDBDocumentClient;
    wrapped.send = (async (command: unknown) => {
      const item = command instanceof PutCommand ? command.input.Item : undefined;
      if (left > 0 && typeof item?.pk === 'string' && item.pk.includes('/q:') && item.ga !== undefined && item.hf === undefined) {
        left--;
        await sequencer.fill(String(item.pk).slice(2), Number(item.sk), Number(item.n), Number(item.ga), Number(item.ef), undefined);
      }
      return send(command);
    }) as DynamoDBDocumentClient['send'];
    return new StreamLog(wrapped, table, clock);
  };

  it('a put that meets a filler takes new numbers (no race lost), up to 3 times, then answers 429', async () => {
    const stream = 't:a/q:filled';
    const base = await append(log, stream, ['f0']);
    const landed = await append(fillingBefore(1), stream, ['f1']);
    expect(landed.seq).toBe(base.seq + 2);
    await expect(append(fillingBefore(4), stream, ['f2'])).rejects.toBeInstanceOf(ThrottledError);
    const { segments, heldUntil } = await log.readSegments(stream, base.seq, 20);
    expect(heldUntil).toBeUndefined();
    expect(segments.map((s) => [s.seq - base.seq, s.granted?.filler])).toEqual([
      [0, false],
      [1, true],
      [2, false],
      [3, true],
      [4, true],
      [5, true],
      [6, true],
    ]);
  });

  it('sends no put for a grant older than W: the range is filled and new numbers taken', async () => {
    const stream = 't:a/q:deadline';
    const base = await append(log, stream, ['w0']);
    let slowGrants = 1;
    const send = doc.send.bind(doc) as (command: unknown) => Promise<unknown>;
    const wrapped = Object.create(doc) as DynamoDBDocumentClient;
    wrapped.send = (async (command: unknown) => {
      const answer = await send(command);
      // The first grant's answer comes back W later (a stalled container).
      if (command instanceof UpdateCommand && slowGrants-- > 0) clock.advance(GRANT_PUT_DEADLINE_MS + 1);
      return answer;
    }) as DynamoDBDocumentClient['send'];
    const landed = await append(new StreamLog(wrapped, table, clock), stream, ['w1']);
    expect(landed.seq).toBe(base.seq + 2);
    const { segments } = await log.readSegments(stream, base.seq, 10);
    expect(segments.map((s) => [s.seq - base.seq, s.granted?.filler, s.records.map((r) => r.messageId)])).toEqual([
      [0, false, ['w0']],
      [1, true, []],
      [2, false, ['w1']],
    ]);
  });

  it('a counter past its ttl (idle longer than the longest retention) opens a new epoch above every number it granted', async () => {
    const stream = 't:a/q:idle';
    const old = await append(log, stream, ['i0', 'i1']);
    clock.advance(COUNTER_TTL_SECONDS * 1000 + 1000);
    const next = await append(log, stream, ['i2']);
    expect(next.seq).toBe(clock.now() * 1000);
    expect(next.seq).toBeGreaterThan(old.seq + 2);
    const item = await counter(stream);
    expect(item).toMatchObject({ ef: next.seq, nx: next.seq + 1 });
    // A reader still at the old epoch passes the dead numbers between them.
    const { segments, heldUntil } = await log.readSegments(stream, old.seq + 2, 10);
    expect(heldUntil).toBeUndefined();
    expect(segments.map((s) => s.records.map((r) => r.messageId))).toEqual([['i2']]);
  });

  it("a reader's fill that meets the writer's landed segment answers that segment", async () => {
    const stream = 't:a/q:raced';
    const landed = await append(log, stream, ['r0', 'r1']);
    const stored = await sequencer.fill(stream, landed.seq, 2, clock.now(), landed.seq, undefined);
    expect(stored.hf).toBeUndefined();
    expect(Number(stored.n)).toBe(2);
    expect(Number(stored.sk)).toBe(landed.seq);
  });

  it('refuses a write to a sequenced stream that does not declare its count', async () => {
    await expect(log.append('t:a/q:nocount', () => ({ records: [record(clock, 'x')] }))).rejects.toThrow(/declare its count/);
  });
});
