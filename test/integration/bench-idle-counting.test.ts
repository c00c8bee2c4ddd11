/**
 * The idle rows' measuring code (bench/aws-mode-receiver.ts, bench/idle.ts) on DynamoDB Local: the
 * AWS-mode receive endpoint waits on the activity items (one park, activity GetItems) and its meter
 * counts one Lambda request per receive, billed for the whole wait, and the DynamoDB calls an
 * independent counter on the same client saw; a group's storage is its items' bytes + 100 each.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GetCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { startAwsModeReceiver, type AwsModeReceiver } from '../../bench/aws-mode-receiver.js';
import { groupStorageBytes } from '../../bench/idle.js';
import { dynamoTotals, httpTotals } from '../../bench/workloads.js';
import { diff } from '../../bench/meter.js';
import { itemBytes, type AttributeMap } from '../../bench/units.js';
import { group, topic } from '../helpers/builders.js';
import { testTable } from '../helpers/stores.js';
import { buildContainer } from '../../functions/commons/container.js';
import { loadConfig } from '../../functions/commons/config.js';

describe('idle measuring code', () => {
  let receiver: AwsModeReceiver;
  let doc: DynamoDBDocumentClient;
  let table: string;
  const saved = { table: process.env.SLUICE_TABLE_NAME, endpoint: process.env.DYNAMODB_ENDPOINT, key: process.env.SLUICE_SECRETS_KEY };

  beforeAll(async () => {
    let endpoint: string;
    ({ endpoint, doc, table } = await testTable('idle'));
    process.env.SLUICE_TABLE_NAME = table;
    process.env.DYNAMODB_ENDPOINT = endpoint;
    // The message-id key is sealed with this key: the receiver's container must open it (as the bench's runtime sets it).
    process.env.SLUICE_SECRETS_KEY = randomBytes(32).toString('base64');
    const setup = buildContainer(loadConfig(process.env));
    await setup.admin.putTopic('quiet', topic());
    await setup.admin.putGroup('quiet-g', group('quiet'));
    setup.dynamo.destroy();
    // Requests other than receive go to the runtime; this test makes none.
    receiver = await startAwsModeReceiver('http://127.0.0.1:9', undefined);
  });

  afterAll(async () => {
    await receiver?.stop();
    process.env.SLUICE_TABLE_NAME = saved.table;
    process.env.DYNAMODB_ENDPOINT = saved.endpoint;
    process.env.SLUICE_SECRETS_KEY = saved.key;
  });

  it('counts one billed request per long poll and the waiter’s calls: a park and activity reads', async () => {
    const seen: string[] = [];
    receiver.dynamo.middlewareStack.add(
      (next, context) => async (args) => {
        seen.push((context.commandName ?? '?').replace(/Command$/, ''));
        return next(args);
      },
      { step: 'initialize', name: 'independentCount' },
    );
    const before = receiver.meter.snapshot();
    const started = Date.now();
    const res = await fetch(`${receiver.url}/v1/groups/quiet-g/receive`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ maxMessages: 10, waitSeconds: 2 }),
    });
    const answer = (await res.json()) as unknown;
    expect({ status: res.status, answer }).toEqual({ status: 200, answer: { messages: [] } });
    const took = Date.now() - started;
    await receiver.receivesDone(1);
    const window = diff(receiver.meter.snapshot(), before);
    const http = httpTotals(window);
    const dynamo = dynamoTotals(window);
    expect(http.requests).toBe(1);
    expect(http.byRoute).toEqual({ receive: 1 });
    expect(http.billedMs).toBeGreaterThanOrEqual(2000);
    expect(http.billedMs).toBeLessThanOrEqual(took + 1);
    expect(dynamo.requests).toBe(seen.length);
    expect(dynamo.byCommand.UpdateItem).toBe(1); // the park
    expect(dynamo.byCommand.GetItem ?? 0).toBeGreaterThanOrEqual(1); // A#quiet
    expect(dynamo.rru + dynamo.rruMinModel).toBeGreaterThan(0);
    expect(dynamo.wruTable + dynamo.wruFailedModel).toBeGreaterThanOrEqual(1);
  });

  it("measures a group's storage as DynamoDB bills it", async () => {
    const bytes = await groupStorageBytes(doc, table, 'quiet-g');
    const item = (await doc.send(new GetCommand({ TableName: table, Key: { pk: 'GROUP', sk: 'quiet-g' } }))).Item;
    expect(item).toBeDefined();
    const groupItem = itemBytes(marshall(item, { removeUndefinedValues: true, convertClassInstanceToMap: true }) as AttributeMap) + 100;
    expect(bytes).toBeGreaterThanOrEqual(groupItem);
    expect(await groupStorageBytes(doc, table, 'no-such-group')).toBe(0);
  });
});
