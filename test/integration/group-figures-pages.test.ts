/**
 * A group's figures over more than one Query page of cursors (docs/design.md, Per-group metrics): a
 * FIFO group keeps a cursor per shard it touched, idle ones for 15 days. `GET /v1/groups/{g}` and
 * the per-minute metrics read a group's cursors whole while they fit in `FIGURE_PAGES_MAX` Query
 * pages (1 MB each), without their completions (`dn`, the bulk of an idle shard's cursor); past
 * that they read only the cursors with work (partition cursors and the shards on the ready index)
 * and answer `committed: null`. On DynamoDB Local, with cursor items written as the table stores
 * them, large enough that the group's take 2 pages.
 */
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { beforeEach, describe, expect, it } from 'vitest';
import { toItem } from '../../lib/adapters/dynamodb/cursor-item.js';
import { readyNowKey } from '../../lib/adapters/dynamodb/keys.js';
import { DoneOutcome, type CursorState, type DoneEntry, type Lease } from '../../lib/domain/cursor.js';
import { FIGURE_PAGES_MAX, GroupFigures } from '../../lib/services/group-figures.js';
import { newHarness, type Harness } from '../helpers/stores.js';
import { group, topic } from '../helpers/builders.js';
import { attributeText } from '../helpers/marshalled.js';

let h: Harness;

/** Idle shards (no leases, nothing waiting: off the ready index) and busy ones (on it), whose keys sort last: past the first page. */
const IDLE = 24;
const BUSY = 3;
const LEASES = 100;
/** ≈ 60 KB of completions per cursor: 24 cursors ≈ 1.4 MB, more than one Query page. */
const COMPLETIONS = 5_000;

/** A shard cursor of group `g` on topic `f`: 5,000 completions, and when busy 100 leases with two messages waiting after them. */
function shardCursor(name: string, busy: boolean, now: number): CursorState {
  const leases = new Map<number, Lease>();
  if (busy) {
    for (let seq = COMPLETIONS + 1; seq <= COMPLETIONS + LEASES; seq++) {
      leases.set(seq, { seq, expiresAt: now + 600_000, token: `1.t${seq}`, deliveries: 1, segment: seq, topic: undefined, pending: false });
    }
  }
  const done = new Map<number, DoneEntry>();
  for (let seq = 1; seq <= COMPLETIONS; seq++) done.set(seq, { seq, at: now, outcome: DoneOutcome.committed, deliveries: 1 });
  const next = COMPLETIONS + (busy ? LEASES : 0) + 1;
  const stream = `t:f/k:${name}`;
  return {
    group: 'g',
    stream,
    next,
    segmentStart: next,
    leases,
    done,
    committed: COMPLETIONS,
    deadLettered: 0,
    known: busy ? next + 1 : next - 1, // a busy shard: two messages wait after the leases
    readyAt: busy ? 0 : undefined,
    ...(busy ? { readyKey: readyNowKey(stream) } : {}),
    createdAt: now,
  };
}

beforeEach(async () => {
  h = await newHarness();
  await h.admin.putTopic('f', topic({ type: 'fifo' }));
  await h.admin.putGroup('g', group('f', { deliveryMode: 'concurrent' }));
  const now = h.clock.now();
  for (let i = 0; i < IDLE; i++) await h.doc.send(new PutCommand({ TableName: h.table, Item: toItem(shardCursor(`idle${i}`, false, now)) }));
  for (let i = 0; i < BUSY; i++) await h.doc.send(new PutCommand({ TableName: h.table, Item: toItem(shardCursor(`z-busy${i}`, true, now)) }));
});

describe('group figures over many cursors', () => {
  it('reads the cursors page by page, without their completions, and says when more follow', async () => {
    const pages: Array<{ size: number; more: boolean }> = [];
    for await (const { cursors, more } of h.stores.cursors.figurePages('g', h.clock.now(), 10, 't:f/k:')) {
      pages.push({ size: cursors.length, more });
      for (const cursor of cursors) expect(cursor.done.size).toBe(0);
    }
    expect(pages.length).toBeGreaterThanOrEqual(2);
    expect(pages.map((p) => p.more)).toEqual([...pages.slice(1).map(() => true), false]);
    // The shard cursors, each once (not the notice-stream cursors: another prefix).
    expect(pages.reduce((a, p) => a + p.size, 0)).toBe(IDLE + BUSY);
    // At most the pages asked for.
    const first: boolean[] = [];
    for await (const { more } of h.stores.cursors.figurePages('g', h.clock.now(), 1, 't:f/k:')) first.push(more);
    expect(first).toEqual([true]);
  });

  it('a group whose cursors fit the pages read is added up whole: in flight, waiting, committed', async () => {
    const figures = await new GroupFigures(h.stores, h.clock, 10).of((await h.stores.catalog.getGroup('g'))!);
    expect(figures).toMatchObject({ inFlight: BUSY * LEASES, backlog: BUSY * 2, pending: 0, committed: (IDLE + BUSY) * COMPLETIONS, deadLettered: 0 });
  });

  it('past the pages read, GET group reads the cursors with work only: the same backlog and in flight, committed null', async () => {
    expect(FIGURE_PAGES_MAX).toBe(1);
    const calls: Array<{ command: string; input: Record<string, unknown> }> = [];
    h.doc.middlewareStack.add(
      (next, context) => async (args) => {
        calls.push({ command: String(context.commandName), input: args.input as Record<string, unknown> });
        return next(args);
      },
      { step: 'initialize', name: 'figureCalls' },
    );
    const figures = await h.admin.getGroup('g');
    h.doc.middlewareStack.remove('figureCalls');
    expect(figures).toMatchObject({ inFlight: BUSY * LEASES, backlog: BUSY * 2, pending: 0, committed: null, deadLettered: 0 });
    // One page of the cursor Query, not the second; the busy shards' cursors by key from the ready index.
    const values = (input: Record<string, unknown>) => input.ExpressionAttributeValues as Record<string, unknown>;
    const shardQueries = calls.filter(({ command, input }) => command.startsWith('Query') && attributeText(values(input)[':pk']) === 'C#g' && attributeText(values(input)[':prefix']) === 't:f/k:');
    expect(shardQueries).toHaveLength(1);
    const read = calls
      .filter(({ command }) => command.startsWith('BatchGet'))
      .flatMap(({ input }) => Object.values(input.RequestItems as Record<string, { Keys: Array<{ sk: unknown }> }>).flatMap((r) => r.Keys.map((k) => attributeText(k.sk))));
    expect(read.filter((sk) => sk.startsWith('t:f/k:')).sort()).toEqual(Array.from({ length: BUSY }, (_, i) => `t:f/k:z-busy${i}`));
  });

  it('PATCH deliveryMode finds leases past the pages read (the busy shards are on the ready index)', async () => {
    await expect(h.admin.putGroup('g', group('f', { deliveryMode: 'serialized' }))).rejects.toMatchObject({ code: 'Conflict' });
  });
});

describe('a group of standard topics past one page of cursors', () => {
  it('is read whole (only FIFO shard cursors count against the page), each partition head once', async () => {
    await h.admin.putTopic('s', topic({ partitions: 64 }));
    await h.admin.putGroup('p', group('s'));
    const now = h.clock.now();
    // 64 partition cursors of ≈ 24 KB of completions each: ≈ 1.5 MB, more than one Query page.
    const done = new Map<number, DoneEntry>();
    for (let seq = 1; seq <= 2_000; seq++) done.set(seq, { seq, at: now, outcome: DoneOutcome.committed, deliveries: 1 });
    const cursors = (await h.stores.cursors.list('p', now)).filter((c) => c.stream.startsWith('t:s/p:'));
    expect(cursors).toHaveLength(64);
    for (const cursor of cursors) await h.doc.send(new PutCommand({ TableName: h.table, Item: toItem({ ...cursor, done, next: 2_001, segmentStart: 2_001, committed: 2_000 }) }));
    const heads: string[] = [];
    h.doc.middlewareStack.add(
      (next, context) => async (args) => {
        const pk = attributeText((args.input as { ExpressionAttributeValues?: Record<string, unknown> }).ExpressionAttributeValues?.[':pk']);
        if (String(context.commandName).startsWith('Query') && pk.startsWith('S#t:s/p:')) heads.push(pk);
        return next(args);
      },
      { step: 'initialize', name: 'heads' },
    );
    const figures = await h.admin.getGroup('p');
    h.doc.middlewareStack.remove('heads');
    expect(figures).toMatchObject({ committed: 64 * 2_000, backlog: 0, inFlight: 0 });
    expect(new Set(heads).size).toBe(64);
    expect(heads).toHaveLength(64);
  });
});
