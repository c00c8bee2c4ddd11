/**
 * Topic tombstones never expire (they keep the generation), and the topic listing filters them after
 * the read: a page of 1 over N tombstones made N Queries (found by an audit, 2026-12-04). A page now
 * makes at most 4 Queries of at least 100 items, and may come back short with a nextToken.
 */
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { beforeEach, describe, expect, it } from 'vitest';
import { newHarness, type Harness } from '../helpers/stores.js';
import { topic } from '../helpers/builders.js';

let h: Harness;
let queries = 0;

beforeEach(async () => {
  h = await newHarness();
  h.doc.middlewareStack.add(
    (next, context) => async (args) => {
      if (context.commandName === 'QueryCommand') queries++;
      return next(args);
    },
    { step: 'initialize', name: 'countQueries' },
  );
});

describe('GET /v1/topics over deleted topics', () => {
  it('a page costs a bounded number of Queries, however many topics were deleted before the live one', async () => {
    const now = h.clock.now();
    const N = 1000;
    const items = Array.from({ length: N }, (_, i) => ({
      pk: 'TOPIC', sk: `a${String(i).padStart(5, '0')}`, deleted: true, updatedAt: now - 3_600_000, createdAt: now - 7_200_000,
      type: 'standard', retentionSeconds: 86400, maxDelaySeconds: 86400, partitions: 4, generation: 1,
    }));
    for (let i = 0; i < items.length; i += 25) await Promise.all(items.slice(i, i + 25).map((Item) => h.doc.send(new PutCommand({ TableName: h.table, Item }))));
    await h.admin.putTopic('zlive', topic());
    // A client pages with limit 1 until it has seen every topic.
    queries = 0;
    const started = Date.now();
    const first = await h.admin.listTopics(1, undefined);
    const ms = Date.now() - started;
    const used = queries;
    expect(first.topics.length + (first.nextToken ? 1 : 0)).toBeGreaterThan(0);
    expect({ queries: used, under1s: ms < 1000 }).toEqual({ queries: expect.any(Number), under1s: true });
    expect(used).toBeLessThanOrEqual(4);
  });

  it('paging every topic over live topics mixed with tombstones: each exactly once, in order, every page bounded', async () => {
    const now = h.clock.now();
    const tomb = (sk: string) => ({ pk: 'TOPIC', sk, deleted: true, updatedAt: now - 3_600_000, createdAt: now - 7_200_000, type: 'standard', retentionSeconds: 86400, maxDelaySeconds: 86400, partitions: 4, generation: 1 });
    const items = [...Array.from({ length: 600 }, (_, i) => tomb(`b${String(i).padStart(5, '0')}`)), ...Array.from({ length: 300 }, (_, i) => tomb(`d${String(i).padStart(5, '0')}`))];
    for (let i = 0; i < items.length; i += 25) await Promise.all(items.slice(i, i + 25).map((Item) => h.doc.send(new PutCommand({ TableName: h.table, Item }))));
    const live = [...Array.from({ length: 150 }, (_, i) => `a${String(i).padStart(3, '0')}`), 'c0', 'c1', 'e0'];
    for (let i = 0; i < live.length; i += 10) await Promise.all(live.slice(i, i + 10).map((n) => h.admin.putTopic(n, topic())));
    for (const limit of [1, 7, 100]) {
      const seen: string[] = [];
      let token: string | undefined;
      let pages = 0;
      do {
        queries = 0;
        const page = await h.admin.listTopics(limit, token);
        expect(queries).toBeLessThanOrEqual(4);
        expect(page.topics.length).toBeLessThanOrEqual(limit);
        seen.push(...page.topics.map((t) => t.name));
        token = page.nextToken ?? undefined;
        pages++;
      } while (token !== undefined && pages < 2000);
      expect(seen).toEqual(live);
    }
  });
});
