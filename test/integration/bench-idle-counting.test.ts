/**
 * The idle rows' measuring code (bench/aws-mode-receiver.ts, bench/idle.ts) on DynamoDB Local: the
 * AWS-mode receive endpoint waits on the activity items (one park, activity GetItems) and its meter
 * counts one Lambda request per receive, billed for the whole wait, and the DynamoDB calls an
 * independent counter on the same client saw; a group's storage is its items' bytes + 100 each;
 * the FIFO long-poll rows' topics make a receive read the ready index as the rows say (the home key;
 * on the wide one the 16 bucket keys too, each priced at the empty read's ½ unit).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GetCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { startAwsModeReceiver, type AwsModeReceiver } from '../../bench/aws-mode-receiver.js';
import { LONG_POLL_ROWS, groupStorageBytes, longPollWindow, thoroughReadOf } from '../../bench/idle.js';
import { dynamoTotals, httpTotals } from '../../bench/workloads.js';
import { diff } from '../../bench/meter.js';
import { itemBytes, type AttributeMap } from '../../bench/units.js';
import { group, topic } from '../helpers/builders.js';
import { readyBucketCount } from '../../lib/adapters/dynamodb/keys.js';
import { GSI1 } from '../../lib/adapters/dynamodb/table.js';
import { benchTableEnv } from '../helpers/bench-env.js';
import { buildContainer } from '../../functions/commons/container.js';
import { loadConfig } from '../../functions/commons/config.js';

describe('idle measuring code', () => {
  let receiver: AwsModeReceiver;
  let doc: DynamoDBDocumentClient;
  let table: string;
  let restore = () => {};

  beforeAll(async () => {
    ({ doc, table, restore } = await benchTableEnv('idle'));
    const setup = buildContainer(loadConfig(process.env));
    await setup.admin.putTopic('quiet', topic());
    await setup.admin.putGroup('quiet-g', group('quiet'));
    // The long-poll rows' topics as bench/idle.ts creates them (standard, FIFO, wide FIFO).
    for (const row of LONG_POLL_ROWS) {
      await setup.admin.putTopic(row.topic, topic(row.body));
      await setup.admin.putGroup(`${row.topic}-g`, group(row.topic, { visibilityTimeoutSeconds: 30 }));
    }
    setup.dynamo.destroy();
    // Requests other than receive go to the runtime; this test makes none.
    receiver = await startAwsModeReceiver('http://127.0.0.1:9', undefined);
  });

  afterAll(async () => {
    await receiver?.stop();
    restore();
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

  it('prices what a FIFO long poll reads of the ready index: the home key, and on the wide row the 16 buckets besides, each an empty read at ½ unit', async () => {
    // Per window: the ready-index Queries by partition key, and every call, counted apart from the meter.
    let readyKeys: Record<string, number> = {};
    let calls = 0;
    receiver.dynamo.middlewareStack.add(
      (next) => async (args) => {
        const input = args.input as { IndexName?: string; ExpressionAttributeValues?: Record<string, unknown> };
        calls++;
        if (input.IndexName === GSI1) {
          const pk = String(input.ExpressionAttributeValues?.[':pk']);
          readyKeys[pk] = (readyKeys[pk] ?? 0) + 1;
        }
        return next(args);
      },
      { step: 'initialize', name: 'readyKeyCount' },
    );
    const measure = async (id: string) => {
      const row = LONG_POLL_ROWS.find((r) => r.id === id);
      if (!row) throw new Error(`no row ${id}`);
      readyKeys = {};
      calls = 0;
      const { window, seconds } = await longPollWindow(receiver, `${row.topic}-g`, { warmupPolls: 0, measuredPolls: 1 }, 2);
      return { group: `${row.topic}-g`, readyKeys: { ...readyKeys }, calls, dynamo: dynamoTotals(window), seconds, window };
    };
    try {
      const fifo = await measure('http-long-poll-fifo');
      const wide = await measure('http-long-poll-fifo-wide');
      expect(fifo.seconds).toBeGreaterThanOrEqual(2);
      // The default FIFO topic: the home key only, once per real look (at least the call's first and last).
      const looks = fifo.readyKeys[`R#${fifo.group}`] ?? 0;
      expect(looks).toBeGreaterThanOrEqual(2);
      expect(fifo.readyKeys).toEqual({ [`R#${fifo.group}`]: looks });
      // The wide one: the home key and every bucket, each once, by the first look: the group is quiet
      // then, and its later looks read the ready index's horizon instead (ready-horizon.ts).
      const wideLooks = wide.readyKeys[`R#${wide.group}`] ?? 0;
      expect(wideLooks).toBe(1);
      expect(thoroughReadOf(wide.window, wide.group)).toEqual({ queries: 1 + readyBucketCount(16), rru: 0.5 * (1 + readyBucketCount(16)) });
      const expected = Object.fromEntries([`R#${wide.group}`, ...Array.from({ length: readyBucketCount(16) }, (_, b) => `R#${wide.group}#${b}`)].map((k) => [k, wideLooks]));
      expect(wide.readyKeys).toEqual(expected);
      // The meter saw every call, and priced each empty Query at least at the eventually consistent minimum.
      expect(fifo.dynamo.requests).toBe(fifo.calls);
      expect(wide.dynamo.requests).toBe(wide.calls);
      const bucketQueries = readyBucketCount(16) * wideLooks;
      expect(wide.dynamo.rruMinModel).toBeGreaterThanOrEqual(0.5 * (bucketQueries + wideLooks));
      // Per real look the wide row reads 8 RRU of buckets more than the default FIFO row, at least.
      const perLook = (r: typeof fifo, n: number) => (r.dynamo.rru + r.dynamo.rruMinModel) / n;
      expect(perLook(wide, wideLooks) - perLook(fifo, looks)).toBeGreaterThanOrEqual(0.5 * readyBucketCount(16));
    } finally {
      receiver.dynamo.middlewareStack.remove('readyKeyCount');
    }
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
