/**
 * A receive's claim (one conditional UpdateItem of the group's cursor, conditional on the `nx` it
 * read) whose answer is lost after it landed is retried by the SDK; the retry meets the cursor its
 * own claim left and fails its condition. Without recognising its own leases in the failed
 * condition's old image (cursor-updates.ts `claimLanded`), the receiver took the claim for lost,
 * planned again past the messages it had just leased and answered without them: they stayed
 * invisible for the visibility timeout and came back with deliveryCount 2 (docs/design.md, Append,
 * "A put that landed, retried").
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { beforeEach, describe, expect, it } from 'vitest';
import { harness, send, testTable, type Harness } from '../helpers/stores.js';
import * as build from '../helpers/builders.js';
import { loseNextAnswer } from '../helpers/lost-answers.js';

let h: Harness;
let client: DynamoDBClient;

/** Loses the answer of the next claim of a cursor (an UpdateItem of a `C#` item that sets `nx`) after it landed. */
const loseNextClaimAnswer = () =>
  loseNextAnswer(
    client,
    (command, input) =>
      command === 'UpdateItemCommand' && String(input.Key?.pk?.S ?? '').startsWith('C#') && /\bnx = /.test(String(input.UpdateExpression ?? '')),
  );

describe("a receive's claim retried by the SDK after it landed", () => {
  beforeEach(async () => {
    const t = await testTable();
    client = t.client;
    h = harness(t.doc, t.table);
  });

  it('delivers the messages it leased (standard topic)', async () => {
    await h.admin.putTopic('t', build.topic({ partitions: 1 }));
    await h.admin.putGroup('g', build.group('t'));
    await h.queue.send('t', send('a'));
    await h.queue.send('t', send('b'));
    const seen = loseNextClaimAnswer();
    const got = await h.queue.receive('g', { maxMessages: 10, waitSeconds: 0 });
    expect(seen.lost).toBe(1);
    expect(got.map((m) => [m.body, m.deliveryCount])).toEqual([
      ['a', 1],
      ['b', 1],
    ]);
    // The handles it answered are the leases the landed claim wrote: they commit.
    const committed = await h.queue.commit('g', got.map((m) => ({ receiptHandle: m.receiptHandle, publish: [] })));
    expect(committed.map((r) => ('status' in r ? r.status : r.error.code))).toEqual(['committed', 'committed']);
  });

  it('delivers the message it leased (FIFO shard, serialized)', async () => {
    await h.admin.putTopic('f', build.topic({ type: 'fifo' }));
    await h.admin.putGroup('g', build.group('f'));
    await h.queue.send('f', send('first', { shardKey: 'k' }));
    await h.queue.send('f', send('second', { shardKey: 'k' }));
    const seen = loseNextClaimAnswer();
    const got = await h.queue.receive('g', { maxMessages: 10, waitSeconds: 0 });
    expect(seen.lost).toBe(1);
    expect(got.map((m) => [m.body, m.deliveryCount])).toEqual([['first', 1]]);
  });
});
