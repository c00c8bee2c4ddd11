/**
 * The data plane's per-container catalog cache: two Catalog instances on one
 * table stand for two Lambda containers (the "admin" one writes, the "data"
 * one serves sends and receives).
 */
import { DEFAULT_RETRY_POLICY } from '../../lib/domain/retry-policy.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { Catalog, type TopicSpec } from '../../lib/adapters/dynamodb/catalog.js';
import { TopicRecentlyDeletedError } from '../../lib/domain/errors.js';
import { FakeClock, testTable } from '../helpers/stores.js';
import { toProblem } from '../../lib/http/problem.js';

const spec = (name: string): TopicSpec => ({
  name,
  type: 'standard',
  retentionSeconds: 3600,
  maxDelaySeconds: 60,
  orderGroup: undefined,
  partitions: 4,
});

describe('catalog cache', () => {
  const clock = new FakeClock();
  let admin: Catalog;
  let data: Catalog;

  beforeAll(async () => {
    const { doc, table } = await testTable('catalog');
    const options = { cacheTtlMs: 5000, now: () => clock.now() };
    admin = new Catalog(doc, table, options);
    data = new Catalog(doc, table, options);
  });

  it('finds a topic created elsewhere at once (misses are not cached)', async () => {
    expect(await data.topic('t-new')).toBeUndefined();
    await admin.putTopic(spec('t-new'), clock.now());
    expect(await data.topic('t-new')).toMatchObject({ name: 't-new', generation: 1 });
    expect((await data.topics(['t-new', 'nope'])).has('t-new')).toBe(true);
  });

  it('serves a cached topic until it expires, then reads the deletion', async () => {
    await admin.putTopic(spec('t-del'), clock.now());
    expect(await data.topic('t-del')).toBeDefined();
    await admin.deleteTopic('t-del', clock.now());
    expect(await admin.topic('t-del')).toBeUndefined(); // the writing container knows at once
    expect(await data.topic('t-del')).toBeDefined(); // another one within its cache lifetime
    clock.advance(5001);
    expect(await data.topic('t-del')).toBeUndefined();
    expect((await data.topics(['t-del'])).size).toBe(0);
  });

  it('refuses to re-create a deleted topic until every cached copy has expired', async () => {
    await admin.putTopic(spec('t-again'), clock.now());
    await admin.deleteTopic('t-again', clock.now());
    clock.advance(4000);
    const refused = await admin.putTopic(spec('t-again'), clock.now()).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(TopicRecentlyDeletedError);
    expect((refused as TopicRecentlyDeletedError).retryAfterSeconds).toBe(6);
    const { problem, headers } = toProblem(refused);
    expect(problem).toMatchObject({ status: 409, code: 'TopicRecentlyDeleted' });
    expect(headers['retry-after']).toBe('6');
    clock.advance(6000);
    const { topic, created } = await admin.putTopic(spec('t-again'), clock.now());
    expect(created).toBe(true);
    expect(topic.generation).toBe(2);
  });

  it('serves a cached group until it expires; writes through one instance refresh it', async () => {
    const group = {
      name: 'g-cache',
      subscriptions: [{ topic: 't-new', tags: undefined }],
      deliveryMode: 'concurrent' as const,
      visibilityTimeoutSeconds: 30,
      maxDeliveries: 5,
      retryPolicy: DEFAULT_RETRY_POLICY,
      deadLetterTopic: 'g-cache-dlq',
    };
    // A save names its dead-letter topic on the topic's item: the topic exists (the service creates it).
    await admin.putTopic(spec('g-cache-dlq'), clock.now());
    const first = await admin.putGroup(group, clock.now(), 'absent');
    expect((await data.group('g-cache'))?.visibilityTimeoutSeconds).toBe(30);
    await admin.putGroup({ ...group, visibilityTimeoutSeconds: 90 }, clock.now(), { version: first!.version });
    expect((await admin.group('g-cache'))?.visibilityTimeoutSeconds).toBe(90);
    expect((await data.group('g-cache'))?.visibilityTimeoutSeconds).toBe(30);
    clock.advance(5001);
    expect((await data.group('g-cache'))?.visibilityTimeoutSeconds).toBe(90);
  });

  it('serves a deleted group from the cache until it expires and refuses to re-create it for twice that', async () => {
    const group = {
      name: 'g-gone',
      subscriptions: [{ topic: 't-new', tags: undefined }],
      deliveryMode: 'concurrent' as const,
      visibilityTimeoutSeconds: 30,
      maxDeliveries: 5,
      retryPolicy: DEFAULT_RETRY_POLICY,
      deadLetterTopic: 'g-gone-dlq',
    };
    // A save names its dead-letter topic on the topic's item: the topic exists (the service creates it).
    await admin.putTopic(spec('g-gone-dlq'), clock.now());
    const saved = await admin.putGroup(group, clock.now(), 'absent');
    expect(await data.group('g-gone')).toBeDefined();
    // A save conditional on an older read loses.
    expect(await admin.putGroup(group, clock.now(), { version: saved!.version - 1 })).toBeUndefined();
    await admin.deleteGroup('g-gone', clock.now());
    const deletedAt = clock.now();
    expect(await admin.group('g-gone')).toBeUndefined();
    expect(await data.group('g-gone')).toBeDefined();
    expect((await admin.groupRecord('g-gone')).deletedAt).toBe(deletedAt);
    expect((await admin.listGroups(100, undefined)).items.map((g) => g.name)).not.toContain('g-gone');
    await expect(admin.deleteGroup('g-gone', clock.now())).rejects.toMatchObject({ code: 'GroupNotFound' });
    // Neither a create nor an update of the tombstone while other containers may still use it.
    expect(await admin.putGroup(group, clock.now(), 'absent')).toBeUndefined();
    expect(await admin.putGroup(group, clock.now(), { version: saved!.version })).toBeUndefined();
    clock.advance(5001);
    expect(await data.group('g-gone')).toBeUndefined();
    expect(await admin.putGroup(group, clock.now(), 'absent')).toBeUndefined();
    clock.advance(5000);
    const again = await admin.putGroup(group, clock.now(), 'absent');
    expect(again).toMatchObject({ name: 'g-gone', createdAt: clock.now() });
    expect((await admin.groupRecord('g-gone')).deletedAt).toBeUndefined();
  });

  it('reads every time when the cache is off', async () => {
    const { doc, table } = await testTable('catalog-off');
    const a = new Catalog(doc, table);
    const b = new Catalog(doc, table);
    await a.putTopic(spec('t-off'), clock.now());
    expect(await b.topic('t-off')).toBeDefined();
    await a.deleteTopic('t-off', clock.now());
    expect(await b.topic('t-off')).toBeUndefined();
    expect(a.recreateAfterMs).toBe(0);
    expect((await a.putTopic(spec('t-off'), clock.now())).topic.generation).toBe(2);
  });
});
