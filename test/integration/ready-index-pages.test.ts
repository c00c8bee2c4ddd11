/**
 * How many Queries a read of one ready-index key makes (lib/adapters/dynamodb/ready-index.ts
 * `readyUnder`): one when the key holds at most `limit` ready entries — exactly `limit` included —
 * and two (the first page and a spread one) when it holds more.
 */
import { BatchWriteCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { cursorPk, readyIndexPk, readyNowKey } from '../../lib/adapters/dynamodb/keys.js';
import { harness, testTable, type Harness } from '../helpers/stores.js';

let h: Harness;
let queries = 0;

/** `n` shard cursors of group `g`, each ready now under the group's home key. */
const readyShards = async (g: string, n: number) => {
  const items = Array.from({ length: n }, (_, i) => {
    const stream = `t:ledger/k:K${i}`;
    return { pk: cursorPk(g), sk: stream, nx: 1, ns: 1, fl: {}, dn: {}, cm: 0, dl: 0, kn: 1, g1pk: readyIndexPk(g), g1sk: readyNowKey(stream) };
  });
  for (let i = 0; i < items.length; i += 25) {
    await h.doc.send(new BatchWriteCommand({ RequestItems: { [h.table]: items.slice(i, i + 25).map((Item) => ({ PutRequest: { Item } })) } }));
  }
};

beforeAll(async () => {
  const table = await testTable();
  table.client.middlewareStack.add(
    (next, context) => async (args) => {
      if (context.commandName === 'QueryCommand') queries++;
      return next(args);
    },
    { step: 'initialize', name: 'countQueries' },
  );
  h = harness(table.doc, table.table);
  await readyShards('exact', 20);
  await readyShards('more', 21);
});

describe('a ready-index key read for 20 shards', () => {
  it('holding exactly 20: one Query, all 20', async () => {
    queries = 0;
    const found = await h.stores.readyIndex.ready('exact', h.clock.now(), 20, 0.5);
    expect(new Set(found).size).toBe(20);
    expect(queries).toBe(1);
  });

  it('holding 21: the first page and a spread one, 20 of them', async () => {
    queries = 0;
    const found = await h.stores.readyIndex.ready('more', h.clock.now(), 20, 0.5);
    expect(new Set(found).size).toBe(20);
    expect(queries).toBe(2);
  });
});
