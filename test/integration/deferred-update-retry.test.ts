/**
 * Lone conditional updates of a deferred item (deferred.ts) whose answer is lost after they landed
 * are retried by the SDK, and the retry meets the item its own write left (docs/design.md, Append,
 * "A put that landed, retried"). Each case fails without its fix:
 * - a release claim (`claimRelease`) was taken for one lost to another releaser: the message stayed
 *   `releasing` under a claim nobody finished until a sweep took it over (≥ 20 s later);
 * - a transaction commit's claim (`claimCommit`) likewise: the commit answered 503 after its waits
 *   and the message waited for the check-back to finish it;
 * - a cancel answered 409 ("cancelled; only scheduled messages can be cancelled") for a cancel that
 *   took effect;
 * - a check lease (`leaseCheck`) was taken for another worker's: the check was counted and skipped.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { beforeEach, describe, expect, it } from 'vitest';
import { harness, send, testTable, type Harness } from '../helpers/stores.js';
import * as build from '../helpers/builders.js';
import { loseNextAnswer } from '../helpers/lost-answers.js';

let h: Harness;
let client: DynamoDBClient;

/** Loses the answer of the next UpdateItem of a deferred item whose update expression matches `update`. */
const loseNextDeferredUpdate = (update: RegExp) =>
  loseNextAnswer(
    client,
    (command, input) => command === 'UpdateItemCommand' && String(input.Key?.pk?.S ?? '').startsWith('X#') && update.test(String(input.UpdateExpression ?? '')),
  );

/** A checker nobody listens on: every check is `unknown` (connection refused). */
const NO_CHECKER = 'http://127.0.0.1:9/check';

const receive = () => h.queue.receive('g', { maxMessages: 10, waitSeconds: 0 });

describe('a lone update of a deferred item retried by the SDK after it landed', () => {
  beforeEach(async () => {
    const t = await testTable();
    client = t.client;
    h = harness(t.doc, t.table);
    await h.admin.putTopic('t', build.topic({ partitions: 1 }));
    await h.admin.putGroup('g', build.group('t'));
  });

  it('a release claim: the scheduled message is released when due', async () => {
    const sent = await h.queue.send('t', send('later', { delaySeconds: 5 }));
    const seen = loseNextDeferredUpdate(/st = :releasing/);
    h.clock.advance(6000);
    await h.fire();
    expect(seen.lost).toBe(1);
    expect((await receive()).map((m) => [m.body, m.messageId])).toEqual([['later', sent.messageId]]);
  });

  it('a commit claim: the commit answers committed and the message is deliverable', async () => {
    await h.transactions.putProducer('shop', build.producer(NO_CHECKER));
    const sent = await h.queue.send('t', send('order', { transaction: { producerGroup: 'shop', checkAfterSeconds: 60 } }));
    const seen = loseNextDeferredUpdate(/st = :committing/);
    const answer = await h.transactions.commit(sent.transactionId!).catch((error: Error) => `${error.name}: ${error.message}`);
    expect(seen.lost).toBe(1);
    expect(answer).toMatchObject({ state: 'committed', messageId: sent.messageId });
    expect((await receive()).map((m) => [m.body, m.messageId])).toEqual([['order', sent.messageId]]);
  });

  it('a cancel: answers done, and the message is never delivered', async () => {
    const sent = await h.queue.send('t', send('never', { delaySeconds: 5 }));
    const seen = loseNextDeferredUpdate(/st = :cancelled/);
    const answer = await h.queue.cancel('t', sent.messageId).then(
      () => 'cancelled',
      (error: Error) => `${error.name}: ${error.message}`,
    );
    expect(seen).toEqual({ sent: 2, lost: 1 });
    expect(answer).toBe('cancelled');
    h.clock.advance(6000);
    await h.fire();
    expect(await receive()).toEqual([]);
    // A cancel of the cancelled message (a new call, not a retry) still answers 409.
    await expect(h.queue.cancel('t', sent.messageId)).rejects.toMatchObject({ name: 'ConflictError' });
  });

  it('a check lease: the checker is called and the check recorded', async () => {
    await h.transactions.putProducer('shop', build.producer(NO_CHECKER, { checkIntervalSeconds: 30 }));
    const sent = await h.queue.send('t', send('order', { transaction: { producerGroup: 'shop', checkAfterSeconds: 1 } }));
    h.clock.advance(2000);
    const seen = loseNextDeferredUpdate(/ADD cc/);
    const status = await h.transactions.check(sent.transactionId!);
    expect(seen.lost).toBe(1);
    expect(status).toBe('unknown');
    const view = await h.transactions.get(sent.transactionId!);
    expect(view).toMatchObject({ state: 'prepared', checkCount: 1 });
    expect(view.checks.map((c) => [c.checkCount, c.status])).toEqual([[1, 'unknown']]);
  });
});
