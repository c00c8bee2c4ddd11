/**
 * The dispatcher service: routing of flagged segment inserts by kind, the
 * partial batch response it builds from route failures, and the topic
 * activity route's "one write per topic per invocation".
 */
import { deflateRawSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import type { ChangeRecord } from '../../lib/ports/change-stream.js';
import type { SegmentChange } from '../../lib/adapters/dynamodb/segment-changes.js';
import { Dispatcher, DispatchKind, type DispatchRoute } from '../../lib/services/dispatcher.js';
import { ActivityRoute } from '../../lib/services/activity-route.js';
import type { Topic } from '../../lib/domain/model.js';
import * as build from '../helpers/builders.js';

const clock = { now: () => 1_800_000_000_000 };

let sequence = 0;
/** A change record of a segment insert, in the wire format Lambda delivers. */
function segmentInsert(stream: string, topics: string[], flags: { w?: boolean; nf?: number } = { w: true }): ChangeRecord {
  const seq = ++sequence;
  const image = {
    pk: { S: `S#${stream}` },
    sk: { S: String(seq).padStart(16, '0') },
    n: { N: String(topics.length) },
    m: { L: topics.map((t, i) => ({ M: { i: { S: `m${seq}.${i}` }, t: { S: t } } })) },
    ...(flags.w ? { w: { N: '1' } } : {}),
    ...(flags.nf !== undefined ? { nf: { N: String(flags.nf) } } : {}),
  };
  return {
    eventID: `e${seq}`,
    eventName: 'INSERT',
    eventSource: 'aws:dynamodb',
    dynamodb: { Keys: { pk: image.pk, sk: image.sk }, NewImage: image, SequenceNumber: String(seq).padStart(21, '0'), StreamViewType: 'NEW_IMAGE' },
  };
}

class RecordingRoute implements DispatchRoute {
  readonly calls: SegmentChange[][] = [];
  constructor(
    readonly name: string,
    private readonly fail: (segment: SegmentChange) => boolean = () => false,
  ) {}
  async handle(segments: readonly SegmentChange[]) {
    this.calls.push([...segments]);
    return segments.filter(this.fail).map((s) => s.id);
  }
}

describe('Dispatcher', () => {
  it('routes each segment to the routes of the flags it carries, all segments of a kind in one call', async () => {
    const wake = new RecordingRoute('wake');
    const notice = new RecordingRoute('notice');
    const dispatcher = new Dispatcher({ [DispatchKind.WAKE]: [wake], [DispatchKind.NOTICE]: [notice] }, clock);
    const records = [
      segmentInsert('t:a/p:0', ['a']),
      segmentInsert('t:f/k:x', ['f'], { nf: 1 }),
      segmentInsert('t:f/k:y', ['f'], { nf: 2, w: true }),
      segmentInsert('t:b/p:1', ['b', 'b']),
    ];
    expect(await dispatcher.dispatch(records)).toEqual({ batchItemFailures: [] });
    expect(wake.calls).toHaveLength(1);
    expect(wake.calls[0]?.map((s) => s.stream)).toEqual(['t:a/p:0', 't:f/k:y', 't:b/p:1']);
    expect(notice.calls).toHaveLength(1);
    expect(notice.calls[0]?.map((s) => [s.stream, s.noticeLane])).toEqual([
      ['t:f/k:x', 1],
      ['t:f/k:y', 2],
    ]);
  });

  it('answers the failed records in stream order, and all of a kind when its route throws', async () => {
    const records = [segmentInsert('t:a/p:0', ['a']), segmentInsert('t:a/p:1', ['a']), segmentInsert('t:f/k:x', ['f'], { nf: 0 })];
    const ids = records.map((r) => r.dynamodb?.SequenceNumber);
    const failingLast = new RecordingRoute('wake', (s) => s.id === ids[1]);
    const throwing: DispatchRoute = {
      name: 'broken',
      handle: async () => {
        throw new Error('down');
      },
    };
    const errors: unknown[] = [];
    const dispatcher = new Dispatcher({ wake: [failingLast], notice: [throwing] }, clock, { warn: () => undefined, error: (m, d) => errors.push([m, d]) });
    const { batchItemFailures } = await dispatcher.dispatch(records);
    expect(batchItemFailures.map((f) => f.itemIdentifier)).toEqual([ids[1], ids[2]]);
    expect(errors).toHaveLength(1);
  });

  it('skips changes that are not flagged segment inserts instead of failing the batch', async () => {
    const wake = new RecordingRoute('wake');
    const warnings: string[] = [];
    const dispatcher = new Dispatcher({ wake: [wake] }, clock, { warn: (m) => warnings.push(m), error: () => undefined });
    const sentinel: ChangeRecord = { eventName: 'INSERT', dynamodb: { NewImage: { pk: { S: 'S#t:a/p:0' }, sk: { S: '#' } }, SequenceNumber: '1' } };
    const modify: ChangeRecord = { ...segmentInsert('t:a/p:0', ['a']), eventName: 'MODIFY' };
    const good = segmentInsert('t:a/p:0', ['a']);
    expect(await dispatcher.dispatch([sentinel, modify, good])).toEqual({ batchItemFailures: [] });
    expect(wake.calls.flat().map((s) => s.id)).toEqual([good.dynamodb?.SequenceNumber]);
    expect(warnings).toHaveLength(2);
  });

  it('skips a segment whose packed records do not read, logged (no bytes) and counted, and routes the rest of the batch', async () => {
    const wake = new RecordingRoute('wake');
    const notice = new RecordingRoute('notice');
    const errors: Array<[string, Record<string, unknown>]> = [];
    const dispatcher = new Dispatcher({ wake: [wake], notice: [notice] }, clock, { warn: () => undefined, error: (m, d) => errors.push([m, d]) });
    const packed = (record: ChangeRecord, bytes: Buffer): ChangeRecord => {
      const image = { ...record.dynamodb!.NewImage! };
      delete image.m;
      return { ...record, dynamodb: { ...record.dynamodb, NewImage: { ...image, n: { N: '3' }, mz: { B: bytes.toString('base64') } } } };
    };
    const before = segmentInsert('t:a/p:0', ['a']);
    // Not DEFLATE at all; and a DEFLATE whose frame header is not JSON (a secret-looking body in it).
    const garbage = packed(segmentInsert('t:a/p:1', ['a']), Buffer.from('not deflate at all, not at all'));
    const badFrame = packed(segmentInsert('t:f/k:x', ['f'], { nf: 2, w: true }), deflateRawSync(Buffer.from('[{"t":"f","i":"m1"\nsecret-body-hunter2')));
    const after = segmentInsert('t:f/k:y', ['f'], { nf: 1 });
    expect(await dispatcher.dispatch([before, garbage, badFrame, after])).toEqual({ batchItemFailures: [] });
    expect(wake.calls.flat().map((s) => s.id)).toEqual([before.dynamodb?.SequenceNumber]);
    expect(notice.calls.flat().map((s) => s.id)).toEqual([after.dynamodb?.SequenceNumber]);
    expect(dispatcher.unreadable).toBe(2);
    expect(errors.map(([m, d]) => [m, d.stream, d.messages, d.reason])).toEqual([
      ['dispatcher skipped an unreadable segment', 't:a/p:1', 3, 'Z_DATA_ERROR'],
      ['dispatcher skipped an unreadable segment', 't:f/k:x', 3, 'SyntaxError'],
    ]);
    expect(JSON.stringify(errors)).not.toMatch(/hunter2|not deflate/);
  });

  it('leaves a kind with no route alone (its routes come with later work)', async () => {
    const dispatcher = new Dispatcher({}, clock);
    expect(await dispatcher.dispatch([segmentInsert('t:f/k:x', ['f'], { nf: 3 })])).toEqual({ batchItemFailures: [] });
  });
});

describe('ActivityRoute', () => {
  it('stamps the standard partitions its segments landed in, per topic (none for shards or other topics\' streams)', async () => {
    const touches: Array<[string, number[]]> = [];
    const route = new ActivityRoute({ touch: async (topic, _at, partitions = []) => (touches.push([topic, [...partitions].sort((x, y) => x - y)]), true) });
    const dispatcher = new Dispatcher({ wake: [route] }, clock);
    await dispatcher.dispatch([
      segmentInsert('t:a/p:7', ['a']),
      segmentInsert('t:a/p:255', ['a']),
      segmentInsert('t:a/p:7', ['a']),
      segmentInsert('o:g/k:x', ['b']),
      segmentInsert('r:grp/p:0', ['a']),
    ]);
    expect(touches.sort()).toEqual([
      ['a', [7, 255]],
      ['b', []],
    ]);
  });

  it("stamps a FIFO topic's notice streams as its partitions, insisting on every stamp of a topic with more than 4 (a topic with the default 4 is never sampled)", async () => {
    const touches: Array<[string, number[], boolean | undefined]> = [];
    const asked: string[] = [];
    const fifo = (name: string, partitions: number) => ({ ...build.topic({ type: 'fifo', partitions }), name, generation: 1, createdAt: 0 }) as Topic;
    const catalog = {
      topic: async (name: string) => (asked.push(name), name === 'low' ? fifo('low', 16) : name === 'plain' ? fifo('plain', 4) : undefined),
    };
    // Every touch loses its first race: a function rule is asked then.
    const route = new ActivityRoute(
      {
        touch: async (topic, _at, partitions = [], insist) => (
          touches.push([topic, [...partitions].sort((x, y) => x - y), typeof insist === 'function' ? await insist() : insist]), true
        ),
      },
      undefined,
      catalog,
    );
    const dispatcher = new Dispatcher({ wake: [route] }, clock);
    await dispatcher.dispatch([
      segmentInsert('t:wide/n:200', ['wide']),
      segmentInsert('t:wide/n:3', ['wide']),
      segmentInsert('t:low/n:2', ['low']),
      segmentInsert('t:low/n:0', ['low']),
      segmentInsert('t:plain/n:2', ['plain']),
      segmentInsert('o:og/n:1', ['x']),
    ]);
    expect(touches.sort()).toEqual([
      ['low', [0, 2], true],
      ['plain', [2], false],
      ['wide', [3, 200], true],
      ['x', [], false],
    ]);
    // Only topics stamped on streams 0–3 alone are looked up (a stamp past the 4th says enough).
    expect(asked.sort()).toEqual(['low', 'plain']);
  });

  it('writes each topic once per invocation, at the invocation time', async () => {
    const touches: Array<[string, number]> = [];
    const route = new ActivityRoute({ touch: async (topic, at) => (touches.push([topic, at]), true) });
    const dispatcher = new Dispatcher({ wake: [route] }, clock);
    const records = [
      segmentInsert('t:a/p:0', ['a']),
      segmentInsert('t:a/p:1', ['a']),
      segmentInsert('o:g/k:x', ['b', 'c', 'b']),
      segmentInsert('t:d/p:0', ['d'], { nf: 1 }), // notice only: not a wake
    ];
    await dispatcher.dispatch(records);
    expect(touches.sort()).toEqual([
      ['a', clock.now()],
      ['b', clock.now()],
      ['c', clock.now()],
    ]);
  });

  it('fails exactly the segments of a topic whose write failed', async () => {
    const route = new ActivityRoute({
      touch: async (topic) => {
        if (topic === 'b') throw new Error('throttled');
        return true;
      },
    });
    const dispatcher = new Dispatcher({ wake: [route] }, clock);
    const records = [segmentInsert('t:a/p:0', ['a']), segmentInsert('o:g/k:x', ['a', 'b']), segmentInsert('t:b/p:0', ['b'])];
    const { batchItemFailures } = await dispatcher.dispatch(records);
    expect(batchItemFailures.map((f) => f.itemIdentifier)).toEqual([records[1]?.dynamodb?.SequenceNumber, records[2]?.dynamodb?.SequenceNumber]);
  });
});
