/**
 * Straggler runs (lib/adapters/dynamodb/history.ts): a spill whose stragglers hold a whole range's
 * completions — one entry of `dn` (docs/design.md, Range claims, "One completion a range") — writes
 * them as one history item, as `dn` stores them, not one item a member: a spill across ranges still
 * leased made every member a straggler, 10 items a range, and the history key bound one hot shard
 * under 64 consumers (2.5 write units a message on `H#`, 2026-12-05). `find` reads the chunk, the
 * straggler and the runs that may hold a number at once, and the later completion counts. On
 * DynamoDB Local.
 */
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { beforeEach, describe, expect, it } from 'vitest';
import { HistoryStore } from '../../lib/adapters/dynamodb/history.js';
import { historyPk } from '../../lib/adapters/dynamodb/keys.js';
import type { DoneEntry } from '../../lib/domain/cursor.js';
import { testTable } from '../helpers/stores.js';

const GROUP = 'g';
const STREAM = 't:t/k:k';
const CREATED = 1_700_000_000_000;
const S = 1796000000000001;
const TTL = 2_000_000_000;

let store: HistoryStore;
let items: () => Promise<string[]>;

beforeEach(async () => {
  const { doc, table } = await testTable('history-runs');
  store = new HistoryStore(doc, table);
  items = async () => {
    const { Items } = await doc.send(new QueryCommand({ TableName: table, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': historyPk(GROUP, STREAM) }, ConsistentRead: true }));
    return (Items ?? []).map((i) => String(i.sk).slice(String(i.sk).indexOf('#') + 1));
  };
});

/** The members of a run of `n` from `start`, committed at `at` in seek epoch `epoch`, as `toState` reads them. */
const run = (start: number, n: number, at: number, epoch?: number): DoneEntry[] =>
  Array.from({ length: n }, (_, i) => ({ seq: start + i, at, deliveries: 1, outcome: 'committed' as const, run: { start, n }, ...(epoch ? { epoch } : {}) }));
const own = (seq: number, at: number, epoch?: number): DoneEntry => ({ seq, at, deliveries: 2, outcome: 'committed', ...(epoch ? { epoch } : {}) });

describe('straggler runs in history', () => {
  it('a run of 10 stragglers is one item; every member is found as the run stored it; a completion of its own stays an item of its own', async () => {
    const stragglers = [...run(S, 10, 5_000), own(S + 20, 6_000)];
    await store.write(GROUP, STREAM, CREATED, new Map(stragglers.map((e) => [e.seq, e])), { expectMark: S + 30, chunk: undefined, stragglers }, TTL);
    expect((await items()).sort()).toEqual([`r${S}.0`, `s${S + 20}`].sort());
    for (let i = 0; i < 10; i++) expect(await store.find(GROUP, STREAM, CREATED, S + i)).toMatchObject({ seq: S + i, at: 5_000, outcome: 'committed', deliveries: 1 });
    expect(await store.find(GROUP, STREAM, CREATED, S + 20)).toMatchObject({ seq: S + 20, at: 6_000, deliveries: 2 });
    expect(await store.find(GROUP, STREAM, CREATED, S + 10)).toBeUndefined();
    expect(await store.find(GROUP, STREAM, CREATED, S - 1)).toBeUndefined();
  });

  it('the later completion counts: a replay run over an earlier one, a chunk holding a later completion of a run member', async () => {
    // Run of epoch 0 spilled as stragglers, then the replay's run of the same numbers (epoch 1).
    const first = run(S, 10, 5_000);
    await store.write(GROUP, STREAM, CREATED, new Map(first.map((e) => [e.seq, e])), { expectMark: S + 10, chunk: undefined, stragglers: first }, TTL);
    const replay = run(S, 10, 4_000, 1);
    await store.write(GROUP, STREAM, CREATED, new Map(replay.map((e) => [e.seq, e])), { expectMark: S + 10, chunk: undefined, stragglers: replay }, TTL);
    expect(await store.find(GROUP, STREAM, CREATED, S + 3)).toMatchObject({ epoch: 1, at: 4_000 });
    // A run spilled with members above the mark too; the chunk holds a later completion of one of them.
    const straddling = run(S + 100, 10, 7_000);
    const later = own(S + 107, 8_000, 2);
    await store.write(GROUP, STREAM, CREATED, new Map([...straddling.slice(0, 5), later].map((e) => [e.seq, e])), {
      expectMark: undefined,
      chunk: { first: S + 105, last: S + 109, entries: [...straddling.slice(5, 7), later, ...straddling.slice(8)] },
      stragglers: straddling.slice(0, 5),
    }, TTL);
    expect(await store.find(GROUP, STREAM, CREATED, S + 107)).toMatchObject({ epoch: 2, at: 8_000 });
    expect(await store.find(GROUP, STREAM, CREATED, S + 106)).toMatchObject({ seq: S + 106, at: 7_000 });
    expect((await store.find(GROUP, STREAM, CREATED, S + 106))?.epoch).toBeUndefined();
    expect(await store.find(GROUP, STREAM, CREATED, S + 102)).toMatchObject({ at: 7_000 });
  });
});
