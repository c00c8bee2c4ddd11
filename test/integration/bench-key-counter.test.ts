/**
 * The bench's per-unit counter (bench/meter.ts, bench/key-units.ts) on DynamoDB Local: a FIFO shard
 * claim that puts the cursor on the ready index, one that loses, and one that takes it off — the
 * cursor item takes the table units, claims and lost claims, the group's ready-index key the index
 * units DynamoDB Local reports.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { PutCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { Meter, diff } from '../../bench/meter.js';
import { claimUpdate } from '../../lib/adapters/dynamodb/cursor-updates.js';
import { readyNowKey } from '../../lib/adapters/dynamodb/keys.js';
import { testTable } from '../helpers/stores.js';

describe('bench key counter', () => {
  let client: DynamoDBClient;
  let doc: DynamoDBDocumentClient;
  let table: string;
  const meter = new Meter();

  beforeAll(async () => {
    ({ client, doc, table } = await testTable('keys'));
    meter.instrumentDynamo(client);
  });

  it('puts claim writes on the cursor item and index writes on R#<group>, lost claims included', async () => {
    const stream = 't:x/k:a';
    const key = { pk: 'C#g', sk: stream };
    const now = Date.now();
    await doc.send(new PutCommand({ TableName: table, Item: { ...key, nx: 5, ns: 5, kn: 5, fl: {} } }));
    const claim = (expectNext: number, index: { from: string | undefined; to: string | undefined }) =>
      claimUpdate('g', { expectNext, next: expectNext + 1, segmentStart: 5, grant: [], close: [], forgetDone: [], shard: { expectKnown: 5, expectInFlight: 0, known: 5, now, index } });
    const before = meter.snapshot();
    await meter.als.run({ tag: 'k', route: 'r' }, async () => {
      await doc.send(new UpdateCommand({ TableName: table, Key: key, ...claim(5, { from: undefined, to: readyNowKey(stream) }) }));
      // The same plan again: nx moved, the claim is lost.
      await expect(doc.send(new UpdateCommand({ TableName: table, Key: key, ...claim(5, { from: undefined, to: readyNowKey(stream) }) }))).rejects.toMatchObject({ name: 'ConditionalCheckFailedException' });
      await doc.send(new UpdateCommand({ TableName: table, Key: key, ...claim(6, { from: readyNowKey(stream), to: undefined }) }));
    });
    const counted = diff(meter.snapshot(), before);
    expect(counted.keys['k|C#g @ t:x/k:a']).toMatchObject({ writes: 2, failedWrites: 1, claims: 2, lostClaims: 1, wcu: 3 });
    // An index entry put (1) and deleted (1), as DynamoDB Local reports them.
    expect(counted.keys['k|gsi1 R#g']).toMatchObject({ wcu: 2 });
    expect(Object.keys(counted.keys).sort()).toEqual(['k|C#g @ t:x/k:a', 'k|gsi1 R#g']);
  });
});
