/**
 * What the redrive hint costs a receive (docs/design.md, Redrive): requests counted on the
 * DynamoDB client of a real table, for a group that never redrove and for one that did.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { harness, send, testTable, type Harness } from '../helpers/stores.js';
import { group, topic } from '../helpers/builders.js';

interface Seen {
  command: string;
  keys: number;
}

let h: Harness;
let seen: Seen[];

beforeEach(async () => {
  const { doc, table } = await testTable();
  seen = [];
  doc.middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as { RequestItems?: Record<string, { Keys?: unknown[] }> };
      const keys = Object.values(input.RequestItems ?? {}).reduce((n, r) => n + (r.Keys?.length ?? 0), 0);
      seen.push({ command: String(context.commandName), keys });
      return next(args);
    },
    { step: 'initialize', name: 'countRequests' },
  );
  h = harness(doc, table);
  await h.admin.putTopic('orders', topic());
  await h.admin.putGroup('billing', group('orders', { maxDeliveries: 1 }));
});

/** The requests one empty receive sends. */
async function emptyReceive() {
  seen = [];
  expect(await h.queue.receive('billing', { maxMessages: 10, waitSeconds: 0 })).toEqual([]);
  return seen;
}

describe('receive cost of the redrive hint', () => {
  it('is nothing for a group that never redrove; one more cursor key and one Query after a redrive', async () => {
    const before = await emptyReceive();
    // Group Get (no catalog cache here), topics BatchGet, the 4 partition cursors in one BatchGet, a Query per partition.
    expect(before.map((r) => r.command)).toEqual(['GetItemCommand', 'BatchGetItemCommand', 'BatchGetItemCommand', ...Array(4).fill('QueryCommand')]);
    expect(before.map((r) => r.keys)).toEqual([0, 1, 4, 0, 0, 0, 0]);

    await h.queue.send('orders', send('x'));
    expect(await h.queue.receive('billing', { maxMessages: 10, waitSeconds: 0 })).toHaveLength(1);
    h.clock.advance(30_001);
    await emptyReceive(); // dead-letters it
    expect((await h.redriver.redrive('billing', undefined)).redriven).toBe(1);
    const [back] = await h.queue.receive('billing', { maxMessages: 10, waitSeconds: 0 });
    await h.queue.commit('billing', [back!.receiptHandle]);

    const after = await emptyReceive();
    // The redrive cursor joins the same BatchGet; its stream costs one Query more, also when drained.
    expect(after.map((r) => r.command)).toEqual(['GetItemCommand', 'BatchGetItemCommand', 'BatchGetItemCommand', ...Array(5).fill('QueryCommand')]);
    expect(after.map((r) => r.keys)).toEqual([0, 1, 5, 0, 0, 0, 0, 0]);
  });
});
