/**
 * A commit or visibility change of a receipt handle is one conditional UpdateItem of the cursor,
 * conditional on the lease's token. When its answer is lost after it landed, the SDK's retry meets
 * the lease gone (committed) or already moved: the old image of the failed condition tells the
 * commit's own completion in `dn` (`repeatsCommit`), and a visibility change passes again (its
 * condition still holds) or tries its next ready-index variant. These pin that a commit that took
 * effect answers `committed`, not 409 `ReceiptHandleExpired` (docs/design.md, Append, "A put that
 * landed, retried": no fix was needed; the commit test fails without `repeatsCommit` in commitOne).
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { beforeEach, describe, expect, it } from 'vitest';
import { harness, send, testTable, type Harness } from '../helpers/stores.js';
import * as build from '../helpers/builders.js';
import { loseNextAnswer } from '../helpers/lost-answers.js';

let h: Harness;
let client: DynamoDBClient;

/** Loses the answer of the next UpdateItem of a cursor whose update expression matches `update`. */
const loseNextCursorUpdate = (update: RegExp) =>
  loseNextAnswer(client, (command, input) => command === 'UpdateItemCommand' && String(input.Key?.pk?.S ?? '').startsWith('C#') && update.test(String(input.UpdateExpression ?? '')));

const statuses = (results: Awaited<ReturnType<Harness['queue']['commit']>>) => results.map((r) => ('status' in r ? r.status : r.error.code));

describe('a commit or visibility change retried by the SDK after it landed', () => {
  beforeEach(async () => {
    const t = await testTable();
    client = t.client;
    h = harness(t.doc, t.table);
  });

  it('a commit of two handles of a standard partition answers committed for both', async () => {
    await h.admin.putTopic('t', build.topic({ partitions: 1 }));
    await h.admin.putGroup('g', build.group('t'));
    await h.queue.send('t', send('a'));
    await h.queue.send('t', send('b'));
    const got = await h.queue.receive('g', { maxMessages: 10, waitSeconds: 0 });
    expect(got).toHaveLength(2);
    const seen = loseNextCursorUpdate(/ADD cm/);
    expect(statuses(await h.queue.commit('g', got.map((m) => m.receiptHandle)))).toEqual(['committed', 'committed']);
    expect(seen.lost).toBe(1);
  });

  it('a commit on a FIFO shard answers committed, and the shard moves on', async () => {
    await h.admin.putTopic('f', build.topic({ type: 'fifo' }));
    await h.admin.putGroup('g', build.group('f'));
    await h.queue.send('f', send('first', { shardKey: 'k' }));
    await h.queue.send('f', send('second', { shardKey: 'k' }));
    const [first] = await h.queue.receive('g', { maxMessages: 10, waitSeconds: 0 });
    const seen = loseNextCursorUpdate(/ADD cm/);
    expect(statuses(await h.queue.commit('g', [first!.receiptHandle]))).toEqual(['committed']);
    expect(seen.lost).toBe(1);
    expect((await h.queue.receive('g', { maxMessages: 10, waitSeconds: 0 })).map((m) => m.body)).toEqual(['second']);
  });

  it('a release (visibility 0) on a FIFO shard takes effect: the message comes back at once', async () => {
    await h.admin.putTopic('f', build.topic({ type: 'fifo' }));
    await h.admin.putGroup('g', build.group('f', { retryPolicy: { initialSeconds: 0 } }));
    await h.queue.send('f', send('first', { shardKey: 'k' }));
    const [first] = await h.queue.receive('g', { maxMessages: 10, waitSeconds: 0 });
    const seen = loseNextCursorUpdate(/fl\.#s\.e = :e/);
    await h.queue.changeVisibility('g', first!.receiptHandle, 0);
    expect(seen.lost).toBe(1);
    expect((await h.queue.receive('g', { maxMessages: 10, waitSeconds: 0 })).map((m) => [m.body, m.deliveryCount])).toEqual([['first', 2]]);
  });
});
