/** `batchGetPages` (lib/adapters/dynamodb/call.ts): 100 keys a BatchGetItem, unprocessed keys asked for again, 429 when they stay. */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { BatchGetCommand, DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { batchGetPages } from '../../lib/adapters/dynamodb/call.js';
import { ThrottledError } from '../../lib/domain/errors.js';

const doc = DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'us-east-1', credentials: { accessKeyId: 'a', secretAccessKey: 'b' } }));
const mock = mockClient(doc);
afterEach(() => {
  mock.reset();
  vi.useRealTimers();
});

const keys = (n: number) => Array.from({ length: n }, (_, i) => ({ pk: 'C#g', sk: `s${i}` }));
const requested = () => mock.commandCalls(BatchGetCommand).map((c) => (c.args[0].input.RequestItems?.t?.Keys ?? []).length);

async function all(gen: AsyncGenerator<Record<string, unknown>[]>) {
  const out: Record<string, unknown>[] = [];
  for await (const items of gen) out.push(...items);
  return out;
}

describe('batchGetPages', () => {
  it('asks for 100 keys a request, with the projection and names given', async () => {
    mock.on(BatchGetCommand).callsFake((input) => ({ Responses: { t: input.RequestItems.t.Keys } }));
    const items = await all(batchGetPages(doc, 't', keys(250), { consistent: false, projection: 'pk, #t', names: { '#t': 'ttl' } }));
    expect(items).toHaveLength(250);
    expect(requested()).toEqual([100, 100, 50]);
    const first = mock.commandCalls(BatchGetCommand)[0]!.args[0].input.RequestItems!.t!;
    expect(first).toMatchObject({ ConsistentRead: false, ProjectionExpression: 'pk, #t', ExpressionAttributeNames: { '#t': 'ttl' } });
  });

  it('asks again for the keys DynamoDB left unprocessed', async () => {
    mock
      .on(BatchGetCommand)
      .callsFakeOnce((input) => ({ Responses: { t: input.RequestItems.t.Keys.slice(0, 2) }, UnprocessedKeys: { t: { Keys: input.RequestItems.t.Keys.slice(2) } } }))
      .callsFake((input) => ({ Responses: { t: input.RequestItems.t.Keys } }));
    const items = await all(batchGetPages(doc, 't', keys(5), { consistent: true }));
    expect(items.map((i) => i.sk)).toEqual(['s0', 's1', 's2', 's3', 's4']);
    expect(requested()).toEqual([5, 3]);
  });

  it('answers 429 when keys stay unprocessed', async () => {
    vi.useFakeTimers();
    mock.on(BatchGetCommand).callsFake((input) => ({ UnprocessedKeys: { t: { Keys: input.RequestItems.t.Keys } } }));
    const read = all(batchGetPages(doc, 't', keys(3), { consistent: true }));
    const failed = expect(read).rejects.toBeInstanceOf(ThrottledError);
    await vi.runAllTimersAsync();
    await failed;
    expect(requested()).toEqual(Array(9).fill(3));
  });
});
