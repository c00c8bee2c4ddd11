/**
 * Admin writes sent as one conditional PutItem, UpdateItem or transaction whose answer is lost after they landed
 * are retried by the SDK, and the retry meets the item its own write left (docs/design.md, Append,
 * "A put that landed, retried"). Each case fails without its fix:
 * - a producer group's create answered without its signing secret (the only time it is shown): the
 *   retry's failed put was taken for a group created meanwhile, and the PUT answered as an update;
 * - a secret rotation (producer or push group) was taken for a concurrent one and rotated again:
 *   the secret the user held stopped signing at once (its 24 h grace went to a secret never shown);
 * - a topic or group delete answered 404 for a delete that took effect.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { beforeEach, describe, expect, it } from 'vitest';
import { GROUP_PK, PRODUCER_PK, TOPIC_PK } from '../../lib/adapters/dynamodb/keys.js';
import { harness, testTable, type Harness } from '../helpers/stores.js';
import * as build from '../helpers/builders.js';
import { loseNextAnswer } from '../helpers/lost-answers.js';

let h: Harness;
let client: DynamoDBClient;

/** Loses the answer of the next `command` on an item of `pk` whose expression (update, or the put's condition) matches `expression`. */
const loseNext = (command: string, pk: string, expression: RegExp) =>
  loseNextAnswer(
    client,
    (name, input) =>
      name === command && (input.Key?.pk?.S ?? input.Item?.pk?.S) === pk && expression.test(String(input.UpdateExpression ?? input.ConditionExpression ?? '')),
  );

const outcome = (promise: Promise<unknown>) =>
  promise.then(
    () => 'done',
    (error: Error) => `${error.name}: ${error.message}`,
  );

const CHECKER = 'http://127.0.0.1:9/check';

describe('an admin write retried by the SDK after it landed', () => {
  beforeEach(async () => {
    const t = await testTable();
    client = t.client;
    h = harness(t.doc, t.table);
  });

  it("a producer group's create answers its signing secret", async () => {
    const seen = loseNext('PutItemCommand', PRODUCER_PK, /attribute_not_exists/);
    const created = await h.transactions.putProducer('shop', build.producer(CHECKER));
    expect(seen).toEqual({ sent: 2, lost: 1 });
    expect((created as { signingSecret?: string }).signingSecret).toMatch(/^whsec_/);
  });

  it("a producer group's secret rotation rotates once: the secret held before keeps signing", async () => {
    await h.transactions.putProducer('shop', build.producer(CHECKER));
    const before = await h.stores.producers.get('shop');
    const seen = loseNext('UpdateItemCommand', PRODUCER_PK, /sec = :new/);
    const rotated = await h.transactions.rotateSecret('shop');
    expect(seen.lost).toBe(1);
    const after = await h.stores.producers.get('shop');
    expect(after?.sealedPrevious).toBe(before?.sealedSecret);
    expect(rotated.signingSecret).toMatch(/^whsec_/);
  });

  it("a push group's secret rotation rotates once: the secret held before keeps signing", async () => {
    await h.admin.putTopic('orders', build.topic());
    await h.admin.putGroup('hooks', build.group('orders', { push: { url: 'http://127.0.0.1:9/hook' } }));
    const before = await h.stores.catalog.getGroup('hooks');
    const seen = loseNext('UpdateItemCommand', GROUP_PK, /ps = :new/);
    const rotated = await h.admin.rotatePushSecret('hooks');
    expect(seen.lost).toBe(1);
    const after = await h.stores.catalog.getGroup('hooks');
    expect(after?.pushSecret?.previous).toBe(before?.pushSecret?.sealed);
    expect(rotated.signingSecret).toMatch(/^whsec_/);
  });

  it('a topic delete answers done', async () => {
    await h.admin.putTopic('t', build.topic());
    const seen = loseNext('UpdateItemCommand', TOPIC_PK, /deleted = :true/);
    expect(await outcome(h.admin.deleteTopic('t'))).toBe('done');
    expect(seen).toEqual({ sent: 2, lost: 1 });
    expect(await h.stores.catalog.getTopic('t')).toBeUndefined();
    // A delete of the deleted topic (a new call, not a retry: another token), in the same millisecond, still answers 404.
    expect(await outcome(h.admin.deleteTopic('t'))).toMatch(/NotFound/);
  });

  it('a group delete answers done', async () => {
    await h.admin.putTopic('t', build.topic());
    await h.admin.putGroup('g', build.group('t'));
    // One transaction: the tombstone, and the group's name out of its dead-letter topic's `dg`.
    const seen = loseNextAnswer(client, (name, input) => {
      const first = (input.TransactItems as Array<{ Update?: { Key?: { pk?: { S?: string } }; UpdateExpression?: string } }> | undefined)?.[0]?.Update;
      return name === 'TransactWriteItemsCommand' && first?.Key?.pk?.S === GROUP_PK && /deleted = :true/.test(String(first.UpdateExpression));
    });
    expect(await outcome(h.admin.deleteGroup('g'))).toBe('done');
    expect(seen).toEqual({ sent: 2, lost: 1 });
    expect(await h.stores.catalog.getGroup('g')).toBeUndefined();
    expect((await h.stores.catalog.getTopic('g-dlq'))?.deadLetterGroups).toBeUndefined();
    expect(await outcome(h.admin.deleteGroup('g'))).toMatch(/NotFound/);
  });
});
