/**
 * A segment put whose answer is lost after it landed (a socket timeout, a reset) is retried by the
 * SDK; the retry must pass on its own item, not fail as a lost race and append the messages again
 * (docs/design.md, Append, "A put that landed, retried"). On DynamoDB Local, with a middleware
 * below the SDK's retries that lets the first segment PutItem through and then throws a retryable
 * TimeoutError, as the reliability fault suite does.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { beforeEach, describe, expect, it } from 'vitest';
import { harness, send, testTable, type Harness } from '../helpers/stores.js';
import * as build from '../helpers/builders.js';
import { loseNextAnswer } from '../helpers/lost-answers.js';

let h: Harness;
let client: DynamoDBClient;

/** Loses the answer of the next segment PutItem after it landed; counts segment PutItems sent. */
const loseNextSegmentAnswer = () =>
  loseNextAnswer(client, (command, input) => command === 'PutItemCommand' && String(input.Item?.pk?.S ?? '').startsWith('S#') && input.Item?.sk?.S !== '#');

const drain = async (group: string) => {
  const got: Array<{ body: string; messageId: string }> = [];
  for (let i = 0; i < 5; i++) got.push(...(await h.queue.receive(group, { maxMessages: 10, waitSeconds: 0 })));
  return got;
};

describe('a segment put retried by the SDK after it landed', () => {
  beforeEach(async () => {
    const table = await testTable();
    client = table.client;
    h = harness(table.doc, table.table);
  });

  it('stores a standard send once', async () => {
    // One partition, opened by a first send (an epoch's first segment goes with its sentinel, in a transaction).
    await h.admin.putTopic('t', build.topic({ partitions: 1 }));
    await h.admin.putGroup('g', build.group('t'));
    await h.queue.send('t', send('first'));
    const seen = loseNextSegmentAnswer();
    const sent = await h.queue.send('t', send('once'));
    expect(seen).toEqual({ sent: 2, lost: 1 });
    const got = await drain('g');
    expect(got.map((m) => [m.body, m.messageId])).toEqual([
      ['first', expect.any(String)],
      ['once', sent.messageId],
    ]);
  });

  it('stores a FIFO send once, in its place in the shard', async () => {
    await h.admin.putTopic('f', build.topic({ type: 'fifo' }));
    await h.admin.putGroup('g', build.group('f', { deliveryMode: 'concurrent' }));
    await h.queue.send('f', send('first', { shardKey: 'k' }));
    const seen = loseNextSegmentAnswer();
    const sent = await h.queue.send('f', send('second', { shardKey: 'k' }));
    await h.queue.send('f', send('third', { shardKey: 'k' }));
    expect(seen.lost).toBe(1);
    const got = await drain('g');
    expect(got.map((m) => m.body)).toEqual(['first', 'second', 'third']);
    expect(got[1]?.messageId).toBe(sent.messageId);
  });
});
