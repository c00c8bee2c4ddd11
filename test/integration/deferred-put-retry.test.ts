/**
 * A scheduled send without dedupId or keys is one PutItem of its deferred item
 * (`attribute_not_exists(pk)`, BatchWriter). When its answer is lost after it landed, the SDK's
 * retry meets its own item: without a try token (try-token.ts) the send failed with a 500 although
 * the message was scheduled, and the client's retry of the send scheduled it a second time under
 * another id (found by a review).
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { beforeEach, describe, expect, it } from 'vitest';
import { harness, send, testTable, type Harness } from '../helpers/stores.js';
import * as build from '../helpers/builders.js';
import { loseNextAnswer } from '../helpers/lost-answers.js';

let h: Harness;
let client: DynamoDBClient;

/** Loses the answer of the next deferred item's PutItem after it landed. */
const loseNextDeferredAnswer = () =>
  loseNextAnswer(client, (command, input) => command === 'PutItemCommand' && String(input.Item?.pk?.S ?? '').startsWith('X#'));

describe('a scheduled send whose PutItem is retried by the SDK after it landed', () => {
  beforeEach(async () => {
    const t = await testTable();
    client = t.client;
    h = harness(t.doc, t.table);
  });

  it('answers the sender (the message is scheduled once)', async () => {
    await h.admin.putTopic('t', build.topic({ partitions: 1 }));
    await h.admin.putGroup('g', build.group('t'));
    const seen = loseNextDeferredAnswer();
    let outcome: string;
    try {
      const sent = await h.queue.send('t', send('later', { delaySeconds: 5 }));
      outcome = `sent ${sent.messageId} ${sent.state}`;
    } catch (error) {
      outcome = `threw ${(error as Error).name}: ${(error as Error).message}`;
    }
    expect(seen.lost).toBe(1);
    expect(outcome).toMatch(/^sent .* scheduled$/);
    // Scheduled once: due, it is delivered once, under the id the sender got.
    h.clock.advance(6000);
    await h.fire();
    const got = await h.queue.receive('g', { maxMessages: 10, waitSeconds: 0 });
    expect(got.map((m) => [m.body, m.messageId])).toEqual([['later', outcome.split(' ')[1]]]);
  });
});
