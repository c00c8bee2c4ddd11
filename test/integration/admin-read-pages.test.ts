/**
 * Admin reads whose one Query could pass the 1 MB DynamoDB answers per page (DynamoDB Local cuts
 * there too): they read every page, so the answer holds every item (docs/design.md, Limits by
 * construction, "Query answer 1 MB").
 */
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { beforeEach, describe, expect, it } from 'vitest';
import { newHarness, type Harness } from '../helpers/stores.js';

let h: Harness;
/** Query calls while counting. */
let queries: number;

beforeEach(async () => {
  h = await newHarness();
  queries = 0;
  h.doc.middlewareStack.add(
    (next, context) => async (args) => {
      if (context.commandName === 'QueryCommand') queries++;
      return next(args);
    },
    { step: 'initialize', name: 'countQueries' },
  );
});

/** Puts `items` a few at a time. */
async function putAll(items: Array<Record<string, unknown>>): Promise<void> {
  for (let i = 0; i < items.length; i += 25) {
    await Promise.all(items.slice(i, i + 25).map((Item) => h.doc.send(new PutCommand({ TableName: h.table, Item }))));
  }
}

describe('a half message with maxChecks (1,000) check records of long errors', () => {
  it('lists all 1,000 checks, oldest first (one Query page held 655 of them)', async () => {
    const id = '01JD000000000000000000CHCK';
    const now = h.clock.now();
    // A TLS error names every alternative name of the certificate: 1,500 characters here.
    const error = `Hostname/IP does not match certificate's altnames: ${'DNS:shard.example.com, '.repeat(64)}`.slice(0, 1500);
    for (let n = 1; n <= 1000; n += 25) {
      await Promise.all(
        Array.from({ length: 25 }, (_, k) =>
          h.stores.deferred.addCheck(id, { n: n + k, at: now + n + k, status: 'unknown', httpStatus: null, error, latencyMs: 5000 }, Math.ceil(now / 1000) + 3600),
        ),
      );
    }
    queries = 0;
    const checks = await h.stores.deferred.checks(id);
    expect(checks.map((c) => c.n)).toEqual(Array.from({ length: 1000 }, (_, i) => i + 1));
    expect(checks.every((c) => c.error === error)).toBe(true);
    expect(queries).toBe(2);
  });
});

describe('a message dead-lettered by 600 groups with the longest names', () => {
  it('names every group’s copy (one Query page held 473 links)', async () => {
    const topic = 't'.repeat(128);
    // The longest message ids (557 characters, message-ids.ts) for the original and each copy.
    const messageId = `m${'o'.repeat(556)}`;
    const now = h.clock.now();
    const groups = Array.from({ length: 600 }, (_, i) => `${String(i).padStart(4, '0')}${'g'.repeat(124)}`);
    const links = groups.map((group, i) => {
      const put = h.stores.markers.deadLetterLinkItem(topic, messageId, group, { topic: `${group.slice(0, 120)}-dlq`, messageId: `c${String(i).padStart(556, '0')}`, expiresAt: now + 3_600_000 }, now + 3_600_000, now);
      return put.Put?.Item ?? {};
    });
    await putAll(links);
    queries = 0;
    const found = await h.stores.markers.deadLetterLinks(topic, messageId);
    expect(found.size).toBe(600);
    expect([...found.keys()].sort()).toEqual(groups);
    expect(found.get(groups[599] ?? '')?.messageId).toBe(`c${String(599).padStart(556, '0')}`);
    expect(queries).toBe(2);
  });
});
