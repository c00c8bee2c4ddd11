/**
 * Which ready-index entries a request writes, as the horizon's middleware reads them
 * (ready-horizon.ts `readyDuesOf`): every SET of `g1sk` on a shard cursor, in an UpdateItem, a
 * PutItem or a transaction, the latest due per group; a SET it cannot read is refused.
 */
import { describe, expect, it } from 'vitest';
import { COVER_SLACK_MS, HORIZON_AHEAD_MS, HORIZON_MARGIN_MS } from '../../lib/adapters/dynamodb/ready-horizon.js';
import { readyDuesOf, readyKeysSet } from '../../lib/adapters/dynamodb/ready-horizon-cover.js';
import { DYNAMO_CONNECTION_TIMEOUT_MS, DYNAMO_MAX_ATTEMPTS, DYNAMO_REQUEST_TIMEOUT_MS } from '../../lib/adapters/dynamodb/client.js';
import { readyAtKey, readyNowKey } from '../../lib/adapters/dynamodb/keys.js';

const T = 'table';
const update = (pk: string, expression: string, values: Record<string, unknown>, names?: Record<string, string>) => ({
  TableName: T,
  Key: { pk, sk: 't:x/k:a' },
  UpdateExpression: expression,
  ExpressionAttributeValues: values,
  ...(names ? { ExpressionAttributeNames: names } : {}),
});

describe('readyDuesOf', () => {
  it('reads a time key at its time and a ready-now key as due when written (0)', () => {
    expect(readyDuesOf(update('C#g', 'SET nx = :n, g1pk = if_not_exists(rk, :home), g1sk = :k', { ':n': 1, ':home': 'R#g', ':k': readyAtKey(1_800_000_000_000) }))).toEqual([
      { table: T, group: 'g', due: 1_800_000_000_000 },
    ]);
    expect(readyDuesOf(update('C#g', 'SET g1pk = :p, g1sk = :k', { ':p': 'R#g#3', ':k': readyNowKey('t:x/k:a') }))).toEqual([{ table: T, group: 'g', due: 0 }]);
  });

  it('ignores writes that set no entry, remove one, or are not cursors', () => {
    expect(readyDuesOf(update('C#g', 'SET nx = :n REMOVE g1pk, g1sk', { ':n': 1 }))).toEqual([]);
    expect(readyDuesOf(update('Q#g', 'SET g1pk = :p, g1sk = :k', { ':p': 'Q#g', ':k': readyAtKey(5) }))).toEqual([]);
    expect(readyDuesOf({ TableName: T, Key: { pk: 'C#g', sk: 's' }, ConsistentRead: true })).toEqual([]);
  });

  it('reads aliased names, marshalled values, put items and every item of a transaction, the latest due per group', () => {
    expect(readyKeysSet(update('C#g', 'SET #k = :k', { ':k': { S: readyAtKey(7) } }, { '#k': 'g1sk' }))).toEqual([readyAtKey(7)]);
    const put = { Put: { TableName: T, Item: { pk: 'C#g', sk: 't:x/k:b', g1pk: 'R#g', g1sk: readyAtKey(9) } } };
    const dues = readyDuesOf({
      TransactItems: [
        { Update: update('C#g', 'SET g1sk = :k', { ':k': readyAtKey(4) }) },
        put,
        { Update: update('C#h', 'SET g1sk = :k', { ':k': readyNowKey('s') }) },
        { ConditionCheck: { TableName: T, Key: { pk: 'C#g', sk: 'n' }, ConditionExpression: 'g1sk = :k' } },
      ],
    });
    expect(dues).toEqual([
      { table: T, group: 'g', due: 9 },
      { table: T, group: 'h', due: 0 },
    ]);
  });

  it('reads an entry moved to another key (g1pk set, g1sk kept) as due when moved', () => {
    expect(readyDuesOf(update('C#g', 'SET kn = :k, g1pk = :b, rk = :b', { ':k': 3, ':b': 'R#g#5' }))).toEqual([{ table: T, group: 'g', due: 0 }]);
    expect(readyDuesOf(update('C#g', 'SET g1pk = if_not_exists(rk, :home), g1sk = :k', { ':home': 'R#g', ':k': readyAtKey(8) }))).toEqual([{ table: T, group: 'g', due: 8 }]);
  });

  it('refuses a SET of g1sk it cannot read (its due would be unknown)', () => {
    expect(() => readyDuesOf(update('C#g', 'SET g1sk = if_not_exists(g1sk, :k)', { ':k': readyAtKey(1) }))).toThrow(/cannot read/);
    expect(() => readyDuesOf(update('C#g', 'SET g1sk = :missing', {}))).toThrow(/cannot read/);
  });

});

describe('the cover slack', () => {
  it('outlasts the longest request of the stores\' client, retries and back-off included (a write let through by the check lands by h)', () => {
    // The SDK's standard back-off: ≤ 20 s a wait, but 100 ms × 2^n (500 ms × 2^n when throttled) for
    // the first retries: ≤ 1 s + 2 s for two.
    const longest = DYNAMO_MAX_ATTEMPTS * (DYNAMO_CONNECTION_TIMEOUT_MS + DYNAMO_REQUEST_TIMEOUT_MS) + 3_000;
    expect(longest).toBeLessThan(COVER_SLACK_MS);
    // One cover a minute at most while writes keep coming; a quiet look waits out h and the margin.
    expect(HORIZON_AHEAD_MS - COVER_SLACK_MS).toBeGreaterThanOrEqual(60_000);
    expect(HORIZON_MARGIN_MS).toBeGreaterThanOrEqual(1_000);
  });
});
