/**
 * AWS limits kept by construction (docs/design.md, Limits by construction), on DynamoDB Local,
 * which enforces the same item, transaction and expression limits as DynamoDB.
 */
import { randomBytes } from 'node:crypto';
import { beforeEach, describe, expect, it } from 'vitest';
import { Limits } from '../../lib/domain/model.js';
import { jsonBytes } from '../../lib/domain/answer-budget.js';
import { newHarness, send, type Harness } from '../helpers/stores.js';
import { group, topic } from '../helpers/builders.js';

let h: Harness;

beforeEach(async () => {
  h = await newHarness();
  await h.admin.putTopic('blobs', topic());
  await h.admin.putGroup('readers', group('blobs'));
});

/** Incompressible bytes as base64 text: stored as text, a third larger than the bytes. */
const base64Body = (bytes: number) => ({ ...send(randomBytes(bytes).toString('base64')), encoding: 'base64' as const });

describe('item size: segments are sized by stored bytes', () => {
  it('sends a batch of 3 × 116 KB base64 bodies (issue 14 item 2) and delivers each byte for byte', async () => {
    const entries = [0, 1, 2].map(() => base64Body(116 * 1024));
    const results = await h.queue.sendBatch('blobs', entries);
    expect(results.map((r) => ('error' in r ? r.error.message : r.result.state))).toEqual(['deliverable', 'deliverable', 'deliverable']);
    const got = await h.queue.receive('readers', { maxMessages: 10, waitSeconds: 0 });
    expect(got.map((m) => m.body).sort()).toEqual(entries.map((e) => e.body).sort());
  });

  it('sends a batch of 4 bodies of 256 KiB incompressible bytes (base64) and of 256 KiB text', async () => {
    const entries = [base64Body(256 * 1024), base64Body(256 * 1024), send('x'.repeat(256 * 1024)), send('é'.repeat(128 * 1024))];
    const results = await h.queue.sendBatch('blobs', entries);
    expect(results.every((r) => 'result' in r)).toBe(true);
    const got = await h.queue.receive('readers', { maxMessages: 10, waitSeconds: 0 });
    expect(got.map((m) => m.body).sort()).toEqual(entries.map((e) => e.body).sort());
  });
});

describe('item size on a sequenced FIFO shard: segments carry their grant within the budget', () => {
  it('4 × 256 KiB incompressible bodies on one shard key land (each segment ≤ 400 KB with ga/pv/pt/ef) and arrive in order', async () => {
    await h.admin.putTopic('ledger', topic({ type: 'fifo', sequenced: true }));
    await h.admin.putGroup('ordered', group('ledger', { deliveryMode: 'concurrent' }));
    const entries = [0, 1, 2, 3].map(() => ({ ...base64Body(256 * 1024), shardKey: 'big' }));
    const results = await h.queue.sendBatch('ledger', entries);
    expect(results.every((r) => 'result' in r)).toBe(true);
    const got = await h.queue.receive('ordered', { maxMessages: 10, waitSeconds: 0 });
    expect(got.map((m) => m.body)).toEqual(entries.map((e) => e.body));
  });
});

describe('answers ≤ 5 MB: a receive never leases what it does not return', () => {
  /** 256 KiB text bodies, each different (compressible: they are stored small, but answered in full). */
  const big = (i: number) => send(`${String(i).padStart(3, '0')}:${'x'.repeat(256 * 1024 - 4)}`);

  it('100 × 256 KiB: the first answer is < 5 MB and leases only what it returns; the rest is deliverable at once', async () => {
    for (let i = 0; i < 100; i += 4) {
      const results = await h.queue.sendBatch('blobs', [i, i + 1, i + 2, i + 3].map(big));
      expect(results.every((r) => 'result' in r)).toBe(true);
    }
    const first = await h.queue.receive('readers', { maxMessages: 100, waitSeconds: 0 });
    const bytes = jsonBytes({ messages: first });
    expect(bytes).toBeLessThanOrEqual(Limits.answerMaxBytes);
    expect(first.length).toBeGreaterThan(10);
    expect(first.length).toBeLessThan(100);
    // Leased = returned: nothing is hidden behind a lease the caller never saw.
    expect((await h.admin.getGroup('readers')).inFlight).toBe(first.length);
    // The rest comes with the next receives, at once (no visibility timeout to wait for).
    const seen = new Set(first.map((m) => m.body.slice(0, 3)));
    for (let round = 0; round < 10 && seen.size < 100; round++) {
      const next = await h.queue.receive('readers', { maxMessages: 100, waitSeconds: 0 });
      expect(next.length).toBeGreaterThan(0);
      expect(jsonBytes({ messages: next })).toBeLessThanOrEqual(Limits.answerMaxBytes);
      for (const m of next) {
        expect(seen.has(m.body.slice(0, 3))).toBe(false);
        expect(m.deliveryCount).toBe(1);
        seen.add(m.body.slice(0, 3));
      }
    }
    expect(seen.size).toBe(100);
    expect((await h.admin.getGroup('readers')).inFlight).toBe(100);
  });

  it('redeliveries take the same budget, and a receive that carries commits keeps room for their results', async () => {
    // Leases come back right at their 1 s expiry: no retry back-off on top (retry-policy.test.ts has it).
    await h.admin.patchGroup('readers', { retryPolicy: { initialSeconds: 0 } });
    for (let i = 0; i < 40; i += 4) await h.queue.sendBatch('blobs', [i, i + 1, i + 2, i + 3].map(big));
    const first = await h.queue.receive('readers', { maxMessages: 100, waitSeconds: 0, visibilityTimeoutSeconds: 1 });
    h.clock.advance(1_001);
    const again = await h.queue.receive('readers', { maxMessages: 100, waitSeconds: 0 });
    expect(again.length).toBeGreaterThan(0);
    expect(jsonBytes({ messages: again })).toBeLessThanOrEqual(Limits.answerMaxBytes);
    // Expired leases come back (deliveryCount 2) next to messages not delivered yet (1), none twice.
    const firstIds = new Set(first.map((m) => m.messageId));
    expect(again.every((m) => (m.deliveryCount === 2) === firstIds.has(m.messageId))).toBe(true);
    expect(new Set(again.map((m) => m.messageId)).size).toBe(again.length);
    expect((await h.admin.getGroup('readers')).inFlight).toBe(again.length);
    // Commit what came back with the next receive: both fields together stay within the limit.
    const carried = await h.queue.commitAndReceive('readers', [...again, ...first].map((m) => m.receiptHandle), { maxMessages: 100, waitSeconds: 0 });
    // The redelivered handles commit; first handles commit too unless their message was delivered again.
    expect(carried.commitResults.slice(0, again.length).every((r) => 'status' in r && r.status === 'committed')).toBe(true);
    expect(carried.commitResults).toHaveLength(again.length + first.length);
    expect(jsonBytes({ messages: carried.messages, commitResults: carried.commitResults.map((r) => ('error' in r ? { receiptHandle: r.receiptHandle, error: { code: r.error.code, detail: r.error.message } } : r)) })).toBeLessThanOrEqual(Limits.answerMaxBytes);
    expect(carried.messages.length).toBeGreaterThan(0);
  });
});

describe('listings page within the answer budget', () => {
  it('messages by key: 25 × 256 KiB come in pages < 5 MB whose tokens resume where the page ended', async () => {
    for (let i = 0; i < 25; i += 5) {
      const entries = [0, 1, 2, 3, 4].map((j) => send(`${String(i + j).padStart(3, '0')}:${'y'.repeat(256 * 1024 - 4)}`, { keys: ['order-7'] }));
      expect((await h.queue.sendBatch('blobs', entries)).every((r) => 'result' in r)).toBe(true);
    }
    const seen: string[] = [];
    let token: string | undefined;
    let pages = 0;
    do {
      const page = await h.queue.messagesByKey('blobs', 'order-7', 100, token);
      expect(jsonBytes({ messages: page.messages, nextToken: page.nextToken ?? null })).toBeLessThanOrEqual(Limits.answerMaxBytes);
      expect(page.messages.length).toBeGreaterThan(0);
      seen.push(...page.messages.map((m) => m.body.slice(0, 3)));
      token = page.nextToken;
      pages++;
    } while (token !== undefined && pages < 10);
    expect(pages).toBeGreaterThan(1);
    expect(new Set(seen).size).toBe(25);
    expect(seen).toHaveLength(25);
  });

  it('topics and groups: a refused item ends the page, and the token resumes at it', async () => {
    for (const name of ['t1', 't2', 't3', 't4']) await h.admin.putTopic(name, topic());
    const names = async (admitted: number, token?: string) => {
      let n = 0; // asked from the second item on (the first always joins a page)
      const page = await h.stores.catalog.listTopics(100, token, () => ++n <= admitted - 1);
      return { names: page.items.map((t) => t.name), token: page.nextToken };
    };
    const first = await names(2);
    expect(first.names).toHaveLength(2);
    expect(first.token).toBeDefined();
    const rest = await names(100, first.token);
    expect([...first.names, ...rest.names]).toEqual((await h.admin.listTopics(100, undefined)).topics.map((t) => t.name));
  });
});

describe('statistics after a topic is deleted and re-created (issue 14 contract point)', () => {
  it('count only the current generation: group backlog and topic approximateMessages', async () => {
    await h.admin.putTopic('orders', topic());
    await h.admin.putGroup('billing', group('orders'));
    for (let i = 0; i < 6; i++) await h.queue.send('orders', send(`old-${i}`));
    await h.admin.deleteTopic('orders');
    await h.admin.putTopic('orders', topic());
    for (let i = 0; i < 6; i++) await h.queue.send('orders', send(`new-${i}`));
    expect((await h.admin.getGroup('billing')).backlog).toBe(6);
    expect((await h.admin.getTopic('orders')).approximateMessages).toBe(6);
    const got = await h.queue.receive('billing', { maxMessages: 100, waitSeconds: 0 });
    expect(got.map((m) => m.body).sort()).toEqual([0, 1, 2, 3, 4, 5].map((i) => `new-${i}`));
    const stats = await h.admin.getGroup('billing');
    expect([stats.backlog, stats.inFlight]).toEqual([0, 6]);
  });
});
