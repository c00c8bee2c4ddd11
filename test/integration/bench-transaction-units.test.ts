/**
 * The bench's transaction units (bench/transaction-units.ts) on DynamoDB Local: DynamoDB Local reports
 * one item's units (doubled) for a transaction of several; the meter computes 2 × every item's units,
 * each at the larger of its size before and after, plus the index entries it adds, moves or removes.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { PutCommand, TransactWriteCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { Meter, diff, type Snapshot } from '../../bench/meter.js';
import { itemReader } from '../../bench/transaction-units.js';
import { createDynamoClients } from '../../lib/adapters/dynamodb/client.js';
import { dynamoEndpoint } from '../helpers/dynamo-endpoint.js';
import { testTable } from '../helpers/stores.js';

describe('bench transaction units', () => {
  let client: DynamoDBClient;
  let doc: DynamoDBDocumentClient;
  let table: string;
  const meter = new Meter();

  beforeAll(async () => {
    ({ client, doc, table } = await testTable('txunits'));
    meter.instrumentDynamo(client);
    // The reader must not be counted: a client of its own on the same endpoint.
    meter.readItemsWith(itemReader(createDynamoClients({ endpoint: dynamoEndpoint() }).client));
  });

  const units = async (fn: () => Promise<unknown>) => {
    const before = meter.snapshot();
    await fn();
    const counted: Snapshot = diff(meter.snapshot(), before);
    const tx = Object.entries(counted.dynamo).find(([k]) => k.endsWith('|TransactWriteItems'))?.[1];
    return { table: tx?.wruTable ?? 0, gsi: tx?.wruGsi ?? 0, calls: tx?.calls ?? 0, samples: counted.check.samples };
  };
  const body = (n: number) => 'x'.repeat(n);

  it('counts every put of a transaction, each rounded up on its own and doubled', async () => {
    const three = await units(() =>
      doc.send(
        new TransactWriteCommand({
          TransactItems: [1, 2, 3].map((i) => ({ Put: { TableName: table, Item: { pk: `P#${i}`, sk: 'a', b: body(900) } } })),
        }),
      ),
    );
    expect(three).toMatchObject({ calls: 1, table: 6, gsi: 0 });
    // DynamoDB Local said 2: the disagreement is on record in the cross-check.
    expect(three.samples.some((s) => s.startsWith('TransactWriteItemsCommand: DynamoDB Local 2, size model 6'))).toBe(true);

    const big = await units(() =>
      doc.send(
        new TransactWriteCommand({
          TransactItems: [1, 2].map((i) => ({ Put: { TableName: table, Item: { pk: `Q#${i}`, sk: 'a', b: body(2_900) } } })),
        }),
      ),
    );
    expect(big).toMatchObject({ table: 12, gsi: 0 });
  });

  it('bills an update at the larger of its item before and after, and each index entry it removes', async () => {
    for (const i of [1, 2]) await doc.send(new PutCommand({ TableName: table, Item: { pk: `X#${i}`, sk: 'x', b: body(900), g1pk: 'T#1', g1sk: `s${i}` } }));
    const released = await units(() =>
      doc.send(
        new TransactWriteCommand({
          TransactItems: [
            ...[1, 2].map((i) => ({
              Update: { TableName: table, Key: { pk: `X#${i}`, sk: 'x' }, UpdateExpression: 'SET st = :s REMOVE g1pk, g1sk', ExpressionAttributeValues: { ':s': 'released' } },
            })),
            { Put: { TableName: table, Item: { pk: 'S#seg', sk: '0000000000000001', b: body(900) } } },
          ],
        }),
      ),
    );
    // Three items of ≤ 1 KiB: 2 × 3; two index entries removed: 2 × 2.
    expect(released).toMatchObject({ table: 6, gsi: 4 });

    const grown = await units(() =>
      doc.send(
        new TransactWriteCommand({
          TransactItems: [
            { Update: { TableName: table, Key: { pk: 'X#1', sk: 'x' }, UpdateExpression: 'SET c = :c, g1pk = :pk, g1sk = :sk', ExpressionAttributeValues: { ':c': body(1_000), ':pk': 'T#2', ':sk': 's' } } },
            { Delete: { TableName: table, Key: { pk: 'X#2', sk: 'x' } } },
          ],
        }),
      ),
    );
    // X#1 grows past 1 KiB (2 × 2) and gains an entry (2 × 1); X#2's delete is billed at its size (2 × 1).
    expect(grown).toMatchObject({ table: 6, gsi: 2 });
  });

  it('bills a condition check as a write of the item it checks', async () => {
    await doc.send(new PutCommand({ TableName: table, Item: { pk: 'C#1', sk: 'c', b: body(2_500) } }));
    const checked = await units(() =>
      doc.send(
        new TransactWriteCommand({
          TransactItems: [
            { ConditionCheck: { TableName: table, Key: { pk: 'C#1', sk: 'c' }, ConditionExpression: 'attribute_exists(pk)' } },
            { Put: { TableName: table, Item: { pk: 'C#2', sk: 'c', b: body(100) } } },
          ],
        }),
      ),
    );
    expect(checked).toMatchObject({ table: 2 * 3 + 2 * 1, gsi: 0 });
  });
});
