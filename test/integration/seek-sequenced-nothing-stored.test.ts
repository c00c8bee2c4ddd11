/**
 * Found by an audit (2026-12-04); before its fix, a sequenced shard whose stored segments TTL deleted (its counter and the group's
 * cursor still live). A send in flight when the group seeks `earliest` (or to a time) holds a
 * grant below the counter's `nx`; the seek puts the cursor at `nx` and the message is never delivered.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { BatchWriteCommand, PutCommand, ScanCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { Seeker } from '../../lib/services/seeker.js';
import { FILL_AFTER_MS } from '../../lib/domain/gaps.js';
import * as build from '../helpers/builders.js';
import { harness, newHarness, send, type Harness } from '../helpers/stores.js';

let h: Harness;
const receive = (g: string, max = 10) => h.queue.receive(g, { maxMessages: max, waitSeconds: 0 });
const bodies = (ms: Array<{ body: string }>) => ms.map((m) => m.body);

function slowFirstPut(doc: DynamoDBDocumentClient) {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  let held = false;
  const sendCmd = doc.send.bind(doc) as (command: unknown) => Promise<unknown>;
  const wrapped = Object.create(doc) as DynamoDBDocumentClient;
  wrapped.send = (async (command: unknown) => {
    const item = command instanceof PutCommand ? command.input.Item : undefined;
    if (!held && typeof item?.pk === 'string' && item.pk.includes('/q:') && item.ga !== undefined && item.hf === undefined) {
      held = true;
      await gate;
    }
    return sendCmd(command);
  }) as DynamoDBDocumentClient['send'];
  return { doc: wrapped, release };
}

/** Deletes every item whose `ttl` has passed by the test's clock, as DynamoDB TTL would. */
async function deleteExpired(): Promise<number> {
  let deleted = 0;
  let start: Record<string, unknown> | undefined;
  do {
    const page = await h.doc.send(new ScanCommand({ TableName: h.table, ExclusiveStartKey: start, ProjectionExpression: 'pk, sk, #t', ExpressionAttributeNames: { '#t': 'ttl' } }));
    const expired = (page.Items ?? []).filter((item) => item.ttl !== undefined && Number(item.ttl) * 1000 <= h.clock.now());
    for (let i = 0; i < expired.length; i += 25) {
      await h.doc.send(new BatchWriteCommand({ RequestItems: { [h.table]: expired.slice(i, i + 25).map((item) => ({ DeleteRequest: { Key: { pk: item.pk, sk: item.sk } } })) } }));
    }
    deleted += expired.length;
    start = page.LastEvaluatedKey;
  } while (start !== undefined);
  return deleted;
}

const drain = async () => {
  const got: string[] = [];
  for (let i = 0; i < 5; i++) {
    const batch = await receive('g');
    got.push(...bodies(batch));
    if (batch.length > 0) await h.queue.commit('g', batch.map((m) => m.receiptHandle));
    h.clock.advance(FILL_AFTER_MS);
  }
  return got;
};

beforeEach(async () => {
  h = await newHarness();
});

describe('seek on a sequenced shard whose segments TTL deleted', () => {
  it.each(['earliest', 'time', 'none'] as const)('seek %s while a send is in flight: the message is delivered', async (to) => {
    await h.admin.putTopic('ledger', build.topic({ type: 'fifo', sequenced: true, retentionSeconds: 300 }));
    await h.admin.putGroup('g', build.group(['ledger'], { deliveryMode: 'concurrent', visibilityTimeoutSeconds: 30 }));
    h.clock.advance(1);
    await h.queue.send('ledger', send('a0', { shardKey: 'A' }));
    expect(await drain()).toEqual(['a0']);
    // a0 (and its notice) past retention and deleted by TTL; the counter (14 days) and the cursor (15 days) live.
    h.clock.advance(400_000);
    expect(await deleteExpired()).toBeGreaterThan(0);
    // A send whose grant is taken, its put on its way.
    const slow = slowFirstPut(h.doc);
    const late = harness(slow.doc, h.table, { clock: h.clock });
    const sent = late.queue.send('ledger', send('a1', { shardKey: 'A' }));
    await new Promise((resolve) => setTimeout(resolve, 100));
    if (to !== 'none') await new Seeker(h.stores, h.clock).seek('g', to === 'earliest' ? 'earliest' : h.clock.now() - 1000, undefined);
    slow.release();
    await sent;
    expect(await drain()).toEqual(['a1']);
  }, 60_000);
});
