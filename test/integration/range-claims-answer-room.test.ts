/**
 * Range claims and the answer's room (SPEC §3.3: a receive never leases a message it cannot
 * return): a grant reads the records it can meet first and takes no more members than the answer
 * holds — else another container's grant between it and its write-out delivers later messages of
 * the shard first (docs/design.md, Range claims).
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { beforeEach, describe, expect, it } from 'vitest';
import { createDynamoClients } from '../../lib/adapters/dynamodb/client.js';
import { Limits } from '../../lib/domain/model.js';
import { contendedClaims } from '../helpers/contended-claims.js';
import { dynamoEndpoint } from '../helpers/dynamo-endpoint.js';
import { FakeClock, harness, send, testTable, type Harness } from '../helpers/stores.js';
import * as build from '../helpers/builders.js';
import { keysCursorOf } from '../helpers/marshalled.js';

const SHARD = 't:t/k:k';
const KEY = `g\u0000${SHARD}`;
const contended = () => contendedClaims([KEY]);
const BODY = 20_000;
const body = (i: number) => `m${i}-`.padEnd(BODY, 'x');
const names = (messages: Array<{ body: string }>) => messages.map((m) => m.body.split('-')[0] ?? '');

let a: Harness;
let b: Harness;
let aClient: DynamoDBClient;

/** Runs `rival` once, just after A's first cursor write that moves the shard's `nx` (its claim) landed. */
function afterClaimWrite(rival: () => Promise<unknown>): void {
  let armed = true;
  aClient.middlewareStack.add(
    (next, context) => async (args) => {
      const result = await next(args);
      const input = args.input as { UpdateExpression?: string };
      if (armed && context.commandName === 'UpdateItemCommand' && keysCursorOf(args.input, SHARD) && /ADD nx|SET nx =/.test(input.UpdateExpression ?? '')) {
        armed = false;
        await rival();
      }
      return result;
    },
    { step: 'initialize', name: 'afterClaimWrite' },
  );
}

describe('range claims: members the answer has no room for', () => {
  beforeEach(async () => {
    const { doc, table } = await testTable();
    const clock = new FakeClock();
    const mine = createDynamoClients({ endpoint: dynamoEndpoint(), requestTimeoutMs: 10_000 });
    aClient = mine.client;
    a = harness(mine.doc, table, { clock, claimContention: contended() });
    b = harness(doc, table, { clock, claimContention: contended() });
    await a.admin.putTopic('t', build.topic({ type: 'fifo' }));
    await a.admin.putGroup('g', build.group('t', { deliveryMode: 'concurrent', visibilityTimeoutSeconds: 60, retryPolicy: { initialSeconds: 0 } }));
    for (let i = 1; i <= 40; i++) await a.queue.send('t', send(body(i), { shardKey: 'k' }));
  });

  it('a receive never leases a message it cannot return: no later message of the shard is delivered before it', async () => {
    let rival: string[] = [];
    afterClaimWrite(async () => {
      rival = names(await b.queue.receive('g', { maxMessages: 10, waitSeconds: 0 }));
    });
    // A's answer has room for 7 messages of ~20 KB.
    const got = await a.queue.receive('g', { maxMessages: 10, waitSeconds: 0, answerBytesUsed: Limits.answerMaxBytes - 7.5 * (BODY + 400) });
    expect(names(got)).toEqual(['m1', 'm2', 'm3', 'm4', 'm5', 'm6', 'm7']);
    // m8..m10 were never delivered to anyone: nothing after them may be delivered first (FIFO, concurrent: "delivered in order").
    expect(rival.slice(0, 3)).toEqual(['m8', 'm9', 'm10']);
  });
});
