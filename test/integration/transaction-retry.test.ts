/**
 * A TransactWriteItems whose answer is lost after it landed stays idempotent across the SDK's retry
 * (docs/design.md, Append, "A put that landed, retried"): the SDK repeats its ClientRequestToken, and
 * DynamoDB (Local) answers a repeated token with success. The reason appends written in a
 * transaction need no try token. (A review checked that the send test fails when the retry carries a
 * fresh token: the message was stored twice.)
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { TransactWriteItemsCommand } from '@aws-sdk/client-dynamodb';
import { beforeEach, describe, expect, it } from 'vitest';
import { harness, send, testTable, type Harness } from '../helpers/stores.js';
import * as build from '../helpers/builders.js';
import { loseNextAnswer } from '../helpers/lost-answers.js';

let h: Harness;
let client: DynamoDBClient;
let table: string;

/** Loses the answer of the next transaction after it landed; records the ClientRequestToken each attempt sent. */
function loseNextTransactionAnswer() {
  const tokens: string[] = [];
  const text = (b: unknown) => (b instanceof Uint8Array ? Buffer.from(b).toString('utf8') : String(b ?? ''));
  const seen = loseNextAnswer(client, (command, _input, request) => {
    if (command !== 'TransactWriteItemsCommand') return false;
    tokens.push(/"ClientRequestToken":"([^"]+)"/.exec(text(request.body))?.[1] ?? '');
    return true;
  });
  return Object.assign(seen, { tokens });
}

describe('a transaction retried by the SDK after it landed', () => {
  beforeEach(async () => {
    const t = await testTable();
    client = t.client;
    table = t.table;
    h = harness(t.doc, t.table);
  });

  it('DynamoDB Local answers a repeated ClientRequestToken with success', async () => {
    const input = {
      ClientRequestToken: 'repeated-token-1',
      TransactItems: [
        { Put: { TableName: table, Item: { pk: { S: 'R#1' }, sk: { S: 'a' } }, ConditionExpression: 'attribute_not_exists(pk)' } },
        { Put: { TableName: table, Item: { pk: { S: 'R#1' }, sk: { S: 'b' } }, ConditionExpression: 'attribute_not_exists(pk)' } },
      ],
    };
    await client.send(new TransactWriteItemsCommand(input));
    let second: string;
    try {
      await client.send(new TransactWriteItemsCommand(input));
      second = 'ok';
    } catch (error) {
      second = (error as Error).name;
    }
    expect(second).toBe('ok');
  });

  it('stores an epoch-opening standard send (sentinel + segment transaction) once', async () => {
    await h.admin.putTopic('t', build.topic({ partitions: 1 }));
    await h.admin.putGroup('g', build.group('t'));
    const seen = loseNextTransactionAnswer();
    const sent = await h.queue.send('t', send('once'));
    expect(seen.lost).toBe(1);
    expect(seen.sent).toBe(2);
    expect(seen.tokens[1]).toBe(seen.tokens[0]);
    const got: Array<{ body: string; messageId: string }> = [];
    for (let i = 0; i < 5; i++) got.push(...(await h.queue.receive('g', { maxMessages: 10, waitSeconds: 0 })));
    expect(got.map((m) => [m.body, m.messageId])).toEqual([['once', sent.messageId]]);
  });
});
