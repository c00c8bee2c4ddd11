/**
 * TransactionProducer against the local runtime: half message → local
 * transaction → commit or rollback. (The check-back round trip through
 * createCheckerHandler is covered by the transaction e2e tests.) Runs once the
 * server serves the transaction routes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routes } from '../../functions/api/routes.js';
import type { LocalRuntime } from '../../local/runtime.js';
import { SluiceClient, TransactionProducer } from '../../lib/client/index.js';
import { TOKEN, startRuntime } from '../helpers/local.js';

const served = routes.some((r) => r.path === '/v1/transactions/{transactionId}/commit');

let runtime: LocalRuntime;
let client: SluiceClient;
let producer: TransactionProducer;

describe.runIf(served)('TransactionProducer', () => {
  beforeAll(async () => {
    runtime = await startRuntime();
    client = new SluiceClient({ endpoint: runtime.url, token: TOKEN });
    await client.putTopic('tx-orders', { type: 'standard' });
    await client.putGroup('tx-shipping', { subscriptions: [{ topic: 'tx-orders' }] });
    // Nothing listens there: these transactions are all resolved long before their first check.
    const created = await client.putProducer('tx-producer', { checkerUrl: 'http://127.0.0.1:9/check' });
    expect(created.signingSecret).toMatch(/^whsec_/);
    producer = new TransactionProducer(client, { producerGroup: 'tx-producer', checkAfterSeconds: 3600 });
  });
  afterAll(async () => runtime?.stop());

  it('commits the half message when the local transaction succeeds', async () => {
    let seen: { messageId: string; transactionId: string } | undefined;
    let visibleDuringTransaction: unknown[] | undefined;
    const outcome = await producer.send('tx-orders', { body: 'order 1', keys: ['order-1'] }, async (half) => {
      seen = half;
      visibleDuringTransaction = await client.receive('tx-shipping', { waitSeconds: 0 });
    });
    expect(visibleDuringTransaction).toEqual([]); // a half message is invisible
    expect(outcome).toMatchObject({ state: 'committed', messageId: seen?.messageId, transactionId: seen?.transactionId });
    const got = await client.receive('tx-shipping', { waitSeconds: 2 });
    expect(got.map((m) => m.body)).toEqual(['order 1']);
    await client.commit('tx-shipping', got.map((m) => m.receiptHandle));
    expect(await client.getTransaction(outcome.transactionId)).toMatchObject({ state: 'committed', messageId: outcome.messageId });
  });

  it('rolls back when the local transaction throws, and rethrows', async () => {
    let transactionId = '';
    await expect(
      producer.send('tx-orders', { body: 'order 2' }, async (half) => {
        transactionId = half.transactionId;
        throw new Error('insert failed');
      }),
    ).rejects.toThrow('insert failed');
    expect(await client.getTransaction(transactionId)).toMatchObject({ state: 'rolled-back' });
    expect(await client.receive('tx-shipping', { waitSeconds: 1 })).toEqual([]);
  });

  it('leaves an unknown outcome prepared until resolved, and the first resolution wins', async () => {
    const outcome = await producer.send('tx-orders', { body: 'order 3' }, () => 'unknown');
    expect(outcome.state).toBe('unknown');
    expect(await client.getTransaction(outcome.transactionId)).toMatchObject({ state: 'prepared' });
    expect(await producer.commit(outcome.transactionId)).toMatchObject({ state: 'committed' });
    expect(await producer.commit(outcome.transactionId)).toMatchObject({ state: 'committed' });
    await expect(producer.rollback(outcome.transactionId)).rejects.toMatchObject({ status: 409, code: 'TransactionAlreadyResolved' });
    const got = await client.receive('tx-shipping', { waitSeconds: 2 });
    expect(got.map((m) => m.body)).toEqual(['order 3']);
    await client.commit('tx-shipping', got.map((m) => m.receiptHandle));
  });
});
