import { randomBytes } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { newHarness, send, type Harness } from '../helpers/stores.js';
import * as build from '../helpers/builders.js';
import { startChecker, type TestChecker } from '../helpers/checker.js';
import { InvalidArgumentError, ProducerGroupNotFoundError, TransactionAlreadyResolvedError } from '../../lib/domain/errors.js';

let h: Harness;
let checker: TestChecker;

const receive = () => h.queue.receive('g', { maxMessages: 10, waitSeconds: 0 });
const bodies = (ms: Array<{ body: string }>) => ms.map((m) => m.body);
const half = (body: string, checkAfterSeconds = 10) =>
  h.queue.send('orders', send(body, { transaction: { producerGroup: 'shop', checkAfterSeconds } }));

async function producer(settings: { maxChecks?: number; onMaxChecks?: 'rollback' | 'commit' | 'keep'; checkIntervalSeconds?: number } = {}) {
  const created = await h.transactions.putProducer('shop', build.producer(checker.url, { checkIntervalSeconds: settings.checkIntervalSeconds ?? 30, maxChecks: settings.maxChecks, onMaxChecks: settings.onMaxChecks }));
  expect(created).toHaveProperty('signingSecret');
  checker.secrets = [(created as { signingSecret: string }).signingSecret];
}

/** Advances the fake clock, sweeps, and runs the dispatched checks like the workers would. */
async function checkBack(advanceMs: number) {
  h.clock.advance(advanceMs);
  h.dispatched.length = 0;
  await h.transactions.sweep();
  for (const id of [...h.dispatched]) await h.transactions.check(id);
}

beforeEach(async () => {
  h = await newHarness({ checkTimeoutMs: 1000 });
  checker = await startChecker(() => 'unknown');
  await h.admin.putTopic('orders', build.topic());
  await h.admin.putGroup('g', build.group('orders', { visibilityTimeoutSeconds: 30 }));
});
afterEach(async () => checker.close());

describe('transactional messages', () => {
  it('keeps a half message invisible until commit; first resolution wins', async () => {
    await producer();
    const sent = await half('order-1');
    expect(sent).toMatchObject({ state: 'prepared', transactionId: expect.stringMatching(/^t/) });
    expect(await h.queue.getMessage('orders', sent.messageId)).toMatchObject({ state: 'prepared' });
    expect(await receive()).toEqual([]);
    const tx = sent.transactionId!;
    expect(await h.transactions.commit(tx)).toEqual({ state: 'committed', messageId: sent.messageId });
    expect(await h.transactions.commit(tx)).toEqual({ state: 'committed', messageId: sent.messageId });
    await expect(h.transactions.rollback(tx)).rejects.toBeInstanceOf(TransactionAlreadyResolvedError);
    expect(bodies(await receive())).toEqual(['order-1']);
    expect(await h.transactions.get(tx)).toMatchObject({ state: 'committed', resolvedBy: 'producer', checks: [] });
  });

  it('rolls back: never delivered, idempotent, commit refused', async () => {
    await producer();
    const tx = (await half('order-2')).transactionId!;
    expect(await h.transactions.rollback(tx)).toEqual({ state: 'rolled-back' });
    expect(await h.transactions.rollback(tx)).toEqual({ state: 'rolled-back' });
    await expect(h.transactions.commit(tx)).rejects.toBeInstanceOf(TransactionAlreadyResolvedError);
    await checkBack(60_000);
    expect(checker.calls).toEqual([]);
    expect(await receive()).toEqual([]);
  });

  it('checks back a producer that crashed after sending, after checkAfterSeconds, and applies its answer', async () => {
    await producer();
    checker.answer = (check) => (check.message.body === 'commit-me' ? 'commit' : 'rollback');
    const committed = await half('commit-me', 10);
    const rolledBack = await half('roll-me-back', 10);
    await checkBack(9_000);
    expect(checker.calls).toEqual([]);
    await checkBack(1_000);
    expect(checker.calls.map((c) => [c.verified, c.checkCount, c.status])).toEqual([
      [true, 1, 200],
      [true, 1, 200],
    ]);
    expect(bodies(await receive())).toEqual(['commit-me']);
    expect(await h.transactions.get(committed.transactionId!)).toMatchObject({
      state: 'committed',
      resolvedBy: 'check',
      checks: [{ checkCount: 1, status: 'commit', httpStatus: 200, error: null }],
    });
    expect(await h.transactions.get(rolledBack.transactionId!)).toMatchObject({ state: 'rolled-back', resolvedBy: 'check' });
  });

  it('retries unknown every interval up to maxChecks, then applies onMaxChecks', async () => {
    await producer({ maxChecks: 3, onMaxChecks: 'commit', checkIntervalSeconds: 30 });
    const sent = await half('undecided', 5);
    await checkBack(5_000);
    await checkBack(10_000); // not yet due again
    expect(checker.calls).toHaveLength(1);
    await checkBack(20_000);
    await checkBack(30_000);
    expect(checker.calls.map((c) => c.checkCount)).toEqual([1, 2, 3]);
    await checkBack(30_000);
    expect(checker.calls).toHaveLength(3);
    expect(await h.transactions.get(sent.transactionId!)).toMatchObject({ state: 'committed', resolvedBy: 'onMaxChecks', checkCount: 3 });
    expect(bodies(await receive())).toEqual(['undecided']);
  });

  it('keeps a half message unresolved with onMaxChecks keep', async () => {
    await producer({ maxChecks: 1, onMaxChecks: 'keep' });
    const sent = await half('kept', 1);
    await checkBack(1_000);
    await checkBack(120_000);
    expect(checker.calls).toHaveLength(1);
    // Checks stopped (no next check, checkCount = maxChecks), but nothing resolved it: no resolvedBy/resolvedAt.
    expect(await h.transactions.get(sent.transactionId!)).toMatchObject({ state: 'prepared', resolvedBy: null, resolvedAt: null, nextCheckAt: null, checkCount: 1 });
    await h.transactions.commit(sent.transactionId!); // the producer can still resolve it
    expect(bodies(await receive())).toEqual(['kept']);
    expect(await h.transactions.get(sent.transactionId!)).toMatchObject({ state: 'committed', resolvedBy: 'producer', resolvedAt: new Date(h.clock.now()).toISOString() });
  });

  it('hands every due half message to the workers in one sweep, whatever their size', async () => {
    await producer();
    const sent = [];
    // Incompressible bodies keep the items large: DynamoDB Local ends an index page after ~1 MB of items.
    for (let i = 0; i < 24; i++) {
      const body = randomBytes(256 * 1024).toString('base64');
      sent.push(await h.queue.send('orders', send(body, { encoding: 'base64', transaction: { producerGroup: 'shop', checkAfterSeconds: 1 } })));
    }
    h.clock.advance(1_000);
    h.dispatched.length = 0;
    expect(await h.transactions.sweep()).toBe(24);
    expect([...h.dispatched].sort()).toEqual(sent.map((s) => s.transactionId).sort());
  }, 60_000);

  it('counts timeouts, 500s, redirects and bad answers as unknown', async () => {
    await producer({ maxChecks: 10 });
    const answers = [{ sleepMs: 1500, then: 'commit' as const }, { http: 500 }, { http: 302 }, { http: 200 }];
    let i = 0;
    checker.answer = () => answers[i++] ?? 'unknown';
    const sent = await half('flaky', 1);
    await checkBack(1_000);
    for (let k = 0; k < 3; k++) await checkBack(30_000);
    const view = await h.transactions.get(sent.transactionId!);
    expect(view.state).toBe('prepared');
    expect(view.checks.map((c) => c.status)).toEqual(['unknown', 'unknown', 'unknown', 'unknown']);
    expect(view.checks[0]?.error).toMatch(/no answer within 1000 ms/);
    expect(view.checks[1]).toMatchObject({ httpStatus: 500 });
    expect(view.checks[2]).toMatchObject({ httpStatus: 302 });
    expect(view.checks[3]).toMatchObject({ httpStatus: 200, error: 'checker answer has no valid status' });
  });

  it('resolves exactly once when a commit races a check-back rollback', async () => {
    await producer();
    checker.answer = () => 'rollback';
    for (let round = 0; round < 8; round++) {
      const sent = await half(`race-${round}`, 1);
      h.clock.advance(1_000);
      h.dispatched.length = 0;
      await h.transactions.sweep();
      const [commit] = await Promise.allSettled([h.transactions.commit(sent.transactionId!), ...h.dispatched.map((id) => h.transactions.check(id))]);
      const view = await h.transactions.get(sent.transactionId!);
      if (commit.status === 'fulfilled') expect(view.state).toBe('committed');
      else {
        expect(commit.reason).toBeInstanceOf(TransactionAlreadyResolvedError);
        expect(view.state).toBe('rolled-back');
      }
      const delivered = bodies(await receive());
      expect(delivered).toEqual(view.state === 'committed' ? [`race-${round}`] : []);
    }
  });

  it('refuses sends for unknown producer groups and scheduled transactions', async () => {
    await expect(half('x')).rejects.toBeInstanceOf(ProducerGroupNotFoundError);
    await producer();
    await expect(
      h.queue.send('orders', send('x', { delaySeconds: 5, transaction: { producerGroup: 'shop', checkAfterSeconds: undefined } })),
    ).rejects.toBeInstanceOf(InvalidArgumentError);
  });

  it('signs with the new and the old secret for a day after rotation', async () => {
    await producer();
    const old = checker.secrets[0]!;
    const rotated = await h.transactions.rotateSecret('shop');
    expect(rotated.signingSecret).not.toBe(old);
    checker.secrets = [old]; // a checker not yet updated still verifies
    checker.answer = () => 'commit';
    await half('rotated', 1);
    await checkBack(1_000);
    expect(checker.calls.map((c) => c.verified)).toEqual([true]);
    expect(bodies(await receive())).toEqual(['rotated']);
    expect(await h.transactions.getProducer('shop')).not.toHaveProperty('signingSecret');
  });

  it('refuses checker URLs that could reach private networks', async () => {
    const strict = (await import('../../lib/domain/ssrf.js')).checkerUrlProblem;
    for (const url of [
      'http://example.com/check',
      'https://10.1.2.3/check',
      'https://172.16.0.1/',
      'https://192.168.1.1/',
      'https://169.254.169.254/latest/meta-data',
      'https://[fd00::1]/',
      'https://[fe80::1]/',
      'https://[::ffff:10.0.0.1]/',
      'https://127.0.0.1/',
      'https://localhost/',
      'https://user:pass@example.com/',
      'ftp://example.com/',
    ]) {
      expect(strict(url, { allowLoopback: false }), url).toBeDefined();
    }
    expect(strict('https://example.com/check', { allowLoopback: false })).toBeUndefined();
    // The local runtime allows loopback, still not private or link-local.
    expect(strict('http://127.0.0.1:8080/', { allowLoopback: true })).toBeUndefined();
    expect(strict('http://10.0.0.1/', { allowLoopback: true })).toBeDefined();
    expect(strict('https://169.254.169.254/', { allowLoopback: true })).toBeDefined();
    await expect(h.transactions.putProducer('evil', build.producer('https://169.254.169.254/'))).rejects.toBeInstanceOf(InvalidArgumentError);
  });
});
