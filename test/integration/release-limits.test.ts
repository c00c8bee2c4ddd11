/**
 * The release of due scheduled messages at DynamoDB's limits (issue 14, item 2),
 * on DynamoDB Local, which enforces the item (400 KB) and transaction (100 items,
 * 4 MB) limits: appends are split by stored size, and a message that cannot be
 * released is isolated instead of aborting the release or the sweep.
 */
import { inflateRawSync } from 'node:zlib';
import { randomBytes } from 'node:crypto';
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { deferredKey, dueIndexPkOf } from '../../lib/adapters/dynamodb/keys.js';
import { InProcessNotifier } from '../../lib/ports/notifier.js';
import { cryptoRandom } from '../../lib/ports/random.js';
import { DeferredReleaser, RELEASE_RETRY_MS } from '../../lib/services/releaser.js';
import { WritePlanner } from '../../lib/services/write-planner.js';
import { group, topic } from '../helpers/builders.js';
import { FakeClock, harness, newHarness, send, testTable, type Harness } from '../helpers/stores.js';
import { recordCalls } from '../helpers/call-recorder.js';

const idOf = (messageId: string) => messageId.slice(1);

/** A releaser of the harness's stores that records what it logs. */
const loggingReleaser = (h: Harness) => {
  const logged: Array<{ message: string; details: Record<string, unknown> }> = [];
  const releaser = new DeferredReleaser(h.stores, h.clock, new InProcessNotifier(), new WritePlanner(h.clock, cryptoRandom), (message, details) =>
    logged.push({ message, details }),
  );
  return { releaser, logged };
};

/** `count` messages of the FIFO shard, in order, from repeated receives (visibility long enough not to redeliver). */
const receiveAll = async (h: Harness, groupName: string, count: number) => {
  const got: Array<{ body: string; sequence: number | null }> = [];
  for (let round = 0; round < 4 * count && got.length < count; round++) {
    const batch = await h.queue.receive(groupName, { maxMessages: 1, waitSeconds: 0 });
    for (const m of batch) {
      got.push(m);
      await h.queue.commit(groupName, [m.receiptHandle]);
    }
  }
  return got;
};

/** Does `value` carry `text` — as a string, or inside a packed segment's deflated `mz` (segment-records.ts)? */
function mentions(value: unknown, text: string): boolean {
  if (typeof value === 'string') return value.includes(text);
  if (value instanceof Uint8Array) {
    try {
      return inflateRawSync(value).toString('utf8').includes(text);
    } catch {
      return false;
    }
  }
  if (value && typeof value === 'object') return Object.values(value).some((v) => mentions(v, text));
  return false;
}

describe('release of due scheduled messages at the limits', () => {
  it('releases two ~240 KB scheduled messages of one FIFO shard due together, in order', async () => {
    const h = await newHarness();
    await h.admin.putTopic('ledger', topic({ type: 'fifo' }));
    await h.admin.putGroup('f', group('ledger', { deliveryMode: 'serialized', visibilityTimeoutSeconds: 300 }));
    const due = h.clock.now() + 5_000;
    // Incompressible text: stored as text, 240 KB each, 480 KB together — more than one item holds.
    const bodies = [0, 1].map(() => randomBytes(180 * 1024).toString('base64'));
    const sent = [];
    for (const body of bodies) sent.push(await h.queue.send('ledger', send(body, { encoding: 'base64', shardKey: 'A', deliverAt: due })));
    h.clock.t = due;
    await h.fire();
    for (const s of sent) expect(await h.queue.getMessage('ledger', s.messageId)).toMatchObject({ state: 'deliverable' });
    const got = await receiveAll(h, 'f', 2);
    expect(got.map((m) => m.body)).toEqual(bodies);
    // The shard opened at the release (its numbers start from the clock, docs/design.md, Idle shards expire).
    expect(got.map((m) => m.sequence! - due * 1000)).toEqual([1, 2]);
  }, 60_000);

  it('releases 40 messages to 40 FIFO shards whose heads are closing (a marker each beside the new epoch\'s sentinel) without a transaction over 100 items', async () => {
    const table = await testTable();
    const calls = recordCalls(table.client);
    const h = harness(table.doc, table.table);
    await h.admin.putTopic('ledger', topic({ type: 'fifo', retentionSeconds: 300 }));
    await h.admin.putGroup('f', group('ledger', { deliveryMode: 'serialized', visibilityTimeoutSeconds: 300 }));
    const keys = Array.from({ length: 40 }, (_, i) => `K${i}`);
    // Each shard's head segment lives 300 s; 250 s on it is within a minute of its `ttl`: closing.
    await h.queue.sendBatch('ledger', keys.map((k) => send(`${k}-first`, { shardKey: k })));
    const due = h.clock.now() + 250_000;
    await h.queue.sendBatch('ledger', keys.map((k) => send(`${k}-later`, { shardKey: k, deliverAt: due })));
    h.clock.t = due;
    calls.recording = true;
    await h.fire();
    calls.recording = false;
    // Counted at 3 items a shard (its segment, sentinel and deferred item), 33 shards made 132 items
    // with the closing markers: DynamoDB refused the transaction and the release isolated every message.
    expect(calls.transactions.failed).toBe(0);
    expect(calls.transactions.sent).toBeLessThanOrEqual(3);
    const got = await receiveAll(h, 'f', 80);
    expect(got.map((m) => m.body).sort()).toEqual(keys.flatMap((k) => [`${k}-first`, `${k}-later`]).sort());
  }, 120_000);

  it('releases 100 × 256 KiB incompressible messages due in one second', async () => {
    const h = await newHarness();
    await h.admin.putTopic('jobs', topic());
    const due = Math.floor(h.clock.now() / 1000) * 1000 + 3_000;
    const sent: string[] = [];
    for (let i = 0; i < 100; i += 10) {
      const sends = Array.from({ length: 10 }, (_, j) =>
        h.queue.send('jobs', send(randomBytes(256 * 1024).toString('base64'), { encoding: 'base64', deliverAt: due + i + j })),
      );
      sent.push(...(await Promise.all(sends)).map((s) => s.messageId));
    }
    h.clock.t = due + 999;
    const released = await h.timers.onRelease({ kind: 'release', minute: Math.floor(due / 60_000), second: Math.floor(due / 1000) });
    expect(released).toBe(100);
    for (const id of sent) expect((await h.queue.getMessage('jobs', id)).state).toBe('deliverable');
  }, 300_000);

  it('isolates a message it cannot read: logged with its id, moved to the next sweep, the others released in order', async () => {
    const h = await newHarness();
    await h.admin.putTopic('ledger', topic({ type: 'fifo' }));
    await h.admin.putGroup('f', group('ledger', { deliveryMode: 'serialized', visibilityTimeoutSeconds: 300 }));
    const due = h.clock.now() + 2_000;
    const sent = [];
    for (const body of ['a', 'poison', 'b']) {
      // Compressible and above 512 bytes: stored deflated, so a corrupted body cannot be read back.
      sent.push(await h.queue.send('ledger', send(body.repeat(400), { shardKey: 'A', deliverAt: due })));
    }
    const poison = idOf(sent[1]!.messageId);
    await h.doc.send(
      new UpdateCommand({
        TableName: h.table,
        Key: deferredKey(poison),
        UpdateExpression: 'SET r.z = :junk',
        ExpressionAttributeValues: { ':junk': new Uint8Array([0xff, 0xff, 0xff, 0xff]) },
      }),
    );
    h.clock.t = due;
    const { releaser, logged } = loggingReleaser(h);
    expect(await releaser.release(sent.map((s) => idOf(s.messageId)))).toBe(2);
    expect(logged).toHaveLength(1);
    expect(logged[0]?.details).toMatchObject({ id: poison, messageId: sent[1]!.messageId });
    const { Item } = await h.doc.send(new GetCommand({ TableName: h.table, Key: deferredKey(poison), ConsistentRead: true }));
    expect(Item).toMatchObject({ st: 'scheduled', pa: 1, g1pk: dueIndexPkOf(Math.floor((due + RELEASE_RETRY_MS) / 60_000), poison) });
    const got = await receiveAll(h, 'f', 2);
    expect(got.map((m) => m.body)).toEqual(['a'.repeat(400), 'b'.repeat(400)]);
  }, 60_000);

  it('isolates a message whose append fails: its own attempt, the batch and the sweep go on', async () => {
    const { client, doc, table } = await testTable();
    const h = harness(doc, table, { clock: new FakeClock() });
    // One partition: the four are one segment, put together first.
    await h.admin.putTopic('jobs', topic({ partitions: 1 }));
    await h.admin.putGroup('g', group('jobs', { visibilityTimeoutSeconds: 300 }));
    const due = h.clock.now() + 2_000;
    const sent = [];
    for (const body of ['one', 'POISON', 'two', 'three']) sent.push(await h.queue.send('jobs', send(body, { deliverAt: due })));
    let refused = 0;
    // Any write carrying the poison's body fails, as DynamoDB fails an item it will not take.
    client.middlewareStack.add(
      (next, context) => async (args) => {
        if (['TransactWriteItemsCommand', 'PutItemCommand'].includes(String(context.commandName)) && mentions(args.input, 'POISON')) {
          refused++;
          throw Object.assign(new Error('Item size has exceeded the maximum allowed size'), { name: 'ValidationException' });
        }
        return next(args);
      },
      { step: 'initialize', name: 'poison' },
    );
    h.clock.t = due + 6_000;
    expect(await h.timers.sweep()).toBe(3);
    expect(refused).toBe(2); // the batch of four, then the poison alone
    expect((await h.queue.getMessage('jobs', sent[1]!.messageId)).state).toBe('scheduled');
    const got = await h.queue.receive('g', { maxMessages: 10, waitSeconds: 0 });
    expect(got.map((m) => m.body).sort()).toEqual(['one', 'three', 'two']);
    // Once the store takes it, the next sweep releases it.
    client.middlewareStack.remove('poison');
    h.clock.advance(RELEASE_RETRY_MS + 6_000);
    expect(await h.timers.sweep()).toBe(1);
    expect((await h.queue.getMessage('jobs', sent[1]!.messageId)).state).toBe('deliverable');
  }, 60_000);
});
