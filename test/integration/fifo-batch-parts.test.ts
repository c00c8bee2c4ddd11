/**
 * A batch to one FIFO shard too large for one transaction is written in parts (100 entries, each
 * with a dedupId and a key: three parts). Its entries keep their array order (SPEC §3.2) even when a
 * middle part fails: the later parts then fail with it and are not written, so the client's retry of
 * the failed entries lands after the first part, in order. Until 2026-12-04 the later parts were
 * written: the retry landed behind them (m0–44, m90–99, m45–89; found by an audit).
 */
import { expect, it } from 'vitest';
import { group, topic } from '../helpers/builders.js';
import { harness, send, testTable } from '../helpers/stores.js';

interface TransactInput {
  TransactItems?: Array<{ Put?: { Item?: { pk?: { S?: string } | string } } }>;
}
const pkText = (pk: { S?: string } | string | undefined) => (typeof pk === 'string' ? pk : (pk?.S ?? ''));

it('a failed middle part of a FIFO batch fails the later parts too, and the retry lands in order', async () => {
  const { client, doc, table } = await testTable('parts');
  const h = harness(doc, table);
  await h.admin.putTopic('ledger', topic({ type: 'fifo' }));
  await h.admin.putGroup('g', group(['ledger'], { deliveryMode: 'concurrent' }));
  // The second transaction writing shard A is cancelled by a conflict (a 429 past the SDK's retries).
  let shardWrites = 0;
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const items = (args.input as TransactInput).TransactItems ?? [];
      if (context.commandName === 'TransactWriteItemsCommand' && items.some((t) => pkText(t.Put?.Item?.pk).includes('/k:A')) && ++shardWrites === 2) {
        throw Object.assign(new Error('injected conflict'), { name: 'TransactionCanceledException', CancellationReasons: [{ Code: 'TransactionConflict' }] });
      }
      return next(args);
    },
    { step: 'initialize', name: 'conflictOnSecondPart' },
  );
  const entries = Array.from({ length: 100 }, (_, i) => send(`m${i}`, { shardKey: 'A', dedupId: `d${i}`, keys: [`k${i}`] }));
  const first = await h.queue.sendBatch('ledger', entries);
  const failed = first.filter((r) => 'error' in r).map((r) => r.index);
  // The first part landed; the rest failed together (the second part and every later one).
  expect(failed.length).toBeGreaterThan(entries.length / 2);
  expect(failed).toEqual(Array.from({ length: failed.length }, (_, i) => entries.length - failed.length + i));
  // What the SDK's send batcher does: the failed entries again, in order.
  const again = await h.queue.sendBatch('ledger', failed.map((i) => entries[i]!));
  expect(again.every((r) => 'result' in r)).toBe(true);
  const got: string[] = [];
  for (let batch = await h.queue.receive('g', { maxMessages: 100, waitSeconds: 0 }); batch.length > 0; batch = await h.queue.receive('g', { maxMessages: 100, waitSeconds: 0 })) {
    got.push(...batch.map((m) => m.body));
    await h.queue.commit('g', batch.map((m) => m.receiptHandle));
  }
  expect(got).toEqual(entries.map((e) => e.body));
}, 60_000);
