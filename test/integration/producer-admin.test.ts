/** Listing and deleting producer groups (issue 17 item 5) on DynamoDB Local. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { newHarness, send, type Harness } from '../helpers/stores.js';
import * as build from '../helpers/builders.js';
import { startChecker, type TestChecker } from '../helpers/checker.js';
import { InvalidArgumentError, ProducerGroupNotFoundError, ProducerInUseError } from '../../lib/domain/errors.js';

let h: Harness;
let checker: TestChecker;

const half = (producerGroup: string, body: string, checkAfterSeconds = 10) =>
  h.queue.send('orders', send(body, { transaction: { producerGroup, checkAfterSeconds } }));

async function producer(name: string, settings: { maxChecks?: number; onMaxChecks?: 'rollback' | 'commit' | 'keep' } = {}) {
  const created = await h.transactions.putProducer(name, build.producer(checker.url, { checkIntervalSeconds: 30, ...settings }));
  checker.secrets = [(created as { signingSecret: string }).signingSecret];
}

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
});
afterEach(async () => checker.close());

describe('producer groups', () => {
  it('lists them by name, paged, without secrets', async () => {
    for (const name of ['p-c', 'p-a', 'p-b']) await producer(name);
    const first = await h.transactions.listProducers(2, undefined);
    expect(first.producers.map((p) => p.name)).toEqual(['p-a', 'p-b']);
    expect(first.nextToken).not.toBeNull();
    const second = await h.transactions.listProducers(2, first.nextToken!);
    expect(second).toMatchObject({ producers: [{ name: 'p-c', checkerUrl: checker.url }], nextToken: null });
    expect(JSON.stringify([first, second])).not.toContain('whsec_');
    await expect(h.transactions.listProducers(2, 'bm9wZQ')).rejects.toBeInstanceOf(InvalidArgumentError);
  });

  it('refuses to delete one with a prepared half message (409 ProducerInUse), then deletes it once resolved', async () => {
    await producer('shop');
    await producer('other');
    const sent = await half('shop', 'order-1');
    await half('other', 'unrelated');
    await expect(h.transactions.deleteProducer('shop')).rejects.toBeInstanceOf(ProducerInUseError);
    expect(await h.transactions.getProducer('shop')).toMatchObject({ name: 'shop' });
    await h.transactions.rollback(sent.transactionId!);
    await h.transactions.deleteProducer('shop');
    await expect(h.transactions.getProducer('shop')).rejects.toBeInstanceOf(ProducerGroupNotFoundError);
    await expect(h.transactions.deleteProducer('shop')).rejects.toBeInstanceOf(ProducerGroupNotFoundError);
    // The other group's half message still blocks the other group only.
    await expect(h.transactions.deleteProducer('other')).rejects.toBeInstanceOf(ProducerInUseError);
  });

  it('counts a half message kept after maxChecks as unresolved, and never checks it again', async () => {
    await producer('shop', { maxChecks: 1, onMaxChecks: 'keep' });
    const sent = await half('shop', 'kept', 1);
    await checkBack(1_000);
    expect(await h.transactions.get(sent.transactionId!)).toMatchObject({ state: 'prepared', resolvedBy: null, resolvedAt: null, nextCheckAt: null });
    await checkBack(3 * 86_400_000);
    expect(checker.calls).toHaveLength(1);
    await expect(h.transactions.deleteProducer('shop')).rejects.toBeInstanceOf(ProducerInUseError);
    await h.transactions.commit(sent.transactionId!);
    await h.transactions.deleteProducer('shop');
    expect((await h.transactions.listProducers(100, undefined)).producers).toEqual([]);
  });
});
