/**
 * Found by an audit (2026-12-04); before its fix, a new shard cursor starts at the first notice the group reads and walks
 * back over messages deliverable after the group subscribed (Receiver.shardStart: a message whose
 * notice never came — its sender died between the segment and the notice — or is on another notice
 * stream read later). On a sequenced shard the walk goes on below a filler, but stops at an unfilled
 * hole that is old enough to pass (a dead grant no reader has filled yet, >= 300 s): the messages
 * below it are never delivered.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { PutCommand, TransactWriteCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { Sequencer } from '../../lib/adapters/dynamodb/sequencer.js';
import { FILL_AFTER_MS } from '../../lib/domain/gaps.js';
import * as build from '../helpers/builders.js';
import { harness, newHarness, send, type Harness } from '../helpers/stores.js';
import { drainBodies } from '../helpers/drain.js';

let h: Harness;
const receive = (g: string, max = 100) => h.queue.receive(g, { maxMessages: max, waitSeconds: 0 });
const drain = (g: string) => drainBodies(h, g, { everyMs: FILL_AFTER_MS });

/** A container that dies after its segment landed, before its notice (every notice write fails). */
function noNotices(doc: DynamoDBDocumentClient): DynamoDBDocumentClient {
  const raw = doc.send.bind(doc) as (command: unknown) => Promise<unknown>;
  const wrapped = Object.create(doc) as DynamoDBDocumentClient;
  wrapped.send = (async (command: unknown) => {
    const pks =
      command instanceof PutCommand
        ? [command.input.Item?.pk]
        : command instanceof TransactWriteCommand
          ? (command.input.TransactItems ?? []).map((t) => t.Put?.Item?.pk ?? t.Update?.Key?.pk)
          : [];
    if (pks.some((pk) => typeof pk === 'string' && pk.includes('/n:'))) throw new Error('container died before the notice');
    return raw(command);
  }) as DynamoDBDocumentClient['send'];
  return wrapped;
}

beforeEach(async () => {
  h = await newHarness();
  await h.admin.putTopic('ledger', build.topic({ type: 'fifo', sequenced: true }));
  await h.admin.putGroup('g', build.group(['ledger'], { deliveryMode: 'concurrent', visibilityTimeoutSeconds: 30 }));
  h.clock.advance(1);
  const dying = harness(noNotices(h.doc), h.table, { clock: h.clock });
  await expect(dying.queue.send('ledger', send('a1', { shardKey: 'A' }))).rejects.toThrow();
});

describe("a new shard cursor's walk back on a sequenced shard", () => {
  it('control, no hole: the message without a notice is found by the walk', async () => {
    h.clock.advance(1);
    await h.queue.send('ledger', send('a2', { shardKey: 'A' }));
    h.clock.advance(301_000);
    expect(await drain('g')).toEqual(['a1', 'a2']);
  });

  it('a dead grant between them, read after 5 minutes: the walk goes on below the hole', async () => {
    await new Sequencer(h.doc, h.table).grant('t:ledger/q:A', 1, h.clock.now());
    h.clock.advance(1);
    await h.queue.send('ledger', send('a2', { shardKey: 'A' }));
    h.clock.advance(301_000);
    expect(await drain('g')).toEqual(['a1', 'a2']);
  });

  it('the same, read within a minute (the hole is filled first): control', async () => {
    await new Sequencer(h.doc, h.table).grant('t:ledger/q:A', 1, h.clock.now());
    h.clock.advance(1);
    await h.queue.send('ledger', send('a2', { shardKey: 'A' }));
    h.clock.advance(FILL_AFTER_MS);
    expect(await drain('g')).toEqual(['a1', 'a2']);
  });
});
