/**
 * The local runtime runs the dispatcher as AWS does: its stream poller reads
 * DynamoDB Local's stream of the runtime's table and invokes the dispatcher
 * Lambda's handler (functions/dispatch/dispatcher.ts) through the container,
 * which records topic activity for flagged segments. Sends do not set the
 * flags yet (later work), so the flagged segment is written directly.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dynamoEndpoint } from '../helpers/dynamo-endpoint.js';
import { inject } from 'vitest';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { createDynamoClients } from '../../lib/adapters/dynamodb/client.js';
import { activityKey } from '../../lib/adapters/dynamodb/topic-activity.js';
import { toStored } from '../../lib/adapters/dynamodb/records.js';
import { padSeq } from '../../lib/domain/streams.js';
import { startLocal, type LocalRuntime } from '../../local/runtime.js';
import { client, REMOTE, TOKEN } from '../helpers/local.js';
import { tableName } from '../helpers/stores.js';
import { eventually } from '../helpers/fake-streams.js';

const table = tableName('e2e-dispatch');
let runtime: LocalRuntime;
let doc: ReturnType<typeof createDynamoClients>['doc'];
let raw: ReturnType<typeof createDynamoClients>['client'];

beforeAll(async () => {
  // The file's DynamoDB Local is known once the setup file's beforeAll ran, not at import.
  ({ doc, client: raw } = createDynamoClients({ endpoint: dynamoEndpoint() }));
  runtime = await startLocal({ host: '127.0.0.1', port: 0, token: TOKEN, tableName: table, endpoint: dynamoEndpoint(), dataDir: undefined, dispatchPollIntervalMs: 20 });
});
afterAll(async () => {
  await runtime?.stop();
  raw.destroy();
});

const activityOf = async (topic: string) => (await doc.send(new GetCommand({ TableName: table, Key: activityKey(topic), ConsistentRead: true }))).Item;

describe.skipIf(REMOTE)('the local runtime dispatcher', () => {
  it('reads the stream, skips unflagged sends, and records topic activity for flagged segments', async () => {
    const poller = runtime.dispatcher?.poller;
    expect(poller).toBeDefined();
    const api = client(runtime.url);
    expect((await api.put('/v1/topics/wakes', { type: 'standard' })).status).toBe(200);
    const sent = await api.post('/v1/topics/wakes/messages', { body: 'plain send' });
    expect(sent.status).toBe(201);
    // A send's segment carries no flag (yet): read from the stream, never handed to the dispatcher.
    await eventually(() => (poller?.stats.recordsRead ?? 0) > 0 && Object.values(poller?.checkpoints() ?? {}).some((c) => c.sequenceNumber), 3000, 'the send to be read');
    expect(poller?.stats.invocations).toBe(0);
    expect(await activityOf('wakes')).toBeUndefined();

    const now = Date.now();
    const record = { messageId: 'm-flagged', topic: 'wakes', body: 'x', encoding: 'utf8' as const, tag: undefined, keys: [], properties: {}, shardKey: undefined, sentAt: now, deliverableAt: now, expiresAt: now + 60_000, generation: 1 };
    // A sequence number no send has reached: the put must INSERT (overwriting the send's segment, were it
    // in the same partition, would be a MODIFY, which the filters rightly drop).
    await doc.send(new PutCommand({ TableName: table, Item: { pk: 'S#t:wakes/p:3', sk: padSeq(1_000_000_000), n: 1, m: [toStored(record)], ttl: Math.ceil(record.expiresAt / 1000), w: 1 } }));
    let item: Record<string, unknown> | undefined;
    // Not a latency test (test/integration/dispatcher-stream.test.ts measures that): give a loaded machine time.
    for (const deadline = Date.now() + 10_000; !(item = await activityOf('wakes')) && Date.now() < deadline; ) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(item?.at).toBeGreaterThanOrEqual(now);
    expect(poller?.stats).toMatchObject({ invocations: 1, failedBatches: 0 });
  });

  it('stops its poller with the runtime', async () => {
    const poller = runtime.dispatcher?.poller;
    await runtime.stop();
    const reads = poller?.stats.getRecordsCalls;
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(poller?.stats.getRecordsCalls).toBe(reads);
  });
});
